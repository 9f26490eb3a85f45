-- A forced delete: teardown steps (service stop and remove) that fail are reported and
-- passed over, so that the nodes are deleted anyway.
ALTER TABLE jobs ADD COLUMN forced BIGINT NOT NULL DEFAULT 0;
