//! The durable task queue: jobs are planner DAGs stored as task rows that workers
//! claim under a lease, heartbeat, and complete.
//!
//! Every state change is one database transaction, so a server killed at any point
//! loses nothing: a task whose lease expires goes back to the queue (or fails, if it
//! is not safe to run again). At most one task runs per node, limits cap how many run
//! globally and per tenant, and a task becomes ready only when all its prerequisites
//! succeeded. Time is always passed in (`now_ms`) so expiry and backoff are testable.
//!
//! Concurrency: a claim is serialized (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: a
//! transaction-scoped advisory lock plus `FOR UPDATE SKIP LOCKED`), which keeps the
//! limit and node checks exact. Every other writer locks the job row first, then
//! its tasks, so PostgreSQL transactions never wait on each other in a cycle.
//!
//! What to run next is decided by pure functions beside the SQL, tested by tables:
//! `transition` (an outcome, its attempts and the job's state → the task's next state
//! and when) and `fair` (which ready task of which job and tenant goes first).
//!
//! Jobs and task rows are named by [`JobId`] and [`TaskRecordId`] wherever they cross
//! this crate's boundary (a task's number in its plan is the planner's `TaskId`);
//! inside, the SQL binds their text.
//!
//! Everything goes through one handle, [`Queue`]: the store plus the process's job
//! wakes ([`job_wakes`]), which the queue sends after its writes commit (events, a
//! cancel or retry, leases taken back) so a job's followers look again. A process
//! makes one `Queue` where it opens its store and hands clones to whoever needs the
//! queue (the engine's service and workers, the server's job streams): clones share
//! the wakes, so a stream is woken by a write through any of them. Every operation is
//! a method (`queue.submit_job(..)`, `queue.claim(..)`, `queue.complete(..)`, reads
//! such as `queue.job(&id)`); the few that write inside a caller's transaction take
//! it (`queue.submit_in(&mut tx, ..)`).
//!
//! It stands on `store` (and the pure `domain` and `api-types`); the engine's workers
//! call it, and nothing here names them. Its own tests (`tests/queue.rs`) need only a
//! database, so a change here rebuilds this crate and its tests, not the engine.

mod claim;
mod complete;
mod control;
mod effects;
mod events;
mod fair;
pub mod job_wakes;
mod read;
mod submit;
mod transition;
mod types;
pub mod views;

pub use api_types::{JobId, TaskRecordId};
pub use effects::ClusterEffects;
pub use events::{Event, NewEvent};
pub use read::{Attempt, Job, TaskRecord};
pub use store::WorkerScope;
pub use types::{
    ClaimLimits, ClaimedTask, Completion, Heartbeat, JobState, Lease, Outcome, OutcomeKind,
    Sharing, SubmitOptions, TaskState, DEFER_MS, OUTPUT_CAP_BYTES,
};

pub use complete::Expired;
pub use job_wakes::{JobWaiter, JobWakes, CHANNEL};
pub use read::{JobCatalogs, JobLayouts, StepStateCount, TaskFilter};

use sqlx::{Any, Transaction};

use store::{Backend, RowLock, Store, StoreError, WriteTurn};

/// The queue of a process: its store and its job wakes. Make one where the store is
/// opened and clone it (cheap; clones share the wakes) to everyone who uses the queue.
#[derive(Debug, Clone)]
pub struct Queue {
    store: Store,
    wakes: JobWakes,
}

impl Queue {
    /// The queue on `store`, with wakes of its own: a follower subscribed to another
    /// `Queue` (even on the same store) hears only the wakes PostgreSQL forwards.
    pub fn new(store: Store) -> Self {
        Self {
            store,
            wakes: JobWakes::default(),
        }
    }

    /// The store the queue's rows live in.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The wakes this queue (and its clones) send after their writes.
    pub fn wakes(&self) -> &JobWakes {
        &self.wakes
    }

    /// A waiter that sees every wake sent from now on (see [`JobWakes::subscribe`]).
    pub fn subscribe(&self) -> JobWaiter {
        self.wakes.subscribe()
    }
}

/// Why a queue operation did not happen.
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The lease expired (and the task was requeued or failed) or another worker holds it.
    #[error("task {task_id}: lease of worker {worker_id} (attempt {attempt}) is no longer held")]
    LeaseLost {
        task_id: TaskRecordId,
        worker_id: String,
        attempt: i64,
    },
    #[error("{0} not found")]
    NotFound(String),
    #[error("job {job_id} is {state}; cannot {action}")]
    InvalidState {
        job_id: JobId,
        state: JobState,
        action: &'static str,
    },
    #[error("job {job_id}: stored plan is unreadable: {reason}")]
    CorruptPlan { job_id: JobId, reason: String },
}

impl From<sqlx::Error> for QueueError {
    fn from(err: sqlx::Error) -> Self {
        QueueError::Store(StoreError::from(err))
    }
}

impl QueueError {
    /// Whether the database could not be reached: the call may succeed once it is back.
    pub fn is_unreachable(&self) -> bool {
        matches!(self, QueueError::Store(store) if store.is_unreachable())
    }
}

/// Starts a transaction that may write, in this process's turn (see
/// [`Store::begin_write`]); keep the turn until the transaction ends.
#[track_caller]
fn begin_write(
    store: &Store,
) -> impl std::future::Future<Output = Result<(WriteTurn, Transaction<'static, Any>), QueueError>>
       + Send
       + '_ {
    let beginning = store.begin_write();
    async move { Ok(beginning.await?) }
}

/// Row-lock suffix for a job row read inside a write transaction (SQLite's write
/// lock already covers the whole database).
fn for_update(store: &Store) -> &'static str {
    store.backend().lock_clause(RowLock::Wait)
}

/// Locks the job row (PostgreSQL) and returns its state: the first step of every
/// writer except the claim.
async fn lock_job(
    store: &Store,
    tx: &mut Transaction<'static, Any>,
    job_id: &str,
) -> Result<JobState, QueueError> {
    let state: Option<JobState> = sqlx::query_scalar(&format!(
        "SELECT state FROM jobs WHERE id = $1{}",
        for_update(store)
    ))
    .bind(job_id)
    .fetch_optional(&mut **tx)
    .await?;
    state.ok_or_else(|| QueueError::NotFound(format!("job {job_id}")))
}

/// The backend a transaction runs on, for the statements whose text differs.
fn backend_of(tx: &Transaction<'static, Any>) -> Backend {
    if tx.backend_name() == <sqlx::Postgres as sqlx::Database>::NAME {
        Backend::Postgres
    } else {
        Backend::Sqlite
    }
}

/// The placeholders of one statement, handed out in the order they appear in its
/// text, which must be the order their values are bound: numbered on PostgreSQL (`$1`,
/// `$2`, …), anonymous (`?`) on SQLite.
///
/// SQLite looks each named parameter up by walking the statement's list of names, so
/// a statement of N numbered parameters costs N² to bind; at a few hundred per batch
/// that was a tenth of the queue's time. Anonymous ones are bound by position, and sqlx
/// counts them apart from numbered ones, so a statement takes all of its placeholders
/// from one `Params`.
struct Params {
    backend: Backend,
    next: usize,
}

impl Params {
    fn new(backend: Backend) -> Self {
        Self { backend, next: 1 }
    }

    /// The next placeholder.
    fn one(&mut self) -> String {
        match self.backend {
            Backend::Sqlite => "?".to_owned(),
            Backend::Postgres => {
                let placeholder = format!("${}", self.next);
                self.next += 1;
                placeholder
            }
        }
    }

    /// `count` placeholders for an `IN (…)` list: `a, b, c`.
    fn list(&mut self, count: usize) -> String {
        (0..count)
            .map(|_| self.one())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `rows` rows of `columns` placeholders each for a multi-row `VALUES` list.
    fn rows(&mut self, rows: usize, columns: usize) -> String {
        (0..rows)
            .map(|_| format!("({})", self.list(columns)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Rows of a batched statement are padded up to a power of two (repeating a row where
/// that changes nothing), so batches of any size share a few statement shapes that
/// each connection keeps prepared, instead of preparing one shape per size.
fn padded_len(len: usize) -> usize {
    len.max(1).next_power_of_two()
}

/// Splits `len` rows into chunks of power-of-two sizes up to `max` (a power of two),
/// for statements whose rows cannot be repeated (inserts): few shapes again.
fn power_of_two_chunks(mut len: usize, max: usize) -> Vec<usize> {
    let mut chunks = Vec::new();
    while len > 0 {
        let size = if len >= max {
            max
        } else {
            1 << (usize::BITS - 1 - len.leading_zeros())
        };
        chunks.push(size);
        len -= size;
    }
    chunks
}

/// The `index`th of `items`, or the last one for padding rows.
fn padded_item<T>(items: &[T], index: usize) -> &T {
    &items[index.min(items.len().saturating_sub(1))]
}
