-- The catalog in the store, plugin resources, and what a finished job does to its cluster.

-- Every revision of every admin entity of a tenant; the highest version is current and a
-- NULL body records a deletion (so history survives it). Bodies are Coopr-format JSON.
CREATE TABLE catalog_entities (
    tenant_id     TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    -- The bundle key: providers, hardwaretypes, imagetypes, services, clustertemplates,
    -- partialtemplates.
    kind          TEXT NOT NULL,
    name          TEXT NOT NULL,
    version       BIGINT NOT NULL,
    body_json     TEXT,
    author_id     TEXT,
    created_at_ms BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, kind, name, version)
);

-- Plugin resources (scripts, archives, files) uploaded per tenant, every version kept.
-- The staged version is what nodes get; the bytes live in the resource file store.
CREATE TABLE plugin_resources (
    tenant_id     TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    kind          TEXT NOT NULL CHECK (kind IN ('scripts', 'archives', 'files')),
    name          TEXT NOT NULL,
    version       BIGINT NOT NULL,
    sha256        TEXT NOT NULL,
    size_bytes    BIGINT NOT NULL,
    staged        BIGINT NOT NULL DEFAULT 0,
    author_id     TEXT,
    created_at_ms BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, kind, name, version)
);

CREATE UNIQUE INDEX plugin_resources_staged ON plugin_resources (tenant_id, kind, name)
    WHERE staged = 1;

-- The catalog entities a cluster was built from (a Coopr bundle), pinned like its template.
ALTER TABLE clusters ADD COLUMN catalog_json TEXT NOT NULL DEFAULT '{}';
ALTER TABLE clusters ADD COLUMN provider TEXT NOT NULL DEFAULT 'local';

-- What the job does to its cluster, applied in the transaction that moves the job:
-- the cluster's state while it runs, after success (with the layout it then has) and
-- after failure or cancellation.
ALTER TABLE jobs ADD COLUMN cluster_state_running TEXT;
ALTER TABLE jobs ADD COLUMN cluster_state_succeeded TEXT;
ALTER TABLE jobs ADD COLUMN cluster_state_failed TEXT;
ALTER TABLE jobs ADD COLUMN from_layout_json TEXT;
ALTER TABLE jobs ADD COLUMN to_layout_json TEXT;
ALTER TABLE jobs ADD COLUMN requested_by TEXT;

CREATE INDEX clusters_lease ON clusters (lease_expires_ms) WHERE state = 'active';
