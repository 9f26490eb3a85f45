-- Prerequisites that many tasks share, stored once. When every node's step waits on the
-- same step of every node ("every store start before every app start"), a 1,000-node
-- plan has a million such waits: a million task_deps rows to insert, and each of the
-- 1,000 prerequisites' completions updating 1,000 waiting tasks. A group stands in for
-- that set: task_deps links each member to the group's number and the group's number
-- to each waiting task (2,000 rows), the group counts its members not yet succeeded,
-- and a waiting task counts the group as one prerequisite, released when the group's
-- count reaches zero. Group numbers follow the job's task numbers, so they never name
-- a task.
CREATE TABLE task_groups (
    job_id          TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    number          BIGINT NOT NULL,
    pending_prereqs BIGINT NOT NULL,
    PRIMARY KEY (job_id, number)
);
