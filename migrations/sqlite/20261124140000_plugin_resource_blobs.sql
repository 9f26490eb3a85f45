-- Plugin resource bytes live in the database next to their rows, so that every process
-- sharing it (`corral serve` or `corral worker` on any machine) can copy them to nodes.
-- Each process keeps what it has read in a local cache directory.
CREATE TABLE plugin_resource_blobs (
    tenant_id TEXT NOT NULL,
    kind      TEXT NOT NULL,
    name      TEXT NOT NULL,
    version   BIGINT NOT NULL,
    bytes     BLOB NOT NULL,
    PRIMARY KEY (tenant_id, kind, name, version),
    FOREIGN KEY (tenant_id, kind, name, version)
        REFERENCES plugin_resources (tenant_id, kind, name, version) ON DELETE CASCADE
);
