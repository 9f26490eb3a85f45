-- Cost and budgets (issue 44 point 4, docs/cost.md).
--
-- Approval rules gain the kind 'cost-above' (the value: an estimated cost per month).
-- The table is rebuilt, as SQLite must (it cannot change a CHECK constraint in
-- place), so the two backends run the same statements (nothing references it;
-- requests keep the rule's id and description as text).
CREATE TABLE approval_rules_new (
    id             TEXT PRIMARY KEY,
    tenant_id      TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    kind           TEXT NOT NULL CHECK (kind IN ('template', 'size-above', 'provider', 'cost-above')),
    value          TEXT NOT NULL,
    approver_group TEXT,
    window_ms      BIGINT NOT NULL,
    created_by     TEXT,
    created_at_ms  BIGINT NOT NULL
);
INSERT INTO approval_rules_new (id, tenant_id, kind, value, approver_group, window_ms, created_by, created_at_ms)
    SELECT id, tenant_id, kind, value, approver_group, window_ms, created_by, created_at_ms FROM approval_rules;
DROP TABLE approval_rules;
ALTER TABLE approval_rules_new RENAME TO approval_rules;
CREATE INDEX approval_rules_tenant ON approval_rules (tenant_id, created_at_ms);


-- A tenant's monthly budget, set by its admins; no row means no budget. Money is kept
-- in micro-units (millionths of the currency's unit). budget_action: refuse | approval.
CREATE TABLE tenant_budgets (
    tenant_id             TEXT PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
    monthly_budget_micros BIGINT NOT NULL,
    budget_action         TEXT NOT NULL CHECK (budget_action IN ('refuse', 'approval')),
    updated_by            TEXT,
    updated_at_ms         BIGINT NOT NULL
);

-- What clusters cost over time: one row per stretch a cluster ran at one hourly rate
-- (the sum of its nodes' prices), end_ms NULL while it runs on. Written when a job that
-- changes the cluster's layout ends (the open row closes, a new one opens at the new
-- rate). Owner and template are copied so showback outlives the cluster and its users.
CREATE TABLE cost_intervals (
    id               TEXT PRIMARY KEY,
    tenant_id        TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    cluster_id       TEXT NOT NULL,
    owner_id         TEXT,
    owner            TEXT NOT NULL,
    template         TEXT NOT NULL,
    per_hour_micros  BIGINT NOT NULL,
    start_ms         BIGINT NOT NULL,
    end_ms           BIGINT
);
CREATE INDEX cost_intervals_cluster ON cost_intervals (cluster_id, start_ms);
CREATE INDEX cost_intervals_tenant ON cost_intervals (tenant_id, start_ms);
