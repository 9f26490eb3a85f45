-- Lifecycle hooks' node.replaced (issue 43): a replace-nodes job keeps the hostnames
-- of the nodes it takes away, written when it is submitted, as a JSON object (node
-- number -> hostname). Its own steps delete those nodes' rows before it succeeds, and
-- the event sent with its success names the old nodes. NULL for every other job.
ALTER TABLE job_documents ADD COLUMN replaced_hostnames_json TEXT;
