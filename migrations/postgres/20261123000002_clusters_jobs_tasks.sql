-- Clusters, their nodes, and the durable job/task queue that changes them.
-- Ids are UUID strings, times Unix ms; booleans are 0/1 BIGINTs so both backends decode alike.
CREATE TABLE clusters (
    id               TEXT PRIMARY KEY,
    tenant_id        TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name             TEXT NOT NULL,
    template_name    TEXT NOT NULL,
    -- The template as it was when the cluster was made: later catalog edits do not move it.
    template_version BIGINT NOT NULL,
    template_json    TEXT NOT NULL,
    owner_id         TEXT REFERENCES users (id) ON DELETE SET NULL,
    state            TEXT NOT NULL,
    layout_json      TEXT NOT NULL,
    config_json      TEXT NOT NULL,
    lease_expires_ms BIGINT,
    created_at_ms    BIGINT NOT NULL,
    updated_at_ms    BIGINT NOT NULL
);

-- A deleted cluster stays for its history; its name is free for a new one.
CREATE UNIQUE INDEX clusters_live_name ON clusters (tenant_id, name) WHERE state <> 'deleted';

CREATE TABLE nodes (
    id            TEXT PRIMARY KEY,
    cluster_id    TEXT NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    number        BIGINT NOT NULL,
    hostname      TEXT,
    hardwaretype  TEXT NOT NULL,
    imagetype     TEXT NOT NULL,
    services_json TEXT NOT NULL,
    -- What the provider needs to find the machine again (recorded before anything runs on it).
    provider_json TEXT,
    state         TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL,
    UNIQUE (cluster_id, number)
);

CREATE TABLE jobs (
    id              TEXT PRIMARY KEY,
    tenant_id       TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    cluster_id      TEXT NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    operation       TEXT NOT NULL,
    state           TEXT NOT NULL
        CHECK (state IN ('queued', 'running', 'failed', 'succeeded', 'cancelling', 'cancelled')),
    -- The planner's DAG as submitted, so a failed job can be rolled back.
    plan_json       TEXT NOT NULL,
    -- Counters instead of scanning tasks: the job succeeds when they meet.
    tasks_total     BIGINT NOT NULL,
    tasks_succeeded BIGINT NOT NULL,
    created_at_ms   BIGINT NOT NULL,
    started_at_ms   BIGINT,
    finished_at_ms  BIGINT,
    error           TEXT
);

CREATE INDEX jobs_cluster ON jobs (cluster_id, created_at_ms);
CREATE INDEX jobs_tenant_state ON jobs (tenant_id, state);

CREATE TABLE tasks (
    id               TEXT PRIMARY KEY,
    job_id           TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    -- Copied from the job so the claim query checks limits and node exclusivity without joins.
    tenant_id        TEXT NOT NULL,
    cluster_id       TEXT NOT NULL,
    number           BIGINT NOT NULL,
    node             BIGINT NOT NULL,
    service          TEXT,
    action           TEXT NOT NULL,
    stage            BIGINT NOT NULL,
    state            TEXT NOT NULL
        CHECK (state IN ('pending', 'ready', 'running', 'succeeded', 'failed', 'cancelled', 'skipped')),
    -- Prerequisites not yet succeeded; the task becomes ready when this reaches zero.
    pending_prereqs  BIGINT NOT NULL,
    -- Claims ever made (the number of the latest attempt) and claims since the last retry_job.
    attempts         BIGINT NOT NULL DEFAULT 0,
    tries            BIGINT NOT NULL DEFAULT 0,
    max_attempts     BIGINT NOT NULL,
    idempotent       BIGINT NOT NULL,
    backoff_ms       BIGINT NOT NULL,
    not_before_ms    BIGINT NOT NULL,
    lease_owner      TEXT,
    lease_expires_ms BIGINT,
    created_at_ms    BIGINT NOT NULL,
    started_at_ms    BIGINT,
    finished_at_ms   BIGINT,
    error            TEXT,
    UNIQUE (job_id, number)
);

-- The claim query walks ready tasks oldest first and probes running ones by node and tenant.
CREATE INDEX tasks_ready ON tasks (not_before_ms, number) WHERE state = 'ready';
CREATE INDEX tasks_running_node ON tasks (cluster_id, node) WHERE state = 'running';
CREATE INDEX tasks_running_tenant ON tasks (tenant_id) WHERE state = 'running';
CREATE INDEX tasks_running_lease ON tasks (lease_expires_ms) WHERE state = 'running';

-- Successor lookup: which tasks wait on `prereq`.
CREATE TABLE task_deps (
    job_id TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    prereq BIGINT NOT NULL,
    task   BIGINT NOT NULL,
    PRIMARY KEY (job_id, prereq, task)
);

CREATE TABLE task_attempts (
    id             TEXT PRIMARY KEY,
    task_id        TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    attempt        BIGINT NOT NULL,
    worker_id      TEXT NOT NULL,
    outcome        TEXT NOT NULL,
    started_at_ms  BIGINT NOT NULL,
    finished_at_ms BIGINT NOT NULL,
    exit_code      BIGINT,
    -- Capped by the queue (64 KiB each); the full stream is in task_events.
    stdout         TEXT NOT NULL,
    stderr         TEXT NOT NULL,
    error          TEXT
);

CREATE INDEX task_attempts_task ON task_attempts (task_id, attempt);

-- The id is the resumable offset of a job's event stream (SSE Last-Event-ID).
CREATE TABLE task_events (
    id        BIGSERIAL PRIMARY KEY,
    job_id    TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    task_id   TEXT,
    attempt   BIGINT,
    at_ms     BIGINT NOT NULL,
    kind      TEXT NOT NULL,
    stream    TEXT,
    data      TEXT NOT NULL
);

CREATE INDEX task_events_job ON task_events (job_id, id);
