-- Hosts of the `ssh-pool` provider, registered by a tenant's admins. A host is lent to
-- one node at a time: `checked_out_node` is set by one conditional UPDATE (so two worker
-- processes never lend the same host) and is unique (so one node never holds two hosts).
CREATE TABLE pool_hosts (
    id                TEXT PRIMARY KEY,
    tenant_id         TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name              TEXT NOT NULL,
    host              TEXT NOT NULL,
    port              BIGINT NOT NULL CHECK (port BETWEEN 1 AND 65535),
    ssh_user          TEXT NOT NULL,
    -- Pinned: every connection must present exactly this key (OpenSSH one-line form).
    host_key          TEXT NOT NULL,
    -- The key pair Corral made for this host; the private half is a secret that no API,
    -- page or log shows; the admin authorizes the public half on the host.
    client_key        TEXT NOT NULL,
    client_public_key TEXT NOT NULL,
    checked_out_node  TEXT UNIQUE,
    checked_out_at_ms BIGINT,
    created_at_ms     BIGINT NOT NULL,
    updated_at_ms     BIGINT NOT NULL,
    UNIQUE (tenant_id, name),
    UNIQUE (tenant_id, host, port)
);
