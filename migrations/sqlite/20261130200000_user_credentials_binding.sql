-- Users' own provider credentials, keyed by (tenant, user, provider) and bound to the
-- provider's definition.
--
-- The key: rows were keyed by (user, provider), so a user moved to another tenant who
-- set credentials for a provider of the same name there moved their old tenant's row
-- (its tenant_id was overwritten). Each tenant's row is now its own.
--
-- `binding`: a fingerprint of the provider's type and of the settings that say where
-- the credentials go (an ec2 region and endpoint, an exec plugin and its settings), taken
-- when the user set them. A provider whose definition has changed since (an admin turned
-- it into a plugin that logs its input) no longer matches, and the credentials are not
-- used until the user enters them again. Rows from before have no binding ('') and match
-- nothing: their owners enter them again.
CREATE TABLE user_provider_credentials_bound (
    tenant_id     TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    provider      TEXT NOT NULL,
    binding       TEXT NOT NULL,
    sealed        TEXT NOT NULL,
    field_names   TEXT NOT NULL,
    updated_by    TEXT,
    updated_at_ms BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, user_id, provider)
);
INSERT INTO user_provider_credentials_bound
    (tenant_id, user_id, provider, binding, sealed, field_names, updated_by, updated_at_ms)
SELECT tenant_id, user_id, provider, '', sealed, field_names, updated_by, updated_at_ms
FROM user_provider_credentials;
DROP TABLE user_provider_credentials;
ALTER TABLE user_provider_credentials_bound RENAME TO user_provider_credentials;
