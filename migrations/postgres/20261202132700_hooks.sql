-- Lifecycle hooks (issue 43): HTTP endpoints a tenant's admins register to hear of
-- its jobs (`events`, a JSON list of event words) or to be asked before an operation
-- is queued (`gates`, a JSON list of create/change/delete). `secret` signs every
-- call; it is sealed with the server's secret key, bound to the hook's id.
CREATE TABLE hooks (
    id            TEXT PRIMARY KEY,
    tenant_id     TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    url           TEXT NOT NULL,
    events        TEXT NOT NULL,
    gates         TEXT NOT NULL,
    format        TEXT NOT NULL CHECK (format IN ('json', 'slack')),
    secret        TEXT NOT NULL,
    timeout_ms    BIGINT NOT NULL,
    on_failure    TEXT NOT NULL CHECK (on_failure IN ('allow', 'refuse')),
    created_by    TEXT,
    created_at_ms BIGINT NOT NULL
);
CREATE INDEX hooks_tenant ON hooks (tenant_id, created_at_ms);

-- One event for one hook, written in the transaction that made the event (a job's
-- start or end), so a crash loses none. Delivery loops claim a due row with one
-- conditional UPDATE (pending or sending, due, and the attempt count they read):
-- `sending` rows are due again when their claim ran out (`next_attempt_ms`), so a
-- process killed while sending leaves the delivery to another. `body` is the event
-- body (JSON), fixed at the event: every retry sends the same delivery.
CREATE TABLE hook_deliveries (
    id              TEXT PRIMARY KEY,
    hook_id         TEXT NOT NULL REFERENCES hooks (id) ON DELETE CASCADE,
    tenant_id       TEXT NOT NULL,
    event           TEXT NOT NULL,
    event_id        TEXT NOT NULL,
    body            TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('pending', 'sending', 'delivered', 'failed')),
    attempts        BIGINT NOT NULL DEFAULT 0,
    next_attempt_ms BIGINT NOT NULL,
    claimed_by      TEXT,
    created_at_ms   BIGINT NOT NULL,
    delivered_at_ms BIGINT
);
CREATE INDEX hook_deliveries_due ON hook_deliveries (next_attempt_ms)
    WHERE state IN ('pending', 'sending');
CREATE INDEX hook_deliveries_hook ON hook_deliveries (hook_id, created_at_ms);

-- Each try at sending a delivery: the receiver's status (or why there was none) and
-- the first KiB of its answer.
CREATE TABLE hook_attempts (
    id               TEXT PRIMARY KEY,
    delivery_id      TEXT NOT NULL REFERENCES hook_deliveries (id) ON DELETE CASCADE,
    attempt          BIGINT NOT NULL,
    at_ms            BIGINT NOT NULL,
    status           BIGINT,
    error            TEXT,
    response_excerpt TEXT NOT NULL,
    elapsed_ms       BIGINT NOT NULL
);
CREATE INDEX hook_attempts_delivery ON hook_attempts (delivery_id, attempt);
