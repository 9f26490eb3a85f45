-- Upgrades (issue 40): a job may run its steps with catalog definitions other than
-- its cluster's snapshot. `catalog_json` (a Coopr bundle) is what its steps run,
-- stops aside, and becomes the cluster's snapshot when the job succeeds;
-- `stop_catalog_json` is what its stop steps run (the definitions the services were
-- started with). NULL: the cluster's own snapshot.
ALTER TABLE job_documents ADD COLUMN catalog_json TEXT;
ALTER TABLE job_documents ADD COLUMN stop_catalog_json TEXT;
