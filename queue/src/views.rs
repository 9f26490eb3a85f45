//! The wire contract's views of the queue's rows ([`api_types`]), made beside the rows
//! because a `From` between two other crates' types may only live in one of them (the
//! views name rows by their ids' text, as the API always has); and
//! the wire's word for a planner's action, which the engine's plan views use too.

use api_types::{
    AttemptView, EventKind, EventView, JobView, TaskAction, TaskStateChange, TaskView,
};
use domain::plan::Action;

use crate::{Attempt, Event, Job, TaskRecord, TaskRecordId};

/// The wire's word for a planner's action (the same word the tasks table stores).
// Spelled out rather than matched by name so a new domain action fails to compile here
// until the wire contract has it too.
pub fn task_action(action: Action) -> TaskAction {
    match action {
        Action::Create => TaskAction::Create,
        Action::Confirm => TaskAction::Confirm,
        Action::Bootstrap => TaskAction::Bootstrap,
        Action::Install => TaskAction::Install,
        Action::Configure => TaskAction::Configure,
        Action::Initialize => TaskAction::Initialize,
        Action::Start => TaskAction::Start,
        Action::Stop => TaskAction::Stop,
        Action::Remove => TaskAction::Remove,
        Action::Delete => TaskAction::Delete,
        Action::Suspend => TaskAction::Suspend,
        Action::Resume => TaskAction::Resume,
    }
}

/// The job as stored; whether it may be rolled back is decided by the service, which
/// knows the cluster's other jobs.
impl From<Job> for JobView {
    fn from(job: Job) -> Self {
        Self {
            id: job.id.into_string(),
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
            id: task.id.into_string(),
            number: task.number.0,
            node: task.node,
            service: task.service.map(|service| service.to_string()),
            action: task_action(task.action),
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
            task_id: event.task_id.map(TaskRecordId::into_string),
            attempt: event.attempt,
            at_ms: event.at_ms,
            kind: event.kind,
            stream: event.stream,
            data: event.data,
            task_state,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_keeps_its_word_on_the_wire() {
        for action in TaskAction::ALL {
            let domain: Action = serde_json::from_value(serde_json::Value::from(action.as_str()))
                .expect("the planner knows the word");
            assert_eq!(task_action(domain), *action);
            assert_eq!(domain.as_str(), action.as_str());
        }
    }
}
