-- Rollouts (issue 40): a template's new catalog revision upgraded across the tenant's
-- clusters built from it, at most max_parallel at a time, stopping at the first one
-- that fails. The record and every cluster row are written in one transaction when it
-- starts; a worker pool's monitor loop advances running rollouts from these rows, so a
-- restarted server resumes where the last one stopped.
CREATE TABLE rollouts (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    template TEXT NOT NULL,
    max_parallel BIGINT NOT NULL,
    -- running | stopping | succeeded | stopped
    state TEXT NOT NULL,
    -- Why it stopped (naming the cluster), or what it did.
    reason TEXT,
    created_by TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL
);

CREATE INDEX rollouts_tenant ON rollouts (tenant_id, created_at_ms);
CREATE INDEX rollouts_state ON rollouts (state);

CREATE TABLE rollout_clusters (
    rollout_id TEXT NOT NULL REFERENCES rollouts (id) ON DELETE CASCADE,
    cluster_id TEXT NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    position BIGINT NOT NULL,
    -- pending | skipped-pinned | running | succeeded | failed | untouched
    state TEXT NOT NULL,
    job_id TEXT,
    note TEXT,
    started_at_ms BIGINT,
    updated_at_ms BIGINT NOT NULL,
    PRIMARY KEY (rollout_id, cluster_id)
);
