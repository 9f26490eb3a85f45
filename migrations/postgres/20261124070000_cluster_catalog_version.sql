-- Bumped with every write of a cluster's catalog snapshot, so a worker can tell whether
-- the snapshot it parsed before is still current without reading it again.
ALTER TABLE clusters ADD COLUMN catalog_version BIGINT NOT NULL DEFAULT 0;
