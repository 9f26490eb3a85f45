-- Single sign-on (issue 43): the OpenID Connect identities users signed in with (an
-- issuer's `sub` is the stable id; names and emails change), whether that user may
-- also use a local password, and the one-time codes a browser sign-in hands to
-- `corral login --sso` (stored as SHA-256, bound to the CLI's PKCE challenge, used
-- once within minutes).
CREATE TABLE sso_identities (
    issuer          TEXT NOT NULL,
    subject         TEXT NOT NULL,
    user_id         TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    local_passwords INTEGER NOT NULL DEFAULT 0,
    created_at_ms   BIGINT NOT NULL,
    signed_in_at_ms BIGINT NOT NULL,
    PRIMARY KEY (issuer, subject)
);
CREATE INDEX sso_identities_user ON sso_identities (user_id);

CREATE TABLE sso_cli_codes (
    code_hash     TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    challenge     TEXT NOT NULL,
    expires_at_ms BIGINT NOT NULL
);
