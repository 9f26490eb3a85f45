-- A user's own credentials for a provider of their tenant's catalog, where the provider's
-- admins allow it (`"user_credentials": true` in its provisioner): nodes of clusters the
-- user owns are then made with these instead of the tenant's. Same shape as
-- provider_credentials; `sealed` is bound to the user and provider, so a row copied to
-- another user or provider does not open.
CREATE TABLE user_provider_credentials (
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    tenant_id     TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    provider      TEXT NOT NULL,
    sealed        TEXT NOT NULL,
    field_names   TEXT NOT NULL,
    updated_by    TEXT,
    updated_at_ms BIGINT NOT NULL,
    PRIMARY KEY (user_id, provider)
);
