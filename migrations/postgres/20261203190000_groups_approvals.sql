-- Issue 44, points 2 and 3. Groups of a tenant's users (templates may be limited to
-- them, approval rules may name one as approvers); memberships go with the user or
-- the group.
CREATE TABLE user_groups (
    id            TEXT PRIMARY KEY,
    tenant_id     TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    UNIQUE (tenant_id, name)
);

CREATE TABLE user_group_members (
    group_id TEXT NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
    user_id  TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (group_id, user_id)
);
CREATE INDEX user_group_members_user ON user_group_members (user_id);

-- What needs an approval: `kind` says which field of a request `value` is matched
-- against (a template name, a node count, a provider name). `approver_group` names
-- the group whose members may decide besides the tenant admins; `window_ms` is how
-- long a request waits before it expires.
CREATE TABLE approval_rules (
    id             TEXT PRIMARY KEY,
    tenant_id      TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    kind           TEXT NOT NULL CHECK (kind IN ('template', 'size-above', 'provider')),
    value          TEXT NOT NULL,
    approver_group TEXT,
    window_ms      BIGINT NOT NULL,
    created_by     TEXT,
    created_at_ms  BIGINT NOT NULL
);
CREATE INDEX approval_rules_tenant ON approval_rules (tenant_id, created_at_ms);

-- A create or grow that waits for a decision. The cluster waits in the state
-- `awaiting-approval`; `request_json` is the request as it was asked (re-planned at
-- approval), `preview_json` its plan when asked; `rule` describes the rule that
-- matched (rules may be removed later). A pending request leaves `pending` with one
-- conditional UPDATE, so two deciders never both win.
CREATE TABLE approval_requests (
    id              TEXT PRIMARY KEY,
    tenant_id       TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    cluster_id      TEXT NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    operation       TEXT NOT NULL CHECK (operation IN ('create', 'grow')),
    request_json    TEXT NOT NULL,
    preview_json    TEXT NOT NULL,
    rule_id         TEXT NOT NULL,
    rule            TEXT NOT NULL,
    approver_group  TEXT,
    resume_state    TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'denied', 'expired')),
    requested_by    TEXT NOT NULL,
    created_at_ms   BIGINT NOT NULL,
    expires_at_ms   BIGINT NOT NULL,
    decided_by      TEXT,
    decided_at_ms   BIGINT,
    reason          TEXT,
    job_id          TEXT
);
CREATE INDEX approval_requests_tenant ON approval_requests (tenant_id, created_at_ms);
CREATE INDEX approval_requests_due ON approval_requests (expires_at_ms) WHERE state = 'pending';
CREATE INDEX approval_requests_cluster ON approval_requests (cluster_id, created_at_ms);
