-- Fair claims (engine/src/queue/fair.rs): a claim reads the active jobs that have ready
-- tasks, then the oldest ready tasks of each job, instead of the oldest ready tasks
-- overall (which let one big job's backlog starve a small job submitted after it).
-- The per-job walk replaces the global one, so its index replaces `tasks_ready`.
CREATE INDEX tasks_ready_job ON tasks (job_id, not_before_ms, number) WHERE state = 'ready';
DROP INDEX tasks_ready;
-- The jobs a claim looks at, without scanning the finished ones.
CREATE INDEX jobs_active ON jobs (created_at_ms) WHERE state IN ('queued', 'running');
