-- Access: API tokens, the audit log, and what ends every session of a user at once.

-- Bumped by "log out everywhere" and password changes; a session remembers the epoch
-- it was made in and is void once the user's epoch moves on.
ALTER TABLE users ADD COLUMN session_epoch BIGINT NOT NULL DEFAULT 0;

-- API tokens: only a SHA-256 of the secret is kept; the secret is shown once.
CREATE TABLE api_tokens (
    id              TEXT PRIMARY KEY,
    user_id         TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    secret_sha256   TEXT NOT NULL UNIQUE,
    created_at_ms   BIGINT NOT NULL,
    last_used_at_ms BIGINT,
    expires_at_ms   BIGINT,
    revoked_at_ms   BIGINT
);

CREATE INDEX api_tokens_user ON api_tokens (user_id);

-- Who did what, when, from where; catalog changes keep the body before and after.
CREATE TABLE audit_log (
    id            TEXT PRIMARY KEY,
    tenant_id     TEXT NOT NULL,
    actor_id      TEXT,
    actor_name    TEXT NOT NULL,
    action        TEXT NOT NULL,
    target_kind   TEXT NOT NULL,
    target        TEXT NOT NULL,
    address       TEXT,
    before_json   TEXT,
    after_json    TEXT,
    at_ms         BIGINT NOT NULL
);

CREATE INDEX audit_log_tenant_at ON audit_log (tenant_id, at_ms);
