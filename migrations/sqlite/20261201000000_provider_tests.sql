-- Provider checks (`corral provider test`, the provider page's Test button) asked for
-- through the API and run by a worker pool that serves the tenant, where its tasks run:
-- never in a process the tenant is kept out of (the shared server, for a tenant served
-- by dedicated workers only). The API inserts a request and waits for its report; a
-- pool claims it with one conditional UPDATE (queued to running), so one pool runs it.
-- A request no pool claimed by `claim_by_ms` is never run: the API marks it abandoned,
-- and pools only claim requests whose `claim_by_ms` is still ahead. `report_json` is
-- the report with the credentials blotted out. Rows are removed a day after they were
-- asked for.
CREATE TABLE provider_tests (
    id             TEXT PRIMARY KEY,
    tenant_id      TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    provider       TEXT NOT NULL,
    request_json   TEXT NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'abandoned')),
    claimed_by     TEXT,
    report_json    TEXT,
    created_at_ms  BIGINT NOT NULL,
    claim_by_ms    BIGINT NOT NULL,
    claimed_at_ms  BIGINT,
    finished_at_ms BIGINT
);
CREATE INDEX provider_tests_by_state ON provider_tests (state, created_at_ms);
