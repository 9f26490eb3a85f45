-- Each tenant's credentials for a provider of its catalog (an ec2 access key, a plugin's
-- token), set by the tenant's admins. `sealed` is the JSON object encrypted with the
-- server's secret key (bound to its tenant and provider); `field_names` lists the
-- object's keys, which are not secret, so pages can say what is set without opening it.
CREATE TABLE provider_credentials (
    tenant_id     TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    provider      TEXT NOT NULL,
    sealed        TEXT NOT NULL,
    field_names   TEXT NOT NULL,
    updated_by    TEXT,
    updated_at_ms BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, provider)
);
