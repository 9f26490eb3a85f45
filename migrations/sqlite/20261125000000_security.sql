-- Sign-in attempts, shared by every server process so that throttling holds across
-- them. A row is reserved before a password is checked (so concurrent guesses cannot
-- all slip under the limit) and kept if the password was wrong. `key_hash` is the
-- SHA-256 of what is counted ("account + client address" or "client address"), so
-- neither usernames of any length nor addresses are kept in clear.
CREATE TABLE login_attempts (
    id        TEXT PRIMARY KEY,
    key_hash  TEXT NOT NULL,
    at_ms     BIGINT NOT NULL
);
CREATE INDEX login_attempts_key ON login_attempts (key_hash, at_ms);
CREATE INDEX login_attempts_at ON login_attempts (at_ms);

-- API tokens: `read-only` tokens may only read; a token with `renew_ms` expires that
-- long after its last use (the CLI's tokens), instead of at a fixed time or never.
ALTER TABLE api_tokens ADD COLUMN scope TEXT NOT NULL DEFAULT 'full';
ALTER TABLE api_tokens ADD COLUMN renew_ms BIGINT;

-- The `local` provider runs node steps on the server's own host: only tenants a
-- superadmin allowed may use it. The default tenant keeps it (the demo runs there).
ALTER TABLE tenants ADD COLUMN local_nodes BIGINT NOT NULL DEFAULT 0;
UPDATE tenants SET local_nodes = 1 WHERE id = '00000000-0000-0000-0000-000000000001';
