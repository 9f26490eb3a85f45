-- The cluster's nodes_version as of each node row's last write, so a worker that read
-- the rows at one version reads only the rows written since instead of all of them.
ALTER TABLE nodes ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
CREATE INDEX nodes_cluster_version ON nodes (cluster_id, version);
