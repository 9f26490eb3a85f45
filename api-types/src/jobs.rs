//! Jobs, their tasks, each task's attempts, and the event stream that shows a job live.

use serde::{Deserialize, Serialize};

use crate::layout::TaskAction;
use crate::operation::Operation;
use crate::states::{EventKind, JobState, OutputStream, TaskState};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct JobView {
    pub id: String,
    pub cluster_id: String,
    /// Read as its wire word or, from older servers, its label (`add services`).
    pub operation: Operation,
    pub state: JobState,
    pub tasks_total: i64,
    pub tasks_succeeded: i64,
    pub created_at_ms: i64,
    pub started_at_ms: Option<i64>,
    pub finished_at_ms: Option<i64>,
    /// For a failed job: which step on which node failed, and why.
    pub error: Option<String>,
    /// A forced delete: stop and remove steps that failed were passed over.
    pub forced: bool,
    /// Whether a rollback of this job may be submitted now (it is the cluster's newest
    /// job, it failed or was cancelled, and it is not a delete).
    #[serde(default)]
    pub can_roll_back: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskView {
    pub id: String,
    pub number: u32,
    pub node: u32,
    pub service: Option<String>,
    pub action: TaskAction,
    pub state: TaskState,
    pub attempts: i64,
    pub max_attempts: i64,
    pub started_at_ms: Option<i64>,
    pub finished_at_ms: Option<i64>,
    pub error: Option<String>,
}

impl TaskView {
    /// `install web`, as people read it.
    pub fn label(&self) -> String {
        match &self.service {
            Some(service) => format!("{} {service}", self.action),
            None => self.action.to_string(),
        }
    }
}

/// How many of a job's tasks of one step are in one state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskStateCount {
    pub state: TaskState,
    pub tasks: u64,
}

/// A job's tasks of one step (an action, with its service if it has one), counted by
/// state: what a page shows of a job too large to list task by task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskGroupView {
    pub action: TaskAction,
    pub service: Option<String>,
    /// The step's first task number: steps list in plan order by it.
    pub first_number: u32,
    /// The states the step's tasks are in, each with how many (none left out as 0),
    /// in the order of [`TaskState::ALL`].
    pub counts: Vec<TaskStateCount>,
}

impl TaskGroupView {
    /// `install web`, as people read it.
    pub fn label(&self) -> String {
        match &self.service {
            Some(service) => format!("{} {service}", self.action),
            None => self.action.to_string(),
        }
    }

    /// Every task of the step.
    pub fn total(&self) -> u64 {
        self.counts.iter().map(|count| count.tasks).sum()
    }

    /// The step's tasks in `state`.
    pub fn count(&self, state: TaskState) -> u64 {
        self.counts
            .iter()
            .filter(|count| count.state == state)
            .map(|count| count.tasks)
            .sum()
    }
}

/// One attempt of a task, with its output (capped per attempt).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AttemptView {
    pub attempt: i64,
    pub outcome: String,
    pub started_at_ms: i64,
    pub finished_at_ms: i64,
    pub exit_code: Option<i64>,
    pub stdout: String,
    pub stderr: String,
    pub error: Option<String>,
}

/// One line of output, or a task's state change, in a job's event stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EventView {
    /// Pass the last id seen as `after` to read on.
    pub id: i64,
    pub task_id: Option<String>,
    pub attempt: Option<i64>,
    pub at_ms: i64,
    pub kind: EventKind,
    /// Which output an `output` event's chunk came from.
    pub stream: Option<OutputStream>,
    /// The output chunk, or the state change as text (`failed (exit status 1)`).
    pub data: String,
    /// For a `state` event: the task's new state.
    #[serde(default)]
    pub task_state: Option<TaskState>,
}

/// What a `state` event says: the task's new state, and why or which attempt. Its text
/// is the event's `data`: `running (attempt 2)`, `failed (exit status 1)`, `succeeded`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskStateChange {
    pub state: TaskState,
    pub detail: Option<String>,
}

impl TaskStateChange {
    /// A task began its `attempt`-th attempt.
    pub fn started(attempt: i64) -> Self {
        Self {
            state: TaskState::Running,
            detail: Some(format!("attempt {attempt}")),
        }
    }

    pub fn text(&self) -> String {
        match &self.detail {
            Some(detail) => format!("{} ({detail})", self.state),
            None => self.state.to_string(),
        }
    }

    /// Reads a `state` event's data back; `None` for text no version wrote.
    pub fn parse(data: &str) -> Option<Self> {
        let (word, detail) = match data.split_once(" (") {
            Some((word, rest)) => (word, rest.strip_suffix(')').map(str::to_owned)),
            None => (data, None),
        };
        // Events recorded before the states were typed said `started (attempt N)`.
        let state = match word {
            "started" => TaskState::Running,
            other => other.parse().ok()?,
        };
        Some(Self { state, detail })
    }

    /// The attempt a `running` change began.
    pub fn attempt(&self) -> Option<i64> {
        self.detail
            .as_deref()?
            .strip_prefix("attempt ")?
            .parse()
            .ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // As the API wrote them while actions were strings.
    const TASK: &str = r#"{"id":"t1","number":4,"node":1000,"service":"web","action":"install","state":"failed","attempts":3,"max_attempts":3,"started_at_ms":10,"finished_at_ms":20,"error":"exit status 1"}"#;
    const GROUP: &str = r#"{"action":"create","service":null,"first_number":0,"counts":[{"state":"succeeded","tasks":2},{"state":"running","tasks":1}]}"#;

    #[test]
    fn tasks_and_steps_read_and_write_back_the_same_json() {
        let task: TaskView = serde_json::from_str(TASK).expect("parses");
        assert_eq!(task.action, TaskAction::Install);
        assert_eq!(task.label(), "install web");
        assert_eq!(serde_json::to_string(&task).expect("serialises"), TASK);
        let group: TaskGroupView = serde_json::from_str(GROUP).expect("parses");
        assert_eq!(group.action, TaskAction::Create);
        assert_eq!((group.label(), group.total()), ("create".to_owned(), 3));
        assert_eq!(serde_json::to_string(&group).expect("serialises"), GROUP);
        let unknown = TASK.replace("\"install\"", "\"juggle\"");
        assert!(serde_json::from_str::<TaskView>(&unknown).is_err());
    }

    #[test]
    fn state_changes_read_back_what_they_wrote() {
        let started = TaskStateChange::started(3);
        assert_eq!(started.text(), "running (attempt 3)");
        assert_eq!(
            TaskStateChange::parse(&started.text()),
            Some(started.clone())
        );
        assert_eq!(started.attempt(), Some(3));
        let failed = TaskStateChange {
            state: TaskState::Failed,
            detail: Some("exit status 1 (on node 2)".to_owned()),
        };
        assert_eq!(TaskStateChange::parse(&failed.text()), Some(failed));
        let done = TaskStateChange::parse("succeeded").expect("a state");
        assert_eq!((done.state, done.detail), (TaskState::Succeeded, None));
    }

    #[test]
    fn older_events_still_read() {
        let started = TaskStateChange::parse("started (attempt 2)").expect("a state");
        assert_eq!(started.state, TaskState::Running);
        assert_eq!(started.attempt(), Some(2));
        assert_eq!(TaskStateChange::parse("exploded"), None);
    }
}
