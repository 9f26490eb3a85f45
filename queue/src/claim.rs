//! Claiming ready tasks under a lease, one ([`Queue::claim`]) or a batch at a time
//! ([`Queue::claim_batch`]), and keeping the lease alive. Which ready tasks a batch takes when
//! several tenants and jobs wait is the fair policy of `fair.rs`; this module reads
//! the rows it decides on and writes the leases.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write as _;

use sqlx::any::AnyRow;
use sqlx::{Any, FromRow, Row, Transaction};

use super::fair;
use super::types::{PlanStep, Sharing};
use super::{
    begin_write, padded_item, padded_len, ClaimLimits, ClaimedTask, Heartbeat, JobState, Lease,
    Params, Queue, QueueError, WorkerScope,
};
use store::{Backend, IntFlag, RowLock, Store};

/// Namespace of the PostgreSQL advisory lock that serializes claims.
const CLAIM_LOCK_KEY: i64 = 0x636f_7272_616c_0001;

/// The condition on a waiting job `j` of a shared pool: its tenant is not served by
/// dedicated workers only.
const SHARED_TENANTS: &str =
    "j.tenant_id NOT IN (SELECT id FROM tenants WHERE dedicated_workers = 1)";

impl Queue {
    /// Hands `worker_id` (a shared pool's worker: see [`WorkerScope`]) the ready task the
    /// fair policy (`fair.rs`) gives the next slot to, leased until `now_ms + lease_ms`, or
    /// `None` if there is none: a [`Queue::claim_batch`] of one.
    ///
    /// A task qualifies when all its prerequisites succeeded, its backoff has passed,
    /// its job is active, no task runs on its node, and neither the global nor its
    /// tenant's running count is at its limit.
    pub async fn claim(
        &self,
        worker_id: &str,
        lease_ms: i64,
        limits: ClaimLimits,
        now_ms: i64,
    ) -> Result<Option<ClaimedTask>, QueueError> {
        let mut claimed = self
            .claim_up_to_in(
                worker_id,
                lease_ms,
                limits,
                &WorkerScope::Shared,
                || 1,
                now_ms,
            )
            .await?;
        Ok(claimed.pop())
    }

    /// Up to `max` ready tasks for `worker_id` in one transaction, leased until
    /// `now_ms + lease_ms`: the tasks `max` calls of [`Queue::claim`] would hand out one by
    /// one, by the same rules, in the same order.
    ///
    /// One transaction instead of `max` is what makes a busy queue fast: the claim lock
    /// and the commit are paid once per batch. The rules are checked against the running
    /// counts read at the start plus the tasks this batch takes, which is exact because
    /// claims are serialized (see the module docs).
    pub async fn claim_batch(
        &self,
        worker_id: &str,
        lease_ms: i64,
        limits: ClaimLimits,
        max: usize,
        now_ms: i64,
    ) -> Result<Vec<ClaimedTask>, QueueError> {
        if max == 0 {
            return Ok(Vec::new());
        }
        self.claim_up_to(worker_id, lease_ms, limits, || max, now_ms)
            .await
    }

    /// [`Queue::claim_batch`] for as many tasks as `room` says once this claim's turn has come
    /// (the write turn on SQLite, the claim lock on PostgreSQL): a worker passes its free
    /// slots, and the slots its tasks freed while the claim waited for its turn count too.
    /// On a busy SQLite queue, where claims and completions take turns, that doubles the
    /// size of a batch.
    pub async fn claim_up_to(
        &self,
        worker_id: &str,
        lease_ms: i64,
        limits: ClaimLimits,
        room: impl FnOnce() -> usize,
        now_ms: i64,
    ) -> Result<Vec<ClaimedTask>, QueueError> {
        self.claim_up_to_in(
            worker_id,
            lease_ms,
            limits,
            &WorkerScope::Shared,
            room,
            now_ms,
        )
        .await
    }

    /// [`Queue::claim_up_to`] for a pool whose `scope` may be narrower than a shared pool's.
    pub async fn claim_up_to_in(
        &self,
        worker_id: &str,
        lease_ms: i64,
        limits: ClaimLimits,
        scope: &WorkerScope,
        room: impl FnOnce() -> usize,
        now_ms: i64,
    ) -> Result<Vec<ClaimedTask>, QueueError> {
        let (_turn, mut tx) = begin_write(&self.store).await?;
        if self.store.backend() == Backend::Postgres {
            take_claim_lock(&mut tx).await?;
        }
        let max = room();
        if max == 0 {
            tx.commit().await?;
            return Ok(Vec::new());
        }
        let picked = pick(&self.store, &mut tx, limits, scope, max, now_ms).await?;
        if picked.is_empty() {
            tx.commit().await?;
            return Ok(Vec::new());
        }

        // The picked rows are still ready: PostgreSQL's row locks (taken by `pick`) and
        // SQLite's write lock keep everyone else off them. (Checking `state` again would
        // tempt PostgreSQL into reading the whole `tasks_ready_job` index.)
        let mut params = Params::new(self.store.backend());
        let sql = format!(
            "UPDATE tasks SET state = 'running', lease_owner = {}, lease_expires_ms = {} + {}, \
             attempts = attempts + 1, tries = tries + 1, started_at_ms = {}, finished_at_ms = NULL \
             WHERE id IN ({}) RETURNING id, job_id, tenant_id, cluster_id, number, node, service, \
             action, attempts, idempotent, lease_expires_ms",
            params.one(),
            params.one(),
            params.one(),
            params.one(),
            params.list(padded_len(picked.len())),
        );
        // Stamped after the claim lock is held, as in `claim`: later than the end stamped
        // by the attempt that freed each node before.
        let started_ms = now_ms.max(store::now_ms());
        let mut query = sqlx::query(&sql)
            .bind(worker_id)
            .bind(now_ms)
            .bind(lease_ms)
            .bind(started_ms);
        for index in 0..padded_len(picked.len()) {
            query = query.bind(padded_item(&picked, index).id.as_str());
        }
        let rows = query.fetch_all(&mut *tx).await?;
        tx.commit().await?;

        // RETURNING has no order: put the tasks back in claim order.
        let order: HashMap<&str, usize> = picked
            .iter()
            .enumerate()
            .map(|(index, candidate)| (candidate.id.as_str(), index))
            .collect();
        let mut claimed = Vec::with_capacity(rows.len());
        for row in &rows {
            let task = claimed_task(row, worker_id)?;
            let index = order
                .get(task.task_id.as_str())
                .copied()
                .unwrap_or(usize::MAX);
            claimed.push((index, task));
        }
        claimed.sort_by_key(|(index, _)| *index);

        // Outside the claim transaction: locking the job row there could wait in a cycle
        // with a cancel that holds the job and waits for a task row this claim locked.
        let queued: Vec<&str> = picked
            .iter()
            .filter(|candidate| candidate.job_state == JobState::Queued)
            .map(|candidate| candidate.job_id.as_str())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if !queued.is_empty() {
            let mut params = Params::new(self.store.backend());
            let sql = format!(
                "UPDATE jobs SET state = 'running', started_at_ms = {} \
                 WHERE state = 'queued' AND id IN ({}) RETURNING id",
                params.one(),
                params.list(padded_len(queued.len())),
            );
            let mut query = sqlx::query_scalar::<_, String>(&sql).bind(now_ms);
            for index in 0..padded_len(queued.len()) {
                query = query.bind(*padded_item(&queued, index));
            }
            // With the hooks' deliveries of each job's start, in one transaction: a job
            // that started has its `job.started` stored (once: only the claim that moved it
            // from queued gets its id back).
            drop(_turn);
            let (_turn, mut tx) = begin_write(&self.store).await?;
            let started = query.fetch_all(&mut *tx).await?;
            for job_id in &started {
                store::hooks::record_job_event(
                    &mut tx,
                    job_id,
                    api_types::HookEvent::JobStarted,
                    now_ms,
                )
                .await?;
            }
            tx.commit().await?;
        }
        Ok(claimed.into_iter().map(|(_, task)| task).collect())
    }
}

/// A ready task the batch may take.
#[derive(sqlx::FromRow)]
struct Candidate {
    id: String,
    job_id: String,
    job_state: JobState,
    tenant_id: String,
    cluster_id: String,
    node: i64,
    not_before_ms: i64,
    number: i64,
}

/// A row of [`tally`]: a job's running tasks, or a job waiting with ready tasks.
#[derive(sqlx::FromRow)]
struct TallyRow {
    /// Set for a waiting job (`value` is when it was created); clear for running
    /// tasks (`value` counts them).
    waiting: IntFlag,
    tenant_id: String,
    job_id: String,
    value: i64,
}

/// Chooses the batch inside the claim transaction: reads what runs (per tenant and
/// job), the active jobs with ready tasks, and the oldest ready tasks on free nodes of
/// each job about as many as its share of the batch ([`fair::read_plan`]), then lets
/// [`fair::choose`] share the room among them; reads more once if that left the batch
/// short ([`fair::reread_plan`]).
///
/// A window per job, not one window of the oldest tasks overall: that one would hold
/// only a big job's tasks while a small job submitted after it waits.
async fn pick(
    store: &Store,
    tx: &mut Transaction<'static, Any>,
    limits: ClaimLimits,
    scope: &WorkerScope,
    max: usize,
    now_ms: i64,
) -> Result<Vec<Candidate>, QueueError> {
    let (max_running, per_tenant) = limits.as_counts();
    let tally = tally(store, tx, scope, now_ms).await?;
    let mut running = fair::Running::default();
    let mut waiting = Vec::new();
    for row in &tally {
        if bool::from(row.waiting) {
            waiting.push(row);
        } else {
            running.add(&row.tenant_id, &row.job_id, row.value);
        }
    }
    let room = usize::try_from(max_running.saturating_sub(running.total()).max(0))
        .unwrap_or(usize::MAX)
        .min(max);
    if room == 0 || waiting.is_empty() {
        return Ok(Vec::new());
    }
    // Jobs of tenants at their limit get no share, so they are not read.
    let jobs: Vec<fair::WaitingJob> = waiting
        .iter()
        .map(|row| fair::WaitingJob {
            tenant: &row.tenant_id,
            job: &row.job_id,
            created_ms: row.value,
        })
        .collect();
    let created: HashMap<&str, i64> = jobs.iter().map(|job| (job.job, job.created_ms)).collect();
    let windows = |plan: &[(usize, usize)]| -> Vec<(&str, usize)> {
        plan.iter()
            .map(|(index, rows)| (jobs[*index].job, *rows))
            .collect()
    };

    let first = fair::read_plan(&jobs, &running, per_tenant, room);
    let mut candidates = ready_tasks(store, tx, &windows(&first), now_ms).await?;
    // The batch of the tasks read so far, by the fair policy.
    let batch_of = |candidates: &mut [Candidate]| {
        choose(
            candidates,
            &created,
            &running,
            per_tenant,
            limits.sharing,
            room,
        )
    };
    let mut chosen = batch_of(&mut candidates);
    if chosen.len() < room {
        // A job had fewer ready tasks than its share: read more of the jobs that may
        // have more, and choose again among all.
        let index_of: HashMap<&str, usize> = jobs
            .iter()
            .enumerate()
            .map(|(index, job)| (job.job, index))
            .collect();
        let mut first_rows = vec![0; jobs.len()];
        for (index, rows) in &first {
            first_rows[*index] = *rows;
        }
        let mut returned = vec![0; jobs.len()];
        for candidate in &candidates {
            if let Some(index) = index_of.get(candidate.job_id.as_str()) {
                returned[*index] += 1;
            }
        }
        let again = fair::reread_plan(
            &jobs,
            &running,
            per_tenant,
            &first_rows,
            &returned,
            room - chosen.len(),
        );
        if !again.is_empty() {
            let more = ready_tasks(store, tx, &windows(&again), now_ms).await?;
            let seen: HashSet<String> = candidates.iter().map(|c| c.id.clone()).collect();
            candidates.extend(more.into_iter().filter(|c| !seen.contains(&c.id)));
            chosen = batch_of(&mut candidates);
        }
    }
    let mut candidates: Vec<Option<Candidate>> = candidates.into_iter().map(Some).collect();
    Ok(chosen
        .into_iter()
        .filter_map(|index| candidates.get_mut(index).and_then(Option::take))
        .collect())
}

/// [`fair::choose`] over the tasks read (indexes into `candidates`, which it puts in
/// claim order), with each job's creation from `created`.
fn choose(
    candidates: &mut [Candidate],
    created: &HashMap<&str, i64>,
    running: &fair::Running,
    per_tenant: i64,
    sharing: Sharing,
    room: usize,
) -> Vec<usize> {
    // Each job's tasks in claim order (the order of a compound query's rows is not
    // promised); sorting all by the same key keeps every job's own order.
    candidates.sort_by_key(|candidate| (candidate.not_before_ms, candidate.number));
    let ready: Vec<fair::Ready> = candidates
        .iter()
        .map(|candidate| fair::Ready {
            tenant: &candidate.tenant_id,
            job: &candidate.job_id,
            job_created_ms: created
                .get(candidate.job_id.as_str())
                .copied()
                .unwrap_or(i64::MAX),
            cluster: &candidate.cluster_id,
            node: candidate.node,
        })
        .collect();
    fair::choose(&ready, running, per_tenant, sharing, room)
}

/// What a claim starts from, in one statement (a round trip less per claim): the
/// running tasks of each tenant and job, and the active jobs with ready tasks past
/// their backoff that `scope` serves.
async fn tally(
    store: &Store,
    tx: &mut Transaction<'static, Any>,
    scope: &WorkerScope,
    now_ms: i64,
) -> Result<Vec<TallyRow>, QueueError> {
    let mut params = Params::new(store.backend());
    let mut sql = format!(
        "SELECT CAST(0 AS BIGINT) AS waiting, tenant_id, job_id, COUNT(*) AS value \
         FROM tasks WHERE state = 'running' GROUP BY tenant_id, job_id \
         UNION ALL \
         SELECT CAST(1 AS BIGINT), j.tenant_id, j.id, j.created_at_ms FROM jobs j \
         WHERE j.state IN ('queued', 'running') \
           AND EXISTS (SELECT 1 FROM tasks t WHERE t.job_id = j.id AND t.state = 'ready' \
                       AND t.not_before_ms <= {})",
        params.one()
    );
    let served: &[String] = match scope {
        WorkerScope::Shared => {
            let _ = write!(sql, " AND {SHARED_TENANTS}");
            &[]
        }
        WorkerScope::Tenants(tenants) => {
            let _ = write!(
                sql,
                " AND j.tenant_id IN ({})",
                params.list(padded_len(tenants.len().max(1)))
            );
            tenants
        }
    };
    let mut query = sqlx::query_as::<_, TallyRow>(&sql).bind(now_ms);
    if let WorkerScope::Tenants(_) = scope {
        if served.is_empty() {
            // No tenant: a list matching nothing (no tenant id is empty).
            query = query.bind("");
        } else {
            for index in 0..padded_len(served.len()) {
                query = query.bind(padded_item(served, index).as_str());
            }
        }
    }
    Ok(query.fetch_all(&mut **tx).await?)
}

/// Up to `rows` ready tasks of each `(job, rows)`, oldest first, on nodes where nothing
/// runs, each job's read walking `tasks_ready_job` in order and stopping after its
/// rows. The list of jobs is padded to a power of two (few statement shapes) with the
/// empty job id, which matches nothing.
///
/// PostgreSQL reads the jobs as one lateral join over a `VALUES` list: one plan whose
/// inner scan restarts per job. SQLite has no lateral joins: it reads one `UNION ALL`
/// branch per job, which costs it little (on PostgreSQL each branch is a plan of its
/// own to start: with ten jobs the read took twice as long as one window of the
/// oldest tasks overall).
async fn ready_tasks(
    store: &Store,
    tx: &mut Transaction<'static, Any>,
    jobs: &[(&str, usize)],
    now_ms: i64,
) -> Result<Vec<Candidate>, QueueError> {
    if jobs.is_empty() {
        return Ok(Vec::new());
    }
    // Locked rows (a cancel or a completion holds them) are skipped, never waited for,
    // so a claim never waits while holding the claim lock.
    let lock_rows = store.backend().lock_clause(RowLock::SkipLockedOfT);
    let ready_of = |job: &str, now: &str, rows: &str| {
        format!(
            "SELECT t.id, t.job_id, j.state AS job_state, t.tenant_id, t.cluster_id, t.node, \
             t.not_before_ms, t.number \
             FROM tasks t JOIN jobs j ON j.id = t.job_id \
             WHERE t.job_id = {job} AND t.state = 'ready' AND t.not_before_ms <= {now} \
               AND j.state IN ('queued', 'running') \
               AND NOT EXISTS (SELECT 1 FROM tasks r WHERE r.state = 'running' \
                               AND r.cluster_id = t.cluster_id AND r.node = t.node) \
             ORDER BY t.not_before_ms, t.number LIMIT {rows}{lock_rows}"
        )
    };
    let padded = padded_len(jobs.len());
    let window = |index: usize| {
        let (job, rows) = jobs.get(index).copied().unwrap_or(("", 0));
        (job, i64::try_from(rows).unwrap_or(i64::MAX))
    };
    let mut params = Params::new(store.backend());
    let rows = match store.backend() {
        Backend::Postgres => {
            let windows = (0..padded)
                .map(|_| {
                    format!(
                        "(CAST({} AS TEXT), CAST({} AS BIGINT))",
                        params.one(),
                        params.one()
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            let sql = format!(
                "SELECT ready.* FROM (VALUES {windows}) AS w (job_id, rows) \
                 CROSS JOIN LATERAL ({}) AS ready",
                ready_of("w.job_id", &params.one(), "w.rows")
            );
            let mut query = sqlx::query_as::<_, Candidate>(&sql);
            for index in 0..padded {
                let (job, rows) = window(index);
                query = query.bind(job).bind(rows);
            }
            query.bind(now_ms).fetch_all(&mut **tx).await?
        }
        Backend::Sqlite => {
            let sql = (0..padded)
                .map(|_| {
                    let (job, now, rows) = (params.one(), params.one(), params.one());
                    format!("SELECT * FROM ({}) AS ready", ready_of(&job, &now, &rows))
                })
                .collect::<Vec<_>>()
                .join(" UNION ALL ");
            let mut query = sqlx::query_as::<_, Candidate>(&sql);
            for index in 0..padded {
                let (job, rows) = window(index);
                query = query.bind(job).bind(now_ms).bind(rows);
            }
            query.fetch_all(&mut **tx).await?
        }
    };
    Ok(rows)
}

/// Claims take turns so the running counts they check are exact; completions and
/// heartbeats do not take this lock.
///
/// The same statement steers the planner for the rest of the transaction, because
/// the statistics on `tasks` are often missing or stale (a fresh database, or a big
/// job just submitted into a table of finished tasks), and the plans PostgreSQL then
/// prefers cost tens of milliseconds a claim and grow with every task run:
/// - no sorting: the claim must walk each job's part of `tasks_ready_job` in index
///   order and stop after a few rows, not fetch every ready task and sort them all;
/// - no bitmap scans: the partial indexes on `running` and `ready` keep entries of
///   rows that have moved on until a vacuum; a plain index scan marks them dead as it
///   passes so the next claim skips them, a bitmap scan visits them all every time.
async fn take_claim_lock(tx: &mut Transaction<'static, Any>) -> Result<(), QueueError> {
    sqlx::query_scalar::<_, i64>(
        "SELECT COUNT(*) FROM (SELECT pg_advisory_xact_lock($1), \
         set_config('enable_sort', 'off', true), \
         set_config('enable_bitmapscan', 'off', true)) AS claim_lock",
    )
    .bind(CLAIM_LOCK_KEY)
    .fetch_one(&mut **tx)
    .await?;
    Ok(())
}

/// A task row a claim just leased to `worker_id` (`RETURNING` its columns).
fn claimed_task(row: &AnyRow, worker_id: &str) -> Result<ClaimedTask, sqlx::Error> {
    let step = PlanStep::from_row(row)?;
    Ok(ClaimedTask {
        task_id: row.try_get("id")?,
        job_id: row.try_get("job_id")?,
        tenant_id: row.try_get("tenant_id")?,
        cluster_id: row.try_get("cluster_id")?,
        number: step.number,
        node: step.node,
        service: step.service,
        action: step.action,
        attempt: row.try_get("attempts")?,
        idempotent: row.try_get::<IntFlag, _>("idempotent")?.into(),
        worker_id: worker_id.to_owned(),
        lease_expires_ms: row.try_get("lease_expires_ms")?,
    })
}

impl Queue {
    /// Extends the lease to `now_ms + lease_ms`; tells the worker to stop if the job is
    /// being cancelled. Fails with [`QueueError::LeaseLost`] if the lease is gone. A
    /// lease past its expiry still counts until [`Queue::requeue_expired`] takes it back.
    pub async fn heartbeat(
        &self,
        lease: &Lease,
        lease_ms: i64,
        now_ms: i64,
    ) -> Result<Heartbeat, QueueError> {
        let expires = now_ms.saturating_add(lease_ms);
        let turn = self.store.write_turn().await;
        // Run to its end (`execute`), never `UPDATE ... RETURNING` read with
        // `fetch_optional`: SQLite commits a statement that returned a row only when it is
        // reset, and sqlx does not report a commit that fails there, so with the disk full
        // such a beat "renewed" a lease it never wrote and the worker never fenced its step.
        let renewed = sqlx::query(
            "UPDATE tasks SET lease_expires_ms = $4 WHERE id = $1 AND lease_owner = $2 \
             AND attempts = $3 AND state = 'running'",
        )
        .bind(lease.task_id.as_str())
        .bind(&lease.worker_id)
        .bind(lease.attempt)
        .bind(expires)
        .execute(self.store.pool())
        .await?
        .rows_affected();
        drop(turn);
        if renewed == 0 {
            return Err(lease_lost(lease));
        }
        let state: JobState = sqlx::query_scalar(
            "SELECT jobs.state FROM tasks JOIN jobs ON jobs.id = tasks.job_id WHERE tasks.id = $1",
        )
        .bind(lease.task_id.as_str())
        .fetch_one(self.store.pool())
        .await?;
        Ok(match state {
            JobState::Cancelling | JobState::Cancelled => Heartbeat::Stop {
                lease_expires_ms: expires,
            },
            _ => Heartbeat::Continue {
                lease_expires_ms: expires,
            },
        })
    }
}

pub(super) fn lease_lost(lease: &Lease) -> QueueError {
    QueueError::LeaseLost {
        task_id: lease.task_id.clone(),
        worker_id: lease.worker_id.clone(),
        attempt: lease.attempt,
    }
}
