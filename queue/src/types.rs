//! The queue's value types: states, options, limits, claims and outcomes.

use std::collections::BTreeSet;

use api_types::{JobId, TaskRecordId};
use domain::names::ServiceName;
use domain::plan::{Action, TaskId};

use sqlx::any::AnyRow;
use sqlx::{FromRow, Row};

use store::column_value;

/// Each of an attempt's stdout and stderr is kept up to this many bytes.
pub const OUTPUT_CAP_BYTES: usize = 64 * 1024;

pub use api_types::{JobState, TaskState};

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
    /// How the jobs competing for the slots share them.
    pub sharing: Sharing,
}

/// How the active jobs share a claim's slots (see `fair.rs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Sharing {
    /// Each slot to the job with the fewest running tasks: a small job gets every slot
    /// it can use and a big job the rest, so no slot stays free while a job could use it.
    /// Right while the steps' time is spent elsewhere (on remote machines).
    #[default]
    Slots,
    /// Besides, no job runs more than one task more than the busiest other active job
    /// (one with tasks running or ready). For when this machine's CPU is what the steps
    /// wait for: there a big job's 60 running steps would take 60 shares of it against
    /// a small job's 3, and hold it back twenty-fold. Slots may stay free while a small
    /// job runs; the big job takes them back when it ends.
    EqualSteps,
}

impl ClaimLimits {
    /// (global, per tenant) as counts a query compares with: no limit is `i64::MAX`.
    pub(super) fn as_counts(self) -> (i64, i64) {
        let count = |limit: Option<u32>| limit.map_or(i64::MAX, i64::from);
        (count(self.max_running), count(self.max_running_per_tenant))
    }
}

/// Proof that a worker holds a task: the attempt number tells a re-claimed task
/// from the one this worker lost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub task_id: TaskRecordId,
    pub job_id: JobId,
    pub worker_id: String,
    pub attempt: i64,
}

/// A task handed to a worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedTask {
    pub task_id: TaskRecordId,
    pub job_id: JobId,
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

impl OutcomeKind {
    /// The outcome's name in metrics and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::Stopped => "stopped",
            Self::Deferred => "deferred",
        }
    }
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
    /// A success that did not do the step (a forced delete passed over its failure):
    /// the task ends `skipped`, and its successors run as after a success.
    pub passed_over: bool,
}

impl Outcome {
    pub fn succeeded() -> Self {
        Self {
            kind: OutcomeKind::Succeeded,
            exit_code: Some(0),
            stdout: String::new(),
            stderr: String::new(),
            error: None,
            passed_over: false,
        }
    }

    pub fn failed(error: impl Into<String>) -> Self {
        Self {
            kind: OutcomeKind::Failed,
            exit_code: None,
            stdout: String::new(),
            stderr: String::new(),
            error: Some(error.into()),
            passed_over: false,
        }
    }

    pub fn stopped() -> Self {
        Self {
            kind: OutcomeKind::Stopped,
            exit_code: None,
            stdout: String::new(),
            stderr: String::new(),
            error: Some("stopped: job cancelled".into()),
            passed_over: false,
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

/// Where a task row sits in its plan (number, node, service, action), read as the
/// planner's own types: what every decoder of a task row shares.
pub(super) struct PlanStep {
    pub number: TaskId,
    pub node: u32,
    pub service: Option<ServiceName>,
    pub action: Action,
}

impl<'r> FromRow<'r, AnyRow> for PlanStep {
    fn from_row(row: &'r AnyRow) -> Result<Self, sqlx::Error> {
        let number: i64 = row.try_get("number")?;
        let node: i64 = row.try_get("node")?;
        let service: Option<String> = row.try_get("service")?;
        let action: String = row.try_get("action")?;
        Ok(PlanStep {
            number: TaskId(column_value("number", u32::try_from(number))?),
            node: column_value("node", u32::try_from(node))?,
            service: service
                .map(|name| column_value("service", ServiceName::parse(name)))
                .transpose()?,
            // An action is stored as the word it serialises to.
            action: column_value(
                "action",
                serde_json::from_value(serde_json::Value::String(action)),
            )?,
        })
    }
}
