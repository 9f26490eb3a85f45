-- Issue 41 point 1: users keep SSH public keys, which Corral puts on the nodes of their
-- clusters (a managed block of the node user's authorized_keys, written at bootstrap);
-- a tenant may have its admins' keys put on every cluster of the tenant as well.
CREATE TABLE user_ssh_keys (
    id            TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- The key as it goes into authorized_keys: algorithm, base64 and comment.
    public_key    TEXT NOT NULL,
    -- SHA256:... as ssh-keygen -l prints it; one user holds a key once.
    fingerprint   TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    UNIQUE (user_id, fingerprint)
);

CREATE INDEX user_ssh_keys_user ON user_ssh_keys (user_id);

ALTER TABLE tenants ADD COLUMN admin_keys_on_all_clusters BIGINT NOT NULL DEFAULT 0;
