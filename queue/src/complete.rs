//! Ending an attempt: by the worker's report ([`Queue::complete`], or [`Queue::complete_batch`] for
//! many at once), by its lease running out ([`Queue::requeue_expired`]) or by its worker
//! handing it back as it stops ([`Queue::release_leases`]). All settle the task the same way:
//! record the attempt, retry or fail, release successors, and move the job on. What
//! happens next is decided by [`super::transition`] from plain values; this file reads
//! those values under its locks and writes the answer.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use api_types::{JobId, TaskAction, TaskRecordId};
use sqlx::any::AnyRow;
use sqlx::{Any, FromRow, Row, Transaction};

use super::claim::lease_lost;
use super::transition::{self, Ended, JobStep, RetryPolicy, Transition};
use super::types::capped;
use super::{
    backend_of, begin_write, for_update, lock_job, padded_item, padded_len, power_of_two_chunks,
    Completion, JobState, Lease, Outcome, OutcomeKind, Params, Queue, QueueError, TaskState,
    OUTPUT_CAP_BYTES,
};
use store::{IntFlag, Store};

/// Expired leases handled per call; the rest wait for the next sweep.
const EXPIRY_BATCH: i64 = 1_000;

/// Tasks per batched statement (a power of two): at most 11 bound values each, well
/// under both backends' limits.
const BATCH_ROWS: usize = 256;

/// A task whose lease ran out, and where it went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expired {
    pub task_id: TaskRecordId,
    pub worker_id: String,
    pub attempt: i64,
    /// `ready` when it will run again, `failed` when it may not.
    pub task_state: TaskState,
}

/// The held task as the lease release returns it (`RETURNING` its columns), with the
/// lease's own ids filled in by [`released`] (as text: this file only binds them).
#[derive(sqlx::FromRow)]
struct Released {
    #[sqlx(skip)]
    task_id: String,
    #[sqlx(skip)]
    job_id: String,
    #[sqlx(skip)]
    worker_id: String,
    number: i64,
    node: i64,
    service: Option<String>,
    action: TaskAction,
    #[sqlx(rename = "attempts")]
    attempt: i64,
    tries: i64,
    max_attempts: i64,
    #[sqlx(try_from = "IntFlag")]
    idempotent: bool,
    backoff_ms: i64,
    started_at_ms: Option<i64>,
}

const RELEASE_RETURNING: &str = "RETURNING number, node, service, action, attempts, tries, \
     max_attempts, idempotent, backoff_ms, started_at_ms";

fn released(row: &AnyRow, lease: &Lease) -> Result<Released, sqlx::Error> {
    Ok(Released {
        task_id: lease.task_id.as_str().to_owned(),
        job_id: lease.job_id.as_str().to_owned(),
        worker_id: lease.worker_id.clone(),
        ..Released::from_row(row)?
    })
}

impl Queue {
    /// Records the outcome of the attempt `lease` holds. Refused with
    /// [`QueueError::LeaseLost`] if the lease was taken back meanwhile (its outcome is
    /// then unknown to the queue, which already retried or failed the task).
    pub async fn complete(
        &self,
        lease: &Lease,
        outcome: &Outcome,
        now_ms: i64,
    ) -> Result<Completion, QueueError> {
        if outcome.kind == OutcomeKind::Succeeded {
            return complete_succeeded(&self.store, lease, outcome, now_ms).await;
        }
        let (_turn, mut tx) = begin_write(&self.store).await?;
        let job_state = lock_job(&self.store, &mut tx, lease.job_id.as_str()).await?;
        let Some(held) = release_held(&mut tx, lease).await? else {
            return Err(lease_lost(lease));
        };
        let completion = settle(&mut tx, &held, job_state, outcome, false, now_ms).await?;
        tx.commit().await?;
        Ok(completion)
    }
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
    let (_turn, mut tx) = begin_write(store).await?;
    let (job_state, succeeded, total): (JobState, i64, i64) = sqlx::query_as(
        "UPDATE jobs SET tasks_succeeded = tasks_succeeded + 1 WHERE id = $1 \
         RETURNING state, tasks_succeeded, tasks_total",
    )
    .bind(lease.job_id.as_str())
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(|| QueueError::NotFound(format!("job {}", lease.job_id)))?;
    let counts = (succeeded, total);
    let row = sqlx::query(&format!(
        "UPDATE tasks SET lease_owner = NULL, lease_expires_ms = NULL, state = 'succeeded', \
         finished_at_ms = $4, error = NULL \
         WHERE id = $1 AND lease_owner = $2 AND attempts = $3 AND state = 'running' \
         {RELEASE_RETURNING}"
    ))
    .bind(lease.task_id.as_str())
    .bind(&lease.worker_id)
    .bind(lease.attempt)
    .bind(now_ms)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(row) = row else {
        return Err(lease_lost(lease));
    };
    let held = released(&row, lease)?;
    let task_state = success_state(outcome);
    record_attempt(&mut tx, &held, task_state, outcome, now_ms).await?;
    mark_skipped(&mut tx, &[(lease, outcome)]).await?;
    let job_state = after_success(&mut tx, &held, job_state, counts, now_ms).await?;
    tx.commit().await?;
    Ok(Completion {
        task_state,
        job_state,
    })
}

impl Queue {
    /// Records many attempts' outcomes in one transaction: for each, what [`Queue::complete`]
    /// does, with one commit for all (that commit is most of a completion's cost).
    ///
    /// Every entry gets its own answer, in order: an entry whose lease was lost (or
    /// that repeats a task already in the batch) is refused with
    /// [`QueueError::LeaseLost`] and the others are still recorded. A completion's
    /// `job_state` is the job's state after the whole batch. The outer error means the
    /// transaction failed and nothing was recorded.
    pub async fn complete_batch(
        &self,
        finished: &[(Lease, Outcome)],
        now_ms: i64,
    ) -> Result<Vec<Result<Completion, QueueError>>, QueueError> {
        // Not recorded until shown otherwise.
        let mut answers: Vec<Result<Completion, QueueError>> = finished
            .iter()
            .map(|(lease, _)| Err(lease_lost(lease)))
            .collect();
        if finished.is_empty() {
            return Ok(answers);
        }
        let (_turn, mut tx) = begin_write(&self.store).await?;
        let mut jobs = lock_jobs(
            &self.store,
            &mut tx,
            finished.iter().map(|(lease, _)| lease.job_id.as_str()),
        )
        .await?;

        let mut successes = Vec::new();
        let mut others = Vec::new();
        let mut seen = HashSet::new();
        for (index, (lease, outcome)) in finished.iter().enumerate() {
            if !jobs.contains_key(&lease.job_id) {
                answers[index] = Err(QueueError::NotFound(format!("job {}", lease.job_id)));
            } else if !seen.insert(lease.task_id.as_str()) {
                // The first report of a task ends its lease; a second one finds it gone.
            } else if outcome.kind == OutcomeKind::Succeeded {
                successes.push(index);
            } else {
                others.push(index);
            }
        }

        let held = release_succeeded(&mut tx, finished, &successes, now_ms).await?;
        let attempts: Vec<(&Released, TaskState, &Outcome)> = held
            .iter()
            .map(|(index, held)| {
                let outcome = &finished[*index].1;
                (held, success_state(outcome), outcome)
            })
            .collect();
        record_attempts(&mut tx, &attempts, now_ms).await?;
        let passed: Vec<(&Lease, &Outcome)> = held
            .iter()
            .map(|(index, _)| (&finished[*index].0, &finished[*index].1))
            .collect();
        mark_skipped(&mut tx, &passed).await?;
        let released: Vec<&Released> = held.iter().map(|(_, held)| held).collect();
        for (job_id, next) in after_successes(&mut tx, &released, &jobs, now_ms).await? {
            jobs.insert(job_id, next);
        }

        // Failures and stops are rare and take the one-at-a-time path, after the
        // successes and with the job state those left.
        let mut other_answers = Vec::with_capacity(others.len());
        for index in others {
            let (lease, outcome) = &finished[index];
            let job_state = jobs
                .get(&lease.job_id)
                .copied()
                .unwrap_or(JobState::Running);
            let Some(held) = release_held(&mut tx, lease).await? else {
                continue;
            };
            let completion = settle(&mut tx, &held, job_state, outcome, false, now_ms).await?;
            jobs.insert(lease.job_id.clone(), completion.job_state);
            other_answers.push((index, completion.task_state));
        }
        tx.commit().await?;

        let recorded = held
            .iter()
            .map(|(index, _)| (*index, success_state(&finished[*index].1)))
            .chain(other_answers);
        for (index, task_state) in recorded {
            let job_id = &finished[index].0.job_id;
            answers[index] = Ok(Completion {
                task_state,
                job_state: jobs.get(job_id).copied().unwrap_or(JobState::Running),
            });
        }
        Ok(answers)
    }
}

/// The state a successful attempt leaves its task in: `skipped` when the step was
/// passed over rather than done.
fn success_state(outcome: &Outcome) -> TaskState {
    if outcome.passed_over {
        TaskState::Skipped
    } else {
        TaskState::Succeeded
    }
}

/// Marks the passed-over ones among just-succeeded tasks `skipped`. They count as
/// done for their job and successors (released as after a success); only their shown
/// state differs. Rare (forced deletes only), so one statement each.
async fn mark_skipped(
    tx: &mut Transaction<'static, Any>,
    succeeded: &[(&Lease, &Outcome)],
) -> Result<(), QueueError> {
    for (lease, _) in succeeded.iter().filter(|(_, outcome)| outcome.passed_over) {
        sqlx::query("UPDATE tasks SET state = 'skipped' WHERE id = $1 AND state = 'succeeded'")
            .bind(lease.task_id.as_str())
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// Locks the jobs in id order (so two batches never wait on each other in a cycle)
/// and returns their states; unknown jobs are left out.
async fn lock_jobs<'a>(
    store: &Store,
    tx: &mut Transaction<'static, Any>,
    job_ids: impl IntoIterator<Item = &'a str>,
) -> Result<BTreeMap<JobId, JobState>, QueueError> {
    let ids: Vec<&str> = job_ids
        .into_iter()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let sql = format!(
        "SELECT id, state FROM jobs WHERE id IN ({}) ORDER BY id{}",
        Params::new(store.backend()).list(padded_len(ids.len())),
        for_update(store)
    );
    let mut query = sqlx::query_as::<_, (JobId, JobState)>(&sql);
    for index in 0..padded_len(ids.len()) {
        query = query.bind(*padded_item(&ids, index));
    }
    Ok(query.fetch_all(&mut **tx).await?.into_iter().collect())
}

/// Ends the leases of the succeeding entries at `indexes` and marks their tasks
/// succeeded, in statements of [`BATCH_ROWS`] tasks; returns what was held, by entry.
async fn release_succeeded(
    tx: &mut Transaction<'static, Any>,
    finished: &[(Lease, Outcome)],
    indexes: &[usize],
    now_ms: i64,
) -> Result<Vec<(usize, Released)>, QueueError> {
    let backend = backend_of(tx);
    let mut held = Vec::with_capacity(indexes.len());
    for chunk in indexes.chunks(BATCH_ROWS) {
        // Joined with the leases as a VALUES list, whose size the planner knows, so
        // it looks each task up by id whatever the statistics on `tasks` say.
        // Padding rows repeat the last lease: a task joined twice is updated once.
        // Each row carries the finish time too, so every placeholder appears once and
        // in order (see `Params`).
        let leases = Params::new(backend).rows(padded_len(chunk.len()), 4);
        let sql = format!(
            "WITH held (id, owner, attempt, finished) AS (VALUES {leases}) \
             UPDATE tasks SET lease_owner = NULL, lease_expires_ms = NULL, \
             state = 'succeeded', finished_at_ms = held.finished, error = NULL \
             FROM held WHERE tasks.id = held.id AND tasks.lease_owner = held.owner \
               AND tasks.attempts = held.attempt AND tasks.state = 'running' \
             {RELEASE_RETURNING}, tasks.id"
        );
        let mut query = sqlx::query(&sql);
        for row in 0..padded_len(chunk.len()) {
            let lease = &finished[*padded_item(chunk, row)].0;
            query = query
                .bind(lease.task_id.as_str())
                .bind(lease.worker_id.as_str())
                .bind(lease.attempt)
                .bind(now_ms);
        }
        let by_task: HashMap<&str, usize> = chunk
            .iter()
            .map(|index| (finished[*index].0.task_id.as_str(), *index))
            .collect();
        for row in query.fetch_all(&mut **tx).await? {
            let task_id: String = row.try_get("id")?;
            let Some(index) = by_task.get(task_id.as_str()).copied() else {
                continue;
            };
            let lease = &finished[index].0;
            held.push((index, released(&row, lease)?));
        }
    }
    held.sort_by_key(|(index, _)| *index);
    Ok(held)
}

/// Releases the lease `lease` names (leaving the task's state to [`settle`]), or
/// `None` if it is no longer held.
async fn release_held(
    tx: &mut Transaction<'static, Any>,
    lease: &Lease,
) -> Result<Option<Released>, QueueError> {
    let row = sqlx::query(&format!(
        "UPDATE tasks SET lease_owner = NULL, lease_expires_ms = NULL \
         WHERE id = $1 AND lease_owner = $2 AND attempts = $3 AND state = 'running' \
         {RELEASE_RETURNING}"
    ))
    .bind(lease.task_id.as_str())
    .bind(&lease.worker_id)
    .bind(lease.attempt)
    .fetch_optional(&mut **tx)
    .await?;
    Ok(row.map(|row| released(&row, lease)).transpose()?)
}

/// The job side of a batch of successes, for all their jobs at once: the success
/// counters, successors whose last prerequisites these were, and each job's next
/// state (from `jobs`, their states when locked). The job rows stay locked until the
/// commit and every other completion of those jobs waits for them, so this takes a
/// statement per step, not one per job.
async fn after_successes(
    tx: &mut Transaction<'static, Any>,
    succeeded: &[&Released],
    jobs: &BTreeMap<JobId, JobState>,
    now_ms: i64,
) -> Result<Vec<(JobId, JobState)>, QueueError> {
    let backend = backend_of(tx);
    let mut per_job: BTreeMap<&str, i64> = BTreeMap::new();
    for task in succeeded {
        *per_job.entry(task.job_id.as_str()).or_default() += 1;
    }
    let per_job: Vec<(&str, i64)> = per_job.into_iter().collect();
    let mut counts = Vec::with_capacity(per_job.len());
    for chunk in per_job.chunks(BATCH_ROWS) {
        // Padding rows repeat the last job with its count: a job joined twice is
        // updated once.
        let sql = format!(
            "WITH done (id, n) AS (VALUES {}) \
             UPDATE jobs SET tasks_succeeded = tasks_succeeded + done.n \
             FROM done WHERE jobs.id = done.id \
             RETURNING jobs.id, jobs.tasks_succeeded, jobs.tasks_total",
            Params::new(backend).rows(padded_len(chunk.len()), 2)
        );
        let mut query = sqlx::query_as::<_, (JobId, i64, i64)>(&sql);
        for index in 0..padded_len(chunk.len()) {
            let (job_id, count) = padded_item(chunk, index);
            query = query.bind(*job_id).bind(*count);
        }
        counts.extend(query.fetch_all(&mut **tx).await?);
    }
    let done: Vec<(&str, i64)> = succeeded
        .iter()
        .map(|task| (task.job_id.as_str(), task.number))
        .collect();
    release_successors(tx, &done).await?;
    let mut next_states = Vec::with_capacity(counts.len());
    for (job_id, succeeded, total) in counts {
        let job_state = jobs.get(&job_id).copied().unwrap_or(JobState::Running);
        let step = transition::after_success(job_state, succeeded, total);
        let next = take_job_step(tx, job_id.as_str(), job_state, step, String::new, now_ms).await?;
        next_states.push((job_id, next));
    }
    Ok(next_states)
}

impl Queue {
    /// Takes back every lease that expired before `now_ms`: idempotent tasks with
    /// attempts left go back to the queue as a new attempt, others fail their job (a
    /// step that must not run twice is never re-run on a guess).
    ///
    /// One transaction settles the whole sweep (up to [`EXPIRY_BATCH`] leases): a worker
    /// process that died holding a hundred tasks costs one commit, not a hundred.
    pub async fn requeue_expired(&self, now_ms: i64) -> Result<Vec<Expired>, QueueError> {
        take_back(self, Holders::ExpiredBefore(now_ms), now_ms).await
    }

    /// Hands back every lease `worker_id` still holds, as [`Queue::requeue_expired`] would once
    /// they expired, but now: a worker that stops (its steps already stopped) gives its
    /// tasks to the other workers at once instead of after the lease timeout.
    pub async fn release_leases(
        &self,
        worker_id: &str,
        now_ms: i64,
    ) -> Result<Vec<Expired>, QueueError> {
        take_back(self, Holders::Worker(worker_id), now_ms).await
    }
}

/// Whose leases [`take_back`] takes.
#[derive(Clone, Copy)]
enum Holders<'a> {
    /// Every lease that ran out before this time.
    ExpiredBefore(i64),
    /// Every lease this worker holds.
    Worker(&'a str),
}

impl Holders<'_> {
    /// The condition on `tasks`, with its one parameter.
    fn condition(self, params: &mut Params) -> String {
        match self {
            Self::ExpiredBefore(_) => format!("lease_expires_ms < {}", params.one()),
            Self::Worker(_) => format!("lease_owner = {}", params.one()),
        }
    }

    fn bind<'q>(
        self,
        query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    ) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>
    where
        Self: 'q,
    {
        match self {
            Self::ExpiredBefore(time) => query.bind(time),
            Self::Worker(worker) => query.bind(worker),
        }
    }

    fn why(self, worker_id: &str, attempt: i64) -> String {
        match self {
            Self::ExpiredBefore(_) => {
                format!("lease of worker {worker_id:?} expired (attempt {attempt})")
            }
            Self::Worker(_) => format!(
                "worker {worker_id:?} stopped before attempt {attempt} ended and handed the task back"
            ),
        }
    }
}

async fn take_back(
    queue: &Queue,
    holders: Holders<'_>,
    now_ms: i64,
) -> Result<Vec<Expired>, QueueError> {
    let store = queue.store();
    let mut params = Params::new(store.backend());
    let sql = format!(
        "SELECT DISTINCT job_id FROM tasks WHERE state = 'running' AND {} \
         ORDER BY job_id LIMIT {}",
        holders.condition(&mut params),
        params.one()
    );
    let job_ids: Vec<String> = holders
        .bind(sqlx::query(&sql))
        .bind(EXPIRY_BATCH)
        .fetch_all(store.pool())
        .await?
        .iter()
        .map(|row| row.try_get(0))
        .collect::<Result<_, _>>()?;
    if job_ids.is_empty() {
        return Ok(Vec::new());
    }
    let (_turn, mut tx) = begin_write(store).await?;
    let mut jobs = lock_jobs(store, &mut tx, job_ids.iter().map(String::as_str)).await?;
    // Read again under the job locks, with the task rows locked too: a heartbeat (which
    // takes no job lock) may have renewed a lease since the first look.
    let mut params = Params::new(store.backend());
    let sql = format!(
        "SELECT id, job_id, lease_owner, attempts FROM tasks \
         WHERE state = 'running' AND {} AND job_id IN ({}) \
         ORDER BY lease_expires_ms, id LIMIT {}{}",
        holders.condition(&mut params),
        params.list(padded_len(job_ids.len())),
        params.one(),
        for_update(store)
    );
    let mut query = holders.bind(sqlx::query(&sql));
    for index in 0..padded_len(job_ids.len()) {
        query = query.bind(padded_item(&job_ids, index).as_str());
    }
    let held_rows = query.bind(EXPIRY_BATCH).fetch_all(&mut *tx).await?;

    let mut expired = Vec::with_capacity(held_rows.len());
    for row in held_rows {
        let task_id: TaskRecordId = row.try_get("id")?;
        let job_id: JobId = row.try_get("job_id")?;
        let attempt: i64 = row.try_get("attempts")?;
        let worker_id = row
            .try_get::<Option<String>, _>("lease_owner")?
            .unwrap_or_default();
        let lease = Lease {
            task_id: task_id.clone(),
            job_id: job_id.clone(),
            worker_id: worker_id.clone(),
            attempt,
        };
        let Some(held) = release_held(&mut tx, &lease).await? else {
            continue;
        };
        let job_state = jobs.get(&job_id).copied().unwrap_or(JobState::Running);
        let outcome = Outcome::failed(holders.why(&worker_id, attempt));
        // Handed back, not failed: a retry waits for no backoff.
        let handed_back = matches!(holders, Holders::Worker(_));
        let completion = settle(&mut tx, &held, job_state, &outcome, handed_back, now_ms).await?;
        jobs.insert(job_id, completion.job_state);
        expired.push(Expired {
            task_id,
            worker_id,
            attempt,
            task_state: completion.task_state,
        });
    }
    tx.commit().await?;
    queue.announce(job_ids.iter().map(String::as_str)).await;
    Ok(expired)
}

/// The rest of a completion, inside the caller's transaction with the job locked
/// and the lease already released.
async fn settle(
    tx: &mut Transaction<'static, Any>,
    held: &Released,
    job_state: JobState,
    outcome: &Outcome,
    handed_back: bool,
    now_ms: i64,
) -> Result<Completion, QueueError> {
    let transition = transition::next(Ended {
        outcome: outcome.kind,
        tries: held.tries,
        policy: RetryPolicy {
            idempotent: held.idempotent,
            max_attempts: held.max_attempts,
            backoff_ms: held.backoff_ms,
        },
        job_state,
        handed_back,
        now_ms,
    });
    let not_before = match transition {
        Transition::Defer { not_before_ms } => {
            return defer(tx, held, job_state, not_before_ms).await;
        }
        Transition::Retry { not_before_ms } => not_before_ms,
        Transition::Succeed | Transition::Fail { .. } | Transition::Cancel { .. } => now_ms,
    };
    let task_state = transition.task_state();
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

    let failure = || {
        format!(
            "task {} ({}) failed after {} attempt(s): {}",
            held.number,
            label(held),
            held.tries,
            outcome.error.as_deref().unwrap_or("no error message"),
        )
    };
    let next_job_state = match transition {
        Transition::Succeed => {
            let counts: (i64, i64) = sqlx::query_as(
                "UPDATE jobs SET tasks_succeeded = tasks_succeeded + 1 WHERE id = $1 \
                 RETURNING tasks_succeeded, tasks_total",
            )
            .bind(&held.job_id)
            .fetch_one(&mut **tx)
            .await?;
            after_success(tx, held, job_state, counts, now_ms).await?
        }
        Transition::Fail { job } | Transition::Cancel { job } => {
            take_job_step(tx, &held.job_id, job_state, job, failure, now_ms).await?
        }
        Transition::Defer { .. } | Transition::Retry { .. } => job_state,
    };
    Ok(Completion {
        task_state,
        job_state: next_job_state,
    })
}

/// Puts a deferred task back as if it had not been claimed: no attempt is used or
/// recorded, and it may be claimed again from `not_before_ms`.
async fn defer(
    tx: &mut Transaction<'static, Any>,
    held: &Released,
    job_state: JobState,
    not_before_ms: i64,
) -> Result<Completion, QueueError> {
    sqlx::query(
        "UPDATE tasks SET state = 'ready', attempts = attempts - 1, tries = tries - 1, \
         not_before_ms = $2, started_at_ms = NULL WHERE id = $1",
    )
    .bind(&held.task_id)
    .bind(not_before_ms)
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
    record_attempts(tx, &[(held, task_state, outcome)], now_ms).await
}

/// Inserts attempt records in multi-row statements.
async fn record_attempts(
    tx: &mut Transaction<'static, Any>,
    attempts: &[(&Released, TaskState, &Outcome)],
    now_ms: i64,
) -> Result<(), QueueError> {
    let backend = backend_of(tx);
    const COLUMNS: usize = 11;
    let mut rest = attempts;
    for size in power_of_two_chunks(attempts.len(), BATCH_ROWS) {
        let (chunk, after) = rest.split_at(size);
        rest = after;
        let sql = format!(
            "INSERT INTO task_attempts (id, task_id, attempt, worker_id, outcome, \
             started_at_ms, finished_at_ms, exit_code, stdout, stderr, error) VALUES {}",
            Params::new(backend).rows(chunk.len(), COLUMNS)
        );
        let mut query = sqlx::query(&sql);
        for (held, task_state, outcome) in chunk {
            query = query
                .bind(uuid::Uuid::new_v4().to_string())
                .bind(held.task_id.as_str())
                .bind(held.attempt)
                .bind(held.worker_id.as_str())
                .bind(task_state.as_str())
                .bind(held.started_at_ms.unwrap_or(0))
                .bind(now_ms)
                .bind(outcome.exit_code)
                .bind(capped(&outcome.stdout, OUTPUT_CAP_BYTES))
                .bind(capped(&outcome.stderr, OUTPUT_CAP_BYTES))
                .bind(outcome.error.as_deref());
        }
        query.execute(&mut **tx).await?;
    }
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
    release_successors(tx, &[(held.job_id.as_str(), held.number)]).await?;
    let step = transition::after_success(job_state, succeeded, total);
    take_job_step(tx, &held.job_id, job_state, step, String::new, now_ms).await
}

/// Writes the job's `step` (see [`transition`]) and returns its state after it;
/// `failure` is the job's error should it fail.
async fn take_job_step(
    tx: &mut Transaction<'static, Any>,
    job_id: &str,
    job_state: JobState,
    step: JobStep,
    failure: impl FnOnce() -> String,
    now_ms: i64,
) -> Result<JobState, QueueError> {
    match step {
        JobStep::Keep => Ok(job_state),
        JobStep::Succeed => {
            set_job_state(tx, job_id, JobState::Succeeded, None, now_ms).await?;
            Ok(JobState::Succeeded)
        }
        JobStep::Fail => {
            set_job_state(tx, job_id, JobState::Failed, Some(&failure()), now_ms).await?;
            // Not started, and not claimable until a retry makes them ready again.
            sqlx::query("UPDATE tasks SET state = 'pending' WHERE job_id = $1 AND state = 'ready'")
                .bind(job_id)
                .execute(&mut **tx)
                .await?;
            Ok(JobState::Failed)
        }
        JobStep::FinishCancelIfIdle => finish_cancel_if_idle(tx, job_id, now_ms).await,
    }
}

/// Takes the succeeded tasks `done` (job id, task number) off what their successors
/// wait on. A task whose last prerequisites these were becomes ready, or stays pending
/// if its job is stopped (it waits for a retry). A group (see the `task_groups`
/// migration) whose last members these were releases its waiting tasks the same way.
async fn release_successors(
    tx: &mut Transaction<'static, Any>,
    done: &[(&str, i64)],
) -> Result<(), QueueError> {
    let mut emptied_groups = Vec::new();
    for chunk in done.chunks(BATCH_ROWS) {
        count_down(tx, Successors::Tasks, chunk).await?;
        for row in count_down(tx, Successors::Groups, chunk).await? {
            let (job_id, group, pending): (String, i64, i64) = (
                row.try_get("job_id")?,
                row.try_get("number")?,
                row.try_get("pending_prereqs")?,
            );
            if pending == 0 {
                emptied_groups.push((job_id, group));
            }
        }
    }
    // Groups wait only on tasks, so their waiters are tasks: one level is all there is.
    let emptied: Vec<(&str, i64)> = emptied_groups
        .iter()
        .map(|(job_id, group)| (job_id.as_str(), *group))
        .collect();
    for chunk in emptied.chunks(BATCH_ROWS) {
        count_down(tx, Successors::Tasks, chunk).await?;
    }
    Ok(())
}

/// What [`count_down`] updates.
#[derive(Clone, Copy)]
enum Successors {
    Tasks,
    Groups,
}

/// Lowers the pending count of every successor in `which` of the prerequisites `done`
/// (at most [`BATCH_ROWS`]) by how many of them it waits on; groups are returned with
/// their new counts.
async fn count_down(
    tx: &mut Transaction<'static, Any>,
    which: Successors,
    done: &[(&str, i64)],
) -> Result<Vec<AnyRow>, QueueError> {
    // A successor may wait on several of `done`: it loses as many pending prerequisites.
    // Padding rows repeat the last one, which DISTINCT counts once.
    let freed = format!(
        "WITH done (job_id, prereq) AS (VALUES {}), \
         freed AS (SELECT d.job_id, d.task, COUNT(*) AS n \
           FROM (SELECT DISTINCT job_id, prereq FROM done) s \
           JOIN task_deps d ON d.job_id = s.job_id AND d.prereq = s.prereq \
           GROUP BY d.job_id, d.task) ",
        Params::new(backend_of(tx)).rows(padded_len(done.len()), 2)
    );
    let sql = match which {
        // Ready only if those were all it had left and its job still goes on.
        Successors::Tasks => format!(
            "{freed}UPDATE tasks SET pending_prereqs = pending_prereqs - freed.n, \
             state = CASE WHEN pending_prereqs = freed.n AND state = 'pending' \
               THEN (SELECT CASE WHEN j.state IN ('queued', 'running') THEN 'ready' \
                     ELSE 'pending' END FROM jobs j WHERE j.id = tasks.job_id) \
               ELSE state END \
             FROM freed WHERE tasks.job_id = freed.job_id AND tasks.number = freed.task"
        ),
        Successors::Groups => format!(
            "{freed}UPDATE task_groups SET pending_prereqs = pending_prereqs - freed.n \
             FROM freed \
             WHERE task_groups.job_id = freed.job_id AND task_groups.number = freed.task \
             RETURNING task_groups.job_id, task_groups.number, task_groups.pending_prereqs"
        ),
    };
    let mut query = sqlx::query(&sql);
    for index in 0..padded_len(done.len()) {
        let (job_id, number) = padded_item(done, index);
        query = query.bind(*job_id).bind(*number);
    }
    Ok(query.fetch_all(&mut **tx).await?)
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
    super::effects::apply(tx, job_id, state, now_ms).await?;
    // The hooks' deliveries of the job's end go in with it (lifecycle hooks).
    let event = match state {
        JobState::Succeeded => Some(api_types::HookEvent::JobSucceeded),
        JobState::Failed => Some(api_types::HookEvent::JobFailed),
        _ => None,
    };
    if let Some(event) = event {
        store::hooks::record_job_event(tx, job_id, event, now_ms).await?;
    }
    if state == JobState::Succeeded {
        // A replacement (healing's or a user's) is done once its job succeeded.
        store::hooks::record_node_replaced(tx, job_id, now_ms).await?;
    }
    Ok(())
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
