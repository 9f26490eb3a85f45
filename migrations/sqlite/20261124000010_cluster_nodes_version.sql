-- Bumped after every write to a cluster's nodes, so a worker can tell whether the node
-- rows it read before are still current without reading them all again.
ALTER TABLE clusters ADD COLUMN nodes_version BIGINT NOT NULL DEFAULT 0;
