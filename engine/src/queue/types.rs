//! The queue's value types: states, options, limits, claims and outcomes.

use std::collections::BTreeSet;

use domain::names::ServiceName;
use domain::plan::{Action, TaskId};

use super::QueueError;

/// Each of an attempt's stdout and stderr is kept up to this many bytes.
pub const OUTPUT_CAP_BYTES: usize = 64 * 1024;

pub use api_types::{JobState, TaskState};

/// Reads a stored word as the enum it names; an unknown word is a corrupt row.
pub(crate) fn parse_word<T>(raw: &str) -> Result<T, QueueError>
where
    T: std::str::FromStr<Err = api_types::UnknownValue>,
{
    raw.parse()
        .map_err(|error: api_types::UnknownValue| QueueError::CorruptValue {
            what: error.what,
            value: error.value,
        })
}

/// How a job's tasks are retried.
#[derive(Debug, Clone)]
pub struct SubmitOptions {
    /// Attempts per task before the job fails (only idempotent tasks get more than one).
    pub max_attempts: u32,
    /// Delay before the second attempt; doubled for each further one.
    pub backoff_ms: i64,
    /// Actions that must never run twice: a failure or lost lease fails the job.
    pub non_idempotent: BTreeSet<Action>,
    /// Service steps declared not safe to repeat (`"idempotent": false` on the action).
    pub non_idempotent_steps: BTreeSet<(ServiceName, Action)>,
    /// What the job does to its cluster's state and layout (none for plain queue use).
    pub effects: Option<super::ClusterEffects>,
}

impl Default for SubmitOptions {
    fn default() -> Self {
        Self {
            max_attempts: 3,
            backoff_ms: 1_000,
            non_idempotent: BTreeSet::new(),
            non_idempotent_steps: BTreeSet::new(),
            effects: None,
        }
    }
}

/// Caps on running tasks; `None` is unlimited.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClaimLimits {
    pub max_running: Option<u32>,
    pub max_running_per_tenant: Option<u32>,
}

/// Proof that a worker holds a task: the attempt number tells a re-claimed task
/// from the one this worker lost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub task_id: String,
    pub job_id: String,
    pub worker_id: String,
    pub attempt: i64,
}

/// A task handed to a worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedTask {
    pub task_id: String,
    pub job_id: String,
    pub tenant_id: String,
    pub cluster_id: String,
    pub number: TaskId,
    pub node: u32,
    pub service: Option<ServiceName>,
    pub action: Action,
    /// 1 for the first attempt.
    pub attempt: i64,
    pub idempotent: bool,
    pub worker_id: String,
    pub lease_expires_ms: i64,
}

impl ClaimedTask {
    pub fn lease(&self) -> Lease {
        Lease {
            task_id: self.task_id.clone(),
            job_id: self.job_id.clone(),
            worker_id: self.worker_id.clone(),
            attempt: self.attempt,
        }
    }
}

/// What a heartbeat tells the worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heartbeat {
    /// Keep going; the lease now runs to this time.
    Continue { lease_expires_ms: i64 },
    /// The job is being cancelled: stop the task and complete it as `Stopped`.
    Stop { lease_expires_ms: i64 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutcomeKind {
    Succeeded,
    Failed,
    /// Stopped on request (cancel); the task ends `cancelled`.
    Stopped,
    /// The step could not start yet (another node it needs is not there): the task
    /// goes back to the queue after [`DEFER_MS`] without using up an attempt, and its
    /// worker slot is free for the task it waits for.
    Deferred,
}

/// How long a deferred task waits before it may be claimed again.
pub const DEFER_MS: i64 = 500;

/// What one attempt did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub kind: OutcomeKind,
    pub exit_code: Option<i64>,
    pub stdout: String,
    pub stderr: String,
    pub error: Option<String>,
}

impl Outcome {
    pub fn succeeded() -> Self {
        Self {
            kind: OutcomeKind::Succeeded,
            exit_code: Some(0),
            stdout: String::new(),
            stderr: String::new(),
            error: None,
        }
    }

    pub fn failed(error: impl Into<String>) -> Self {
        Self {
            kind: OutcomeKind::Failed,
            exit_code: None,
            stdout: String::new(),
            stderr: String::new(),
            error: Some(error.into()),
        }
    }

    pub fn stopped() -> Self {
        Self {
            kind: OutcomeKind::Stopped,
            exit_code: None,
            stdout: String::new(),
            stderr: String::new(),
            error: Some("stopped: job cancelled".into()),
        }
    }
}

/// Where a completion left the task and its job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub task_state: TaskState,
    pub job_state: JobState,
}

/// Cuts `text` to at most `max` bytes on a character boundary.
pub(super) fn capped(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

pub(super) fn parse_action(raw: &str) -> Result<Action, QueueError> {
    serde_json::from_value(serde_json::Value::String(raw.to_owned())).map_err(|_| {
        QueueError::CorruptValue {
            what: "task action",
            value: raw.to_owned(),
        }
    })
}

pub(super) fn parse_service(raw: Option<String>) -> Result<Option<ServiceName>, QueueError> {
    raw.map(|name| {
        ServiceName::parse(name.clone()).map_err(|_| QueueError::CorruptValue {
            what: "task service",
            value: name,
        })
    })
    .transpose()
}

pub(super) fn to_u32(what: &'static str, value: i64) -> Result<u32, QueueError> {
    u32::try_from(value).map_err(|_| QueueError::CorruptValue {
        what,
        value: value.to_string(),
    })
}
