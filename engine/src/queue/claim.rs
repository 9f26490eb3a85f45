//! Claiming a ready task under a lease, and keeping the lease alive.

use domain::plan::TaskId;
use sqlx::Row;

use super::types::{parse_action, parse_service, to_u32};
use super::{begin_write, ClaimLimits, ClaimedTask, Heartbeat, JobState, Lease, QueueError};
use crate::store::{Backend, Store};

/// Namespace of the PostgreSQL advisory lock that serializes claims.
const CLAIM_LOCK_KEY: i64 = 0x636f_7272_616c_0001;

/// Hands `worker_id` the oldest ready task it may run now, leased until
/// `now_ms + lease_ms`, or `None` if there is none.
///
/// A task qualifies when all its prerequisites succeeded, its backoff has passed,
/// its job is active, no task runs on its node, and neither the global nor its
/// tenant's running count is at its limit.
pub async fn claim(
    store: &Store,
    worker_id: &str,
    lease_ms: i64,
    limits: ClaimLimits,
    now_ms: i64,
) -> Result<Option<ClaimedTask>, QueueError> {
    let unlimited = i64::MAX;
    let max_running = limits.max_running.map_or(unlimited, i64::from);
    let per_tenant = limits.max_running_per_tenant.map_or(unlimited, i64::from);
    let lock_rows = match store.backend() {
        Backend::Sqlite => "",
        Backend::Postgres => " FOR UPDATE OF t SKIP LOCKED",
    };
    let sql = format!(
        "UPDATE tasks SET state = 'running', lease_owner = $1, lease_expires_ms = $2 + $3, \
         attempts = attempts + 1, tries = tries + 1, started_at_ms = $6, finished_at_ms = NULL \
         WHERE id = ( \
           SELECT t.id FROM tasks t JOIN jobs j ON j.id = t.job_id \
           WHERE t.state = 'ready' AND t.not_before_ms <= $2 \
             AND j.state IN ('queued', 'running') \
             AND NOT EXISTS (SELECT 1 FROM tasks r WHERE r.state = 'running' \
                             AND r.cluster_id = t.cluster_id AND r.node = t.node) \
             AND t.tenant_id NOT IN (SELECT r.tenant_id FROM tasks r WHERE r.state = 'running' \
                                     GROUP BY r.tenant_id HAVING COUNT(*) >= $4) \
             AND (SELECT COUNT(*) FROM tasks r WHERE r.state = 'running') < $5 \
           ORDER BY t.not_before_ms, t.number LIMIT 1{lock_rows}) \
         RETURNING id, job_id, tenant_id, cluster_id, number, node, service, action, attempts, \
           idempotent, lease_expires_ms, (SELECT state FROM jobs WHERE jobs.id = tasks.job_id) AS job_state"
    );

    let mut tx = begin_write(store).await?;
    if store.backend() == Backend::Postgres {
        // Claims take turns so the running counts they check are exact; completions
        // and heartbeats do not take this lock.
        sqlx::query_scalar::<_, i64>(
            "SELECT COUNT(*) FROM (SELECT pg_advisory_xact_lock($1)) AS claim_lock",
        )
        .bind(CLAIM_LOCK_KEY)
        .fetch_one(&mut *tx)
        .await?;
    }
    // The start is stamped after the claim lock is held, so it is later than the end
    // stamped by whichever attempt released the node before: the attempt log then
    // orders attempts on a node as the lock did (never seemingly overlapping).
    let started_ms = now_ms.max(crate::store::now_ms());
    let row = sqlx::query(&sql)
        .bind(worker_id)
        .bind(now_ms)
        .bind(lease_ms)
        .bind(per_tenant)
        .bind(max_running)
        .bind(started_ms)
        .fetch_optional(&mut *tx)
        .await?;
    tx.commit().await?;
    let Some(row) = row else {
        return Ok(None);
    };

    let claimed = ClaimedTask {
        task_id: row.try_get("id")?,
        job_id: row.try_get("job_id")?,
        tenant_id: row.try_get("tenant_id")?,
        cluster_id: row.try_get("cluster_id")?,
        number: TaskId(to_u32("task number", row.try_get("number")?)?),
        node: to_u32("node number", row.try_get("node")?)?,
        service: parse_service(row.try_get("service")?)?,
        action: parse_action(&row.try_get::<String, _>("action")?)?,
        attempt: row.try_get("attempts")?,
        idempotent: row.try_get::<i64, _>("idempotent")? != 0,
        worker_id: worker_id.to_owned(),
        lease_expires_ms: row.try_get("lease_expires_ms")?,
    };
    if row.try_get::<String, _>("job_state")? != JobState::Queued.as_str() {
        return Ok(Some(claimed));
    }
    // Outside the claim transaction: locking the job row there could wait in a
    // cycle with a cancel that holds the job and waits for this task row.
    sqlx::query(
        "UPDATE jobs SET state = 'running', started_at_ms = $2 WHERE id = $1 AND state = 'queued'",
    )
    .bind(&claimed.job_id)
    .bind(now_ms)
    .execute(store.pool())
    .await?;
    Ok(Some(claimed))
}

/// Extends the lease to `now_ms + lease_ms`; tells the worker to stop if the job is
/// being cancelled. Fails with [`QueueError::LeaseLost`] if the lease is gone. A
/// lease past its expiry still counts until [`super::requeue_expired`] takes it back.
pub async fn heartbeat(
    store: &Store,
    lease: &Lease,
    lease_ms: i64,
    now_ms: i64,
) -> Result<Heartbeat, QueueError> {
    let expires = now_ms.saturating_add(lease_ms);
    let job_id: Option<String> = sqlx::query_scalar(
        "UPDATE tasks SET lease_expires_ms = $4 WHERE id = $1 AND lease_owner = $2 \
         AND attempts = $3 AND state = 'running' RETURNING job_id",
    )
    .bind(&lease.task_id)
    .bind(&lease.worker_id)
    .bind(lease.attempt)
    .bind(expires)
    .fetch_optional(store.pool())
    .await?;
    let job_id = job_id.ok_or_else(|| lease_lost(lease))?;
    let state: String = sqlx::query_scalar("SELECT state FROM jobs WHERE id = $1")
        .bind(&job_id)
        .fetch_one(store.pool())
        .await?;
    Ok(match JobState::parse(&state)? {
        JobState::Cancelling | JobState::Cancelled => Heartbeat::Stop {
            lease_expires_ms: expires,
        },
        _ => Heartbeat::Continue {
            lease_expires_ms: expires,
        },
    })
}

pub(super) fn lease_lost(lease: &Lease) -> QueueError {
    QueueError::LeaseLost {
        task_id: lease.task_id.clone(),
        worker_id: lease.worker_id.clone(),
        attempt: lease.attempt,
    }
}
