-- Tenants and users: the first tables every other table is scoped by.
-- Ids are UUID strings and times are Unix milliseconds so both backends share one query layer.
CREATE TABLE tenants (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    max_clusters  BIGINT,
    max_nodes     BIGINT,
    created_at_ms BIGINT NOT NULL
);

CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    tenant_id     TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    username      TEXT NOT NULL UNIQUE,
    role          TEXT NOT NULL CHECK (role IN ('superadmin', 'tenant-admin', 'user')),
    password_hash TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL
);

CREATE INDEX users_tenant ON users (tenant_id);

-- The `default` tenant exists from the first start.
INSERT INTO tenants (id, name, max_clusters, max_nodes, created_at_ms)
VALUES ('00000000-0000-0000-0000-000000000001', 'default', NULL, NULL, 0);
