//! Ending an attempt: by the worker's report ([`complete`]) or by its lease running
//! out ([`requeue_expired`]). Both settle the task the same way: record the attempt,
//! retry or fail, release successors, and move the job on.

use sqlx::{Any, Row, Transaction};

use super::claim::lease_lost;
use super::types::capped;
use super::{
    begin_write, lock_job, Completion, JobState, Lease, Outcome, OutcomeKind, QueueError,
    TaskState, OUTPUT_CAP_BYTES,
};
use crate::store::Store;

/// Expired leases handled per call; the rest wait for the next sweep.
const EXPIRY_BATCH: i64 = 1_000;

/// A task whose lease ran out, and where it went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expired {
    pub task_id: String,
    pub worker_id: String,
    pub attempt: i64,
    /// `ready` when it will run again, `failed` when it may not.
    pub task_state: TaskState,
}

/// The held task as the lease release returns it.
struct Released {
    task_id: String,
    job_id: String,
    worker_id: String,
    number: i64,
    node: i64,
    service: Option<String>,
    action: String,
    attempt: i64,
    tries: i64,
    max_attempts: i64,
    idempotent: bool,
    backoff_ms: i64,
    started_at_ms: i64,
}

const RELEASE_RETURNING: &str = "RETURNING number, node, service, action, attempts, tries, \
     max_attempts, idempotent, backoff_ms, started_at_ms";

fn released(
    row: &sqlx::any::AnyRow,
    task_id: &str,
    job_id: &str,
    worker_id: &str,
) -> Result<Released, QueueError> {
    Ok(Released {
        task_id: task_id.to_owned(),
        job_id: job_id.to_owned(),
        worker_id: worker_id.to_owned(),
        number: row.try_get("number")?,
        node: row.try_get("node")?,
        service: row.try_get("service")?,
        action: row.try_get("action")?,
        attempt: row.try_get("attempts")?,
        tries: row.try_get("tries")?,
        max_attempts: row.try_get("max_attempts")?,
        idempotent: row.try_get::<i64, _>("idempotent")? != 0,
        backoff_ms: row.try_get("backoff_ms")?,
        started_at_ms: row.try_get::<Option<i64>, _>("started_at_ms")?.unwrap_or(0),
    })
}

/// Records the outcome of the attempt `lease` holds. Refused with
/// [`QueueError::LeaseLost`] if the lease was taken back meanwhile (its outcome is
/// then unknown to the queue, which already retried or failed the task).
pub async fn complete(
    store: &Store,
    lease: &Lease,
    outcome: &Outcome,
    now_ms: i64,
) -> Result<Completion, QueueError> {
    if outcome.kind == OutcomeKind::Succeeded {
        return complete_succeeded(store, lease, outcome, now_ms).await;
    }
    let mut tx = begin_write(store).await?;
    let job_state = lock_job(store, &mut tx, &lease.job_id).await?;
    let row = sqlx::query(&format!(
        "UPDATE tasks SET lease_owner = NULL, lease_expires_ms = NULL \
         WHERE id = $1 AND lease_owner = $2 AND attempts = $3 AND state = 'running' \
         {RELEASE_RETURNING}"
    ))
    .bind(&lease.task_id)
    .bind(&lease.worker_id)
    .bind(lease.attempt)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(row) = row else {
        return Err(lease_lost(lease));
    };
    let held = released(&row, &lease.task_id, &lease.job_id, &lease.worker_id)?;
    let completion = settle(&mut tx, &held, job_state, outcome, now_ms).await?;
    tx.commit().await?;
    Ok(completion)
}

/// The common path in as few statements as possible: the job's success counter
/// goes first (it locks the job row, as every writer does first), then the task is
/// released and marked succeeded in one update. A lost lease rolls both back.
async fn complete_succeeded(
    store: &Store,
    lease: &Lease,
    outcome: &Outcome,
    now_ms: i64,
) -> Result<Completion, QueueError> {
    let mut tx = begin_write(store).await?;
    let job = sqlx::query(
        "UPDATE jobs SET tasks_succeeded = tasks_succeeded + 1 WHERE id = $1 \
         RETURNING state, tasks_succeeded, tasks_total",
    )
    .bind(&lease.job_id)
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(|| QueueError::NotFound(format!("job {}", lease.job_id)))?;
    let job_state = JobState::parse(&job.try_get::<String, _>("state")?)?;
    let counts = (
        job.try_get::<i64, _>("tasks_succeeded")?,
        job.try_get::<i64, _>("tasks_total")?,
    );
    let row = sqlx::query(&format!(
        "UPDATE tasks SET lease_owner = NULL, lease_expires_ms = NULL, state = 'succeeded', \
         finished_at_ms = $4, error = NULL \
         WHERE id = $1 AND lease_owner = $2 AND attempts = $3 AND state = 'running' \
         {RELEASE_RETURNING}"
    ))
    .bind(&lease.task_id)
    .bind(&lease.worker_id)
    .bind(lease.attempt)
    .bind(now_ms)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(row) = row else {
        return Err(lease_lost(lease));
    };
    let held = released(&row, &lease.task_id, &lease.job_id, &lease.worker_id)?;
    record_attempt(&mut tx, &held, TaskState::Succeeded, outcome, now_ms).await?;
    let job_state = after_success(&mut tx, &held, job_state, counts, now_ms).await?;
    tx.commit().await?;
    Ok(Completion {
        task_state: TaskState::Succeeded,
        job_state,
    })
}

/// Takes back every lease that expired before `now_ms`: idempotent tasks with
/// attempts left go back to the queue as a new attempt, others fail their job (a
/// step that must not run twice is never re-run on a guess).
pub async fn requeue_expired(store: &Store, now_ms: i64) -> Result<Vec<Expired>, QueueError> {
    let candidates = sqlx::query(
        "SELECT id, job_id, lease_owner, attempts FROM tasks \
         WHERE state = 'running' AND lease_expires_ms < $1 ORDER BY lease_expires_ms LIMIT $2",
    )
    .bind(now_ms)
    .bind(EXPIRY_BATCH)
    .fetch_all(store.pool())
    .await?;
    let mut expired = Vec::with_capacity(candidates.len());
    for candidate in candidates {
        let task_id: String = candidate.try_get("id")?;
        let job_id: String = candidate.try_get("job_id")?;
        let worker_id: String = candidate
            .try_get::<Option<String>, _>("lease_owner")?
            .unwrap_or_default();
        let attempt: i64 = candidate.try_get("attempts")?;
        let mut tx = begin_write(store).await?;
        let job_state = lock_job(store, &mut tx, &job_id).await?;
        // Re-checked under the lock: a heartbeat or completion may have come first.
        let row = sqlx::query(&format!(
            "UPDATE tasks SET lease_owner = NULL, lease_expires_ms = NULL \
             WHERE id = $1 AND attempts = $2 AND state = 'running' AND lease_expires_ms < $3 \
             {RELEASE_RETURNING}"
        ))
        .bind(&task_id)
        .bind(attempt)
        .bind(now_ms)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = row else {
            continue;
        };
        let held = released(&row, &task_id, &job_id, &worker_id)?;
        let outcome = Outcome::failed(format!(
            "lease of worker {worker_id:?} expired (attempt {attempt})"
        ));
        let completion = settle(&mut tx, &held, job_state, &outcome, now_ms).await?;
        tx.commit().await?;
        expired.push(Expired {
            task_id,
            worker_id,
            attempt,
            task_state: completion.task_state,
        });
    }
    Ok(expired)
}

/// The rest of a completion, inside the caller's transaction with the job locked
/// and the lease already released.
async fn settle(
    tx: &mut Transaction<'static, Any>,
    held: &Released,
    job_state: JobState,
    outcome: &Outcome,
    now_ms: i64,
) -> Result<Completion, QueueError> {
    if outcome.kind == OutcomeKind::Deferred {
        return defer(tx, held, job_state, now_ms).await;
    }
    let retry = held.idempotent && held.tries < held.max_attempts && job_state.is_active();
    let task_state = match outcome.kind {
        OutcomeKind::Succeeded => TaskState::Succeeded,
        OutcomeKind::Stopped if !job_state.is_active() => TaskState::Cancelled,
        // Stopped without a cancel (say, the worker shut down mid-step): the step's
        // effect is unknown, so the job fails instead of waiting forever.
        OutcomeKind::Stopped => TaskState::Failed,
        OutcomeKind::Failed if retry => TaskState::Ready,
        OutcomeKind::Failed | OutcomeKind::Deferred => TaskState::Failed,
    };
    let not_before = if task_state == TaskState::Ready {
        let doublings = u32::try_from(held.tries.saturating_sub(1).clamp(0, 20)).unwrap_or(20);
        now_ms.saturating_add(held.backoff_ms.saturating_mul(1_i64 << doublings))
    } else {
        now_ms
    };
    sqlx::query(
        "UPDATE tasks SET state = $2, not_before_ms = $3, finished_at_ms = $4, error = $5 \
         WHERE id = $1",
    )
    .bind(&held.task_id)
    .bind(task_state.as_str())
    .bind(not_before)
    .bind(now_ms)
    .bind(&outcome.error)
    .execute(&mut **tx)
    .await?;
    record_attempt(tx, held, task_state, outcome, now_ms).await?;

    let mut next_job_state = job_state;
    match task_state {
        TaskState::Succeeded => {
            let (succeeded, total): (i64, i64) = sqlx::query_as(
                "UPDATE jobs SET tasks_succeeded = tasks_succeeded + 1 WHERE id = $1 \
                 RETURNING tasks_succeeded, tasks_total",
            )
            .bind(&held.job_id)
            .fetch_one(&mut **tx)
            .await?;
            next_job_state = after_success(tx, held, job_state, (succeeded, total), now_ms).await?;
        }
        TaskState::Failed if job_state.is_active() => {
            next_job_state = JobState::Failed;
            let error = format!(
                "task {} ({}) failed after {} attempt(s): {}",
                held.number,
                label(held),
                held.tries,
                outcome.error.as_deref().unwrap_or("no error message"),
            );
            set_job_state(tx, &held.job_id, next_job_state, Some(&error), now_ms).await?;
            // Not started, and not claimable until a retry makes them ready again.
            sqlx::query("UPDATE tasks SET state = 'pending' WHERE job_id = $1 AND state = 'ready'")
                .bind(&held.job_id)
                .execute(&mut **tx)
                .await?;
        }
        _ => {}
    }
    if job_state == JobState::Cancelling && task_state != TaskState::Succeeded {
        next_job_state = finish_cancel_if_idle(tx, &held.job_id, now_ms).await?;
    }
    Ok(Completion {
        task_state,
        job_state: next_job_state,
    })
}

/// Puts a deferred task back as if it had not been claimed: no attempt is used or
/// recorded, and it may be claimed again after [`super::DEFER_MS`].
async fn defer(
    tx: &mut Transaction<'static, Any>,
    held: &Released,
    job_state: JobState,
    now_ms: i64,
) -> Result<Completion, QueueError> {
    sqlx::query(
        "UPDATE tasks SET state = 'ready', attempts = attempts - 1, tries = tries - 1, \
         not_before_ms = $2, started_at_ms = NULL WHERE id = $1",
    )
    .bind(&held.task_id)
    .bind(now_ms.saturating_add(super::DEFER_MS))
    .execute(&mut **tx)
    .await?;
    Ok(Completion {
        task_state: TaskState::Ready,
        job_state,
    })
}

async fn record_attempt(
    tx: &mut Transaction<'static, Any>,
    held: &Released,
    task_state: TaskState,
    outcome: &Outcome,
    now_ms: i64,
) -> Result<(), QueueError> {
    sqlx::query(
        "INSERT INTO task_attempts (id, task_id, attempt, worker_id, outcome, started_at_ms, \
         finished_at_ms, exit_code, stdout, stderr, error) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(uuid::Uuid::new_v4().to_string())
    .bind(&held.task_id)
    .bind(held.attempt)
    .bind(&held.worker_id)
    .bind(task_state.as_str())
    .bind(held.started_at_ms)
    .bind(now_ms)
    .bind(outcome.exit_code)
    .bind(capped(&outcome.stdout, OUTPUT_CAP_BYTES))
    .bind(capped(&outcome.stderr, OUTPUT_CAP_BYTES))
    .bind(&outcome.error)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Releases the successors of a succeeded task; the job succeeds with its last
/// task. `counts` are the job's succeeded and total tasks after this one.
async fn after_success(
    tx: &mut Transaction<'static, Any>,
    held: &Released,
    job_state: JobState,
    (succeeded, total): (i64, i64),
    now_ms: i64,
) -> Result<JobState, QueueError> {
    // Successors of a stopped job wait as pending until it is retried.
    let released_state = if job_state.is_active() {
        TaskState::Ready
    } else {
        TaskState::Pending
    };
    sqlx::query(
        "UPDATE tasks SET pending_prereqs = pending_prereqs - 1, \
         state = CASE WHEN pending_prereqs = 1 AND state = 'pending' THEN $3 ELSE state END \
         WHERE job_id = $1 AND number IN \
           (SELECT task FROM task_deps WHERE job_id = $1 AND prereq = $2)",
    )
    .bind(&held.job_id)
    .bind(held.number)
    .bind(released_state.as_str())
    .execute(&mut **tx)
    .await?;
    if succeeded >= total && job_state.is_active() {
        set_job_state(tx, &held.job_id, JobState::Succeeded, None, now_ms).await?;
        return Ok(JobState::Succeeded);
    }
    if job_state == JobState::Cancelling {
        return finish_cancel_if_idle(tx, &held.job_id, now_ms).await;
    }
    Ok(job_state)
}

fn label(held: &Released) -> String {
    match &held.service {
        Some(service) => format!("{}-{}-{}", held.node, held.action, service),
        None => format!("{}-{}", held.node, held.action),
    }
}

pub(super) async fn set_job_state(
    tx: &mut Transaction<'static, Any>,
    job_id: &str,
    state: JobState,
    error: Option<&str>,
    now_ms: i64,
) -> Result<(), QueueError> {
    sqlx::query("UPDATE jobs SET state = $2, error = $3, finished_at_ms = $4 WHERE id = $1")
        .bind(job_id)
        .bind(state.as_str())
        .bind(error)
        .bind(now_ms)
        .execute(&mut **tx)
        .await?;
    super::effects::apply(tx, job_id, state, now_ms).await
}

/// A cancelling job becomes cancelled once none of its tasks runs.
pub(super) async fn finish_cancel_if_idle(
    tx: &mut Transaction<'static, Any>,
    job_id: &str,
    now_ms: i64,
) -> Result<JobState, QueueError> {
    let running: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM tasks WHERE job_id = $1 AND state = 'running'")
            .bind(job_id)
            .fetch_one(&mut **tx)
            .await?;
    if running > 0 {
        return Ok(JobState::Cancelling);
    }
    set_job_state(
        tx,
        job_id,
        JobState::Cancelled,
        Some("cancelled by request"),
        now_ms,
    )
    .await?;
    Ok(JobState::Cancelled)
}
