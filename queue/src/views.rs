//! The wire contract's views of the queue's rows ([`api_types`]), made beside the rows
//! because a `From` between two other crates' types may only live in one of them.

use api_types::{AttemptView, EventKind, EventView, JobView, TaskStateChange, TaskView};

use crate::{Attempt, Event, Job, TaskRecord};

/// The job as stored; whether it may be rolled back is decided by the service, which
/// knows the cluster's other jobs.
impl From<Job> for JobView {
    fn from(job: Job) -> Self {
        Self {
            id: job.id,
            cluster_id: job.cluster_id,
            operation: job.operation,
            state: job.state,
            tasks_total: job.tasks_total,
            tasks_succeeded: job.tasks_succeeded,
            created_at_ms: job.created_at_ms,
            started_at_ms: job.started_at_ms,
            finished_at_ms: job.finished_at_ms,
            error: job.error,
            forced: job.forced,
            can_roll_back: false,
        }
    }
}

impl From<TaskRecord> for TaskView {
    fn from(task: TaskRecord) -> Self {
        Self {
            id: task.id,
            number: task.number.0,
            node: task.node,
            service: task.service.map(|service| service.to_string()),
            action: task.action.to_string(),
            state: task.state,
            attempts: task.attempts,
            max_attempts: task.max_attempts,
            started_at_ms: task.started_at_ms,
            finished_at_ms: task.finished_at_ms,
            error: task.error,
        }
    }
}

impl From<Attempt> for AttemptView {
    fn from(attempt: Attempt) -> Self {
        Self {
            attempt: attempt.attempt,
            outcome: attempt.outcome,
            started_at_ms: attempt.started_at_ms,
            finished_at_ms: attempt.finished_at_ms,
            exit_code: attempt.exit_code,
            stdout: attempt.stdout,
            stderr: attempt.stderr,
            error: attempt.error,
        }
    }
}

impl From<Event> for EventView {
    fn from(event: Event) -> Self {
        let task_state = (event.kind == EventKind::State)
            .then(|| TaskStateChange::parse(&event.data))
            .flatten()
            .map(|change| change.state);
        Self {
            id: event.id,
            task_id: event.task_id,
            attempt: event.attempt,
            at_ms: event.at_ms,
            kind: event.kind,
            stream: event.stream,
            data: event.data,
            task_state,
        }
    }
}
