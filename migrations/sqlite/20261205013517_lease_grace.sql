-- Leases that warn and forgive (issue 44 point 5). A template's lease may have a grace:
-- at expiry the janitor stops the cluster's services instead of deleting it, and sets
-- lease_deletes_at_ms (expiry + grace) in the transaction that submits the stop job, so
-- a second janitor sees the mark and does not stop it again. Extending the lease clears
-- the mark with the start job's submission. NULL: not stopped by its lease.
ALTER TABLE clusters ADD COLUMN lease_deletes_at_ms BIGINT;
-- The warnings sent for the lease's current end: NULL none, 'day', then 'hour'. Set in
-- the transaction writing the warning's hook deliveries; extending the lease clears it.
ALTER TABLE clusters ADD COLUMN lease_warned TEXT;
