//! Lifecycle hooks, their deliveries and each delivery's attempts (see
//! the engine's `hooks` for what they are for and how they are sent).
//!
//! A hook's secret is sealed with the server's secret key, bound to the hook's id;
//! [`Hook`] does not carry it and only [`Store::hook_secret`] opens it, for signing.
//! Deliveries of a job's events are written by [`record_job_event`] inside the queue's
//! transaction that moves the job, so an event is never lost between the job's change
//! and its delivery; so are a replacement's `node.replaced` ([`record_node_replaced`]),
//! and `health.down` / `health.up` are written with the check that changed
//! ([`record_health_change`]). Delivery loops take a due delivery with one conditional `UPDATE`
//! ([`Store::claim_delivery`]), so two processes never send one delivery at once.

use std::collections::BTreeMap;

use api_types::{
    DeliveryState, GateFailurePolicy, GateOperation, HookApproval, HookCluster, HookEvent,
    HookEventBody, HookFailedStep, HookFormat, HookHealth, HookJob, HookLease, HookLinks, HookNode,
    HookReplacement, HookTenant, JobState, LeaseWarning, Operation, HOOK_SCHEMA_VERSION,
};
use domain::layout::Layout;
use sqlx::{Any, Row, Transaction};

use super::{Listing, Store, StoreError, Window};
use crate::found::OrNotFound;

/// A registered hook, without its secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hook {
    pub id: String,
    pub tenant_id: String,
    pub url: String,
    pub events: Vec<HookEvent>,
    pub gates: Vec<GateOperation>,
    pub format: HookFormat,
    pub timeout_ms: i64,
    pub on_failure: GateFailurePolicy,
    pub created_by: Option<String>,
    pub created_at_ms: i64,
}

#[derive(sqlx::FromRow)]
struct HookRow {
    id: String,
    tenant_id: String,
    url: String,
    events: String,
    gates: String,
    format: HookFormat,
    timeout_ms: i64,
    on_failure: GateFailurePolicy,
    created_by: Option<String>,
    created_at_ms: i64,
}

const HOOK_COLUMNS: &str =
    "id, tenant_id, url, events, gates, format, timeout_ms, on_failure, created_by, created_at_ms";

fn corrupt(reason: String) -> StoreError {
    StoreError::CorruptRow {
        table: "hooks",
        reason,
    }
}

impl TryFrom<HookRow> for Hook {
    type Error = StoreError;

    fn try_from(row: HookRow) -> Result<Self, StoreError> {
        let events = serde_json::from_str(&row.events)
            .map_err(|error| corrupt(format!("events of hook {}: {error}", row.id)))?;
        let gates = serde_json::from_str(&row.gates)
            .map_err(|error| corrupt(format!("gates of hook {}: {error}", row.id)))?;
        Ok(Hook {
            id: row.id,
            tenant_id: row.tenant_id,
            url: row.url,
            events,
            gates,
            format: row.format,
            timeout_ms: row.timeout_ms,
            on_failure: row.on_failure,
            created_by: row.created_by,
            created_at_ms: row.created_at_ms,
        })
    }
}

fn hooks_of(rows: Vec<HookRow>) -> Result<Vec<Hook>, StoreError> {
    rows.into_iter().map(Hook::try_from).collect()
}

/// What a hook's sealed secret is bound to: it opens in its own row only.
fn secret_context(hook_id: &str) -> String {
    format!("hooks.secret:{hook_id}")
}

/// A delivery as its log shows it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Delivery {
    pub id: String,
    pub hook_id: String,
    pub tenant_id: String,
    pub event: String,
    pub event_id: String,
    pub state: DeliveryState,
    pub attempts: i64,
    pub next_attempt_ms: i64,
    pub created_at_ms: i64,
    pub delivered_at_ms: Option<i64>,
}

const DELIVERY_COLUMNS: &str = "id, hook_id, tenant_id, event, event_id, state, attempts, \
                                next_attempt_ms, created_at_ms, delivered_at_ms";

/// One try at sending a delivery.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct DeliveryAttempt {
    pub delivery_id: String,
    pub attempt: i64,
    pub at_ms: i64,
    pub status: Option<i64>,
    pub error: Option<String>,
    pub response_excerpt: String,
    pub elapsed_ms: i64,
}

/// A delivery a loop has claimed: what it sends, and where.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ClaimedDelivery {
    pub id: String,
    pub hook_id: String,
    pub url: String,
    pub format: HookFormat,
    pub timeout_ms: i64,
    pub body: String,
    /// This attempt's number (1 for the first).
    #[sqlx(rename = "attempts")]
    pub attempt: i64,
    pub created_at_ms: i64,
}

/// How an attempt ended, and what becomes of the delivery.
#[derive(Debug, Clone)]
pub struct AttemptRecord {
    pub status: Option<u16>,
    pub error: Option<String>,
    pub response_excerpt: String,
    pub elapsed_ms: i64,
    /// `Delivered`, `Failed` (given up), or `Pending` again at `retry_at_ms`.
    pub next_state: DeliveryState,
    pub retry_at_ms: i64,
}

impl Store {
    /// Registers `hook` with its signing secret, sealed with the server's secret key.
    pub async fn insert_hook(&self, hook: &Hook, secret: &str) -> Result<(), StoreError> {
        let sealed = self.secret_key()?.seal(secret, &secret_context(&hook.id))?;
        let events = serde_json::to_string(&hook.events)
            .map_err(|error| corrupt(format!("events: {error}")))?;
        let gates = serde_json::to_string(&hook.gates)
            .map_err(|error| corrupt(format!("gates: {error}")))?;
        let _turn = self.write_turn().await;
        sqlx::query(
            "INSERT INTO hooks (id, tenant_id, url, events, gates, format, secret, timeout_ms, \
             on_failure, created_by, created_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
        .bind(&hook.id)
        .bind(&hook.tenant_id)
        .bind(&hook.url)
        .bind(events)
        .bind(gates)
        .bind(hook.format.as_str())
        .bind(sealed)
        .bind(hook.timeout_ms)
        .bind(hook.on_failure.as_str())
        .bind(&hook.created_by)
        .bind(hook.created_at_ms)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub async fn hook(&self, id: &str) -> Result<Hook, StoreError> {
        let row: HookRow =
            sqlx::query_as(&format!("SELECT {HOOK_COLUMNS} FROM hooks WHERE id = $1"))
                .bind(id)
                .fetch_optional(&self.pool)
                .await?
                .or_not_found(|| format!("hook {id:?}"))?;
        row.try_into()
    }

    /// The hook's signing secret: for signing, never for showing.
    pub async fn hook_secret(&self, id: &str) -> Result<String, StoreError> {
        let stored = sqlx::query_scalar::<_, String>("SELECT secret FROM hooks WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .or_not_found(|| format!("hook {id:?}"))?;
        Ok(self.secret_key()?.open(&stored, &secret_context(id))?)
    }

    /// One window of the hooks, oldest first: the tenant's, or every tenant's (`None`).
    pub async fn hooks_window(
        &self,
        tenant_id: Option<&str>,
        window: Window,
    ) -> Result<(Vec<Hook>, u64), StoreError> {
        let listing = match tenant_id {
            Some(tenant_id) => Listing {
                columns: HOOK_COLUMNS,
                from: "hooks WHERE tenant_id = $1",
                order: "created_at_ms, id",
                params: &[tenant_id],
            },
            None => Listing {
                columns: HOOK_COLUMNS,
                from: "hooks",
                order: "tenant_id, created_at_ms, id",
                params: &[],
            },
        };
        let (rows, total) = self.windowed::<HookRow>(&listing, window).await?;
        Ok((hooks_of(rows)?, total))
    }

    /// The tenant's gate hooks for `operation`, oldest first.
    pub async fn gate_hooks(
        &self,
        tenant_id: &str,
        operation: GateOperation,
    ) -> Result<Vec<Hook>, StoreError> {
        let rows: Vec<HookRow> = sqlx::query_as(&format!(
            "SELECT {HOOK_COLUMNS} FROM hooks WHERE tenant_id = $1 AND gates <> '[]' \
             ORDER BY created_at_ms, id"
        ))
        .bind(tenant_id)
        .fetch_all(&self.pool)
        .await?;
        Ok(hooks_of(rows)?
            .into_iter()
            .filter(|hook| hook.gates.contains(&operation))
            .collect())
    }

    /// Removes the hook and its deliveries; `false` when there was none.
    pub async fn delete_hook(&self, id: &str) -> Result<bool, StoreError> {
        let (_turn, mut tx) = self.begin_write().await?;
        // Deliveries (and their attempts) first: SQLite enforces the cascade only with
        // foreign keys on, which every connection sets, but being explicit costs nothing.
        sqlx::query(
            "DELETE FROM hook_attempts WHERE delivery_id IN \
             (SELECT id FROM hook_deliveries WHERE hook_id = $1)",
        )
        .bind(id)
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM hook_deliveries WHERE hook_id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        let done = sqlx::query("DELETE FROM hooks WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(done.rows_affected() > 0)
    }

    /// Queues a delivery of `body` (an event body) to `hook`, due now; returns its id.
    pub async fn insert_delivery(
        &self,
        hook: &Hook,
        event: HookEvent,
        event_id: &str,
        body: &str,
        now_ms: i64,
    ) -> Result<String, StoreError> {
        let id = uuid::Uuid::new_v4().to_string();
        let (_turn, mut tx) = self.begin_write().await?;
        insert_delivery_in(
            &mut tx,
            &id,
            &hook.id,
            &hook.tenant_id,
            event,
            event_id,
            body,
            now_ms,
        )
        .await?;
        tx.commit().await?;
        Ok(id)
    }

    pub async fn delivery(&self, id: &str) -> Result<Delivery, StoreError> {
        sqlx::query_as(&format!(
            "SELECT {DELIVERY_COLUMNS} FROM hook_deliveries WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .or_not_found(|| format!("delivery {id:?}"))
    }

    /// One window of a hook's deliveries, newest first.
    pub async fn deliveries_window(
        &self,
        hook_id: &str,
        window: Window,
    ) -> Result<(Vec<Delivery>, u64), StoreError> {
        let listing = Listing {
            columns: DELIVERY_COLUMNS,
            from: "hook_deliveries WHERE hook_id = $1",
            order: "created_at_ms DESC, id",
            params: &[hook_id],
        };
        self.windowed(&listing, window).await
    }

    /// The attempts of a delivery, newest first.
    pub async fn delivery_attempts(
        &self,
        delivery_id: &str,
    ) -> Result<Vec<DeliveryAttempt>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT delivery_id, attempt, at_ms, status, error, response_excerpt, elapsed_ms \
             FROM hook_attempts WHERE delivery_id = $1 ORDER BY attempt DESC",
        )
        .bind(delivery_id)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Sends a finished delivery again (same id, same body), due now. `false` when it
    /// is still pending or being sent.
    pub async fn redeliver(&self, delivery_id: &str, now_ms: i64) -> Result<bool, StoreError> {
        let _turn = self.write_turn().await;
        let done = sqlx::query(
            "UPDATE hook_deliveries SET state = 'pending', next_attempt_ms = $2, \
             claimed_by = NULL, created_at_ms = $2 \
             WHERE id = $1 AND state IN ('delivered', 'failed')",
        )
        .bind(delivery_id)
        .bind(now_ms)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Up to `limit` deliveries due at `now_ms` (pending, or sending with a claim that
    /// ran out), with the attempt count each was read at.
    pub async fn due_deliveries(
        &self,
        now_ms: i64,
        limit: i64,
    ) -> Result<Vec<(String, i64)>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT id, attempts FROM hook_deliveries \
             WHERE state IN ('pending', 'sending') AND next_attempt_ms <= $1 \
             ORDER BY next_attempt_ms LIMIT $2",
        )
        .bind(now_ms)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Takes delivery `id` for `worker` if it is still due with `seen_attempts`
    /// attempts: one conditional update, so of several loops that saw it due, one gets
    /// it. The claim lasts `claim_ms`; after that it is due again (at least once).
    pub async fn claim_delivery(
        &self,
        id: &str,
        seen_attempts: i64,
        worker: &str,
        now_ms: i64,
        claim_ms: i64,
    ) -> Result<Option<ClaimedDelivery>, StoreError> {
        let claimed = {
            let _turn = self.write_turn().await;
            sqlx::query(
                "UPDATE hook_deliveries SET state = 'sending', claimed_by = $3, \
                 attempts = attempts + 1, next_attempt_ms = $4 \
                 WHERE id = $1 AND attempts = $2 AND state IN ('pending', 'sending') \
                   AND next_attempt_ms <= $5",
            )
            .bind(id)
            .bind(seen_attempts)
            .bind(worker)
            .bind(now_ms.saturating_add(claim_ms))
            .bind(now_ms)
            .execute(&self.pool)
            .await?
            .rows_affected()
                > 0
        };
        if !claimed {
            return Ok(None);
        }
        // None when its hook was removed meanwhile (with its deliveries).
        Ok(sqlx::query_as(
            "SELECT d.id, d.hook_id, d.body, d.attempts, d.created_at_ms, h.url, h.format, \
             h.timeout_ms FROM hook_deliveries d JOIN hooks h ON h.id = d.hook_id \
             WHERE d.id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?)
    }

    /// Records how attempt `claimed.attempt` went and moves the delivery on, if this
    /// loop still holds it (a claim that ran out may have been taken by another).
    pub async fn record_delivery_attempt(
        &self,
        claimed: &ClaimedDelivery,
        worker: &str,
        record: &AttemptRecord,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let (_turn, mut tx) = self.begin_write().await?;
        sqlx::query(
            "INSERT INTO hook_attempts (id, delivery_id, attempt, at_ms, status, error, \
             response_excerpt, elapsed_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(&claimed.id)
        .bind(claimed.attempt)
        .bind(now_ms)
        .bind(record.status.map(i64::from))
        .bind(&record.error)
        .bind(&record.response_excerpt)
        .bind(record.elapsed_ms)
        .execute(&mut *tx)
        .await?;
        let delivered_at = (record.next_state == DeliveryState::Delivered).then_some(now_ms);
        sqlx::query(
            "UPDATE hook_deliveries SET state = $4, next_attempt_ms = $5, claimed_by = NULL, \
             delivered_at_ms = COALESCE($6, delivered_at_ms) \
             WHERE id = $1 AND claimed_by = $2 AND attempts = $3 AND state = 'sending'",
        )
        .bind(&claimed.id)
        .bind(worker)
        .bind(claimed.attempt)
        .bind(record.next_state.as_str())
        .bind(record.retry_at_ms)
        .bind(delivered_at)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }
}

#[allow(clippy::too_many_arguments)]
async fn insert_delivery_in(
    tx: &mut Transaction<'static, Any>,
    id: &str,
    hook_id: &str,
    tenant_id: &str,
    event: HookEvent,
    event_id: &str,
    body: &str,
    now_ms: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO hook_deliveries (id, hook_id, tenant_id, event, event_id, body, state, \
         attempts, next_attempt_ms, created_at_ms) \
         VALUES ($1, $2, $3, $4, $5, $6, 'pending', 0, $7, $7)",
    )
    .bind(id)
    .bind(hook_id)
    .bind(tenant_id)
    .bind(event.as_str())
    .bind(event_id)
    .bind(body)
    .bind(now_ms)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// RFC 3339 of a Unix millisecond time (UTC).
pub fn rfc3339(ms: i64) -> String {
    chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Writes a delivery of `event` about job `job_id` for each hook of its tenant that
/// hears it, inside `tx` (the transaction moving the job): the event and its
/// deliveries are stored with the job's change or not at all. A tenant with no such
/// hook costs one indexed read.
pub async fn record_job_event(
    tx: &mut Transaction<'static, Any>,
    job_id: &str,
    event: HookEvent,
    now_ms: i64,
) -> Result<(), StoreError> {
    let rows: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT h.id, h.tenant_id, h.events FROM hooks h \
         WHERE h.tenant_id = (SELECT tenant_id FROM jobs WHERE id = $1) AND h.events <> '[]'",
    )
    .bind(job_id)
    .fetch_all(&mut **tx)
    .await?;
    let word = serde_json::Value::from(event.as_str()).to_string();
    let hearing: Vec<&(String, String, String)> = rows
        .iter()
        .filter(|(_, _, events)| events.contains(&word))
        .collect();
    if hearing.is_empty() {
        return Ok(());
    }
    let body = job_event_body(tx, job_id, event, now_ms).await?;
    let text = serde_json::to_string(&body)
        .map_err(|error| corrupt(format!("event body of job {job_id}: {error}")))?;
    for (hook_id, tenant_id, _) in hearing {
        let id = uuid::Uuid::new_v4().to_string();
        insert_delivery_in(tx, &id, hook_id, tenant_id, event, &body.id, &text, now_ms).await?;
    }
    Ok(())
}

/// The event body of `event` about job `job_id`, read inside `tx`.
async fn job_event_body(
    tx: &mut Transaction<'static, Any>,
    job_id: &str,
    event: HookEvent,
    now_ms: i64,
) -> Result<HookEventBody, StoreError> {
    let row = sqlx::query(
        "SELECT j.id, j.operation, j.state, j.error, j.cluster_id, j.tenant_id, \
         c.name AS cluster_name, t.name AS tenant_name, u.username \
         FROM jobs j JOIN clusters c ON c.id = j.cluster_id JOIN tenants t ON t.id = j.tenant_id \
         LEFT JOIN users u ON u.id = j.requested_by WHERE j.id = $1",
    )
    .bind(job_id)
    .fetch_optional(&mut **tx)
    .await?
    .or_not_found(|| format!("job {job_id}"))?;
    let cluster_id: String = row.try_get("cluster_id")?;
    let state: JobState = row.try_get("state")?;
    let failed_step = if event == HookEvent::JobFailed {
        let job_error: Option<String> = row.try_get("error")?;
        let step = sqlx::query(
            "SELECT node, service, action, error FROM tasks \
             WHERE job_id = $1 AND state = 'failed' ORDER BY finished_at_ms DESC LIMIT 1",
        )
        .bind(job_id)
        .fetch_optional(&mut **tx)
        .await?;
        match step {
            Some(step) => {
                let node: i64 = step.try_get("node")?;
                let error: Option<String> = step.try_get("error")?;
                Some(HookFailedStep {
                    node: format!("{cluster_id}-{node}"),
                    service: step.try_get("service")?,
                    action: step.try_get("action")?,
                    message: error.or(job_error).unwrap_or_default(),
                })
            }
            None => None,
        }
    } else {
        None
    };
    Ok(HookEventBody {
        schema: HOOK_SCHEMA_VERSION,
        event,
        id: uuid::Uuid::new_v4().to_string(),
        time: rfc3339(now_ms),
        tenant: HookTenant {
            id: row.try_get("tenant_id")?,
            name: row.try_get("tenant_name")?,
        },
        cluster: Some(HookCluster {
            id: Some(cluster_id.clone()),
            name: row.try_get("cluster_name")?,
        }),
        job: Some(HookJob {
            id: job_id.to_owned(),
            operation: row.try_get("operation")?,
            state,
            requested_by: row.try_get("username")?,
        }),
        failed_step,
        links: HookLinks {
            job: Some(format!("/clusters/{cluster_id}/jobs/{job_id}")),
            cluster: Some(format!("/clusters/{cluster_id}")),
        },
        approval: None,
        lease: None,
        health: None,
        replacement: None,
    })
}

/// Writes an `approval.needed` delivery for every hook of the request's tenant that
/// hears it, inside the transaction that stores the request (see
/// the engine's `operations::approval`).
pub async fn record_approval_needed(
    tx: &mut Transaction<'static, Any>,
    request_id: &str,
    size: u64,
    now_ms: i64,
) -> Result<(), StoreError> {
    let event = HookEvent::ApprovalNeeded;
    let row = sqlx::query(
        "SELECT r.tenant_id, r.cluster_id, r.operation, r.rule, r.approver_group, \
         r.expires_at_ms, c.name AS cluster_name, t.name AS tenant_name, u.username \
         FROM approval_requests r JOIN clusters c ON c.id = r.cluster_id \
         JOIN tenants t ON t.id = r.tenant_id LEFT JOIN users u ON u.id = r.requested_by \
         WHERE r.id = $1",
    )
    .bind(request_id)
    .fetch_optional(&mut **tx)
    .await?
    .or_not_found(|| format!("approval request {request_id}"))?;
    let tenant_id: String = row.try_get("tenant_id")?;
    let hearing = hooks_hearing_in(tx, &tenant_id, event).await?;
    if hearing.is_empty() {
        return Ok(());
    }
    let cluster_id: String = row.try_get("cluster_id")?;
    let body = HookEventBody {
        approval: Some(HookApproval {
            id: request_id.to_owned(),
            operation: row.try_get("operation")?,
            size,
            rule: row.try_get("rule")?,
            approvers: row.try_get("approver_group")?,
            requested_by: row.try_get("username")?,
            expires: rfc3339(row.try_get("expires_at_ms")?),
        }),
        ..cluster_event_body(
            event,
            HookTenant {
                id: tenant_id.clone(),
                name: row.try_get("tenant_name")?,
            },
            &cluster_id,
            row.try_get("cluster_name")?,
            now_ms,
        )
    };
    deliver_in(tx, &hearing, &tenant_id, &body, now_ms).await
}

/// The ids of the tenant's hooks that hear `event`.
async fn hooks_hearing_in(
    tx: &mut Transaction<'static, Any>,
    tenant_id: &str,
    event: HookEvent,
) -> Result<Vec<String>, StoreError> {
    let word = serde_json::Value::from(event.as_str()).to_string();
    let hooks: Vec<(String, String)> =
        sqlx::query_as("SELECT id, events FROM hooks WHERE tenant_id = $1 AND events <> '[]'")
            .bind(tenant_id)
            .fetch_all(&mut **tx)
            .await?;
    Ok(hooks
        .into_iter()
        .filter(|(_, events)| events.contains(&word))
        .map(|(id, _)| id)
        .collect())
}

/// The body of an event about a cluster, with no job, approval or lease: the caller
/// adds the one it is about.
fn cluster_event_body(
    event: HookEvent,
    tenant: HookTenant,
    cluster_id: &str,
    cluster_name: String,
    now_ms: i64,
) -> HookEventBody {
    HookEventBody {
        schema: HOOK_SCHEMA_VERSION,
        event,
        id: uuid::Uuid::new_v4().to_string(),
        time: rfc3339(now_ms),
        tenant,
        cluster: Some(HookCluster {
            id: Some(cluster_id.to_owned()),
            name: cluster_name,
        }),
        job: None,
        failed_step: None,
        links: HookLinks {
            job: None,
            cluster: Some(format!("/clusters/{cluster_id}")),
        },
        approval: None,
        lease: None,
        health: None,
        replacement: None,
    }
}

/// Writes one delivery of `body` for each of `hook_ids`, inside `tx`.
async fn deliver_in(
    tx: &mut Transaction<'static, Any>,
    hook_ids: &[String],
    tenant_id: &str,
    body: &HookEventBody,
    now_ms: i64,
) -> Result<(), StoreError> {
    let text = serde_json::to_string(body)
        .map_err(|error| corrupt(format!("body of {} event {}: {error}", body.event, body.id)))?;
    for hook_id in hook_ids {
        let id = uuid::Uuid::new_v4().to_string();
        insert_delivery_in(
            tx, &id, hook_id, tenant_id, body.event, &body.id, &text, now_ms,
        )
        .await?;
    }
    Ok(())
}

/// The warning of a coming lease end, as a `lease.expiring` event is told of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseNotice {
    pub warning: LeaseWarning,
    pub expires_ms: i64,
    /// The template's grace after the end; `None`: deleted at the end.
    pub grace_ms: Option<i64>,
}

/// Writes a `lease.expiring` delivery for every hook of the cluster's tenant that
/// hears it, inside the transaction that records the warning as sent (see
/// the engine's `operations::lease`): the warning and its deliveries are stored together
/// or not at all.
pub async fn record_lease_expiring(
    tx: &mut Transaction<'static, Any>,
    cluster_id: &str,
    notice: LeaseNotice,
    now_ms: i64,
) -> Result<(), StoreError> {
    let event = HookEvent::LeaseExpiring;
    let row = sqlx::query(
        "SELECT c.tenant_id, c.name AS cluster_name, t.name AS tenant_name \
         FROM clusters c JOIN tenants t ON t.id = c.tenant_id WHERE c.id = $1",
    )
    .bind(cluster_id)
    .fetch_optional(&mut **tx)
    .await?
    .or_not_found(|| format!("cluster {cluster_id}"))?;
    let tenant_id: String = row.try_get("tenant_id")?;
    let hearing = hooks_hearing_in(tx, &tenant_id, event).await?;
    if hearing.is_empty() {
        return Ok(());
    }
    let body = HookEventBody {
        lease: Some(HookLease {
            expires: rfc3339(notice.expires_ms),
            warning: notice.warning,
            grace_seconds: notice
                .grace_ms
                .map(|grace| u64::try_from(grace / 1000).unwrap_or(0)),
        }),
        ..cluster_event_body(
            event,
            HookTenant {
                id: tenant_id.clone(),
                name: row.try_get("tenant_name")?,
            },
            cluster_id,
            row.try_get("cluster_name")?,
            now_ms,
        )
    };
    deliver_in(tx, &hearing, &tenant_id, &body, now_ms).await
}

/// A health check whose answer changed, as `health.down` and `health.up` tell it.
#[derive(Debug, Clone, Copy)]
pub struct HealthChange<'a> {
    pub event: HookEvent,
    /// What the check said.
    pub message: Option<&'a str>,
    /// For `health.up`: when the service was first found down.
    pub down_since_ms: Option<i64>,
}

/// Writes a `health.down` or `health.up` delivery for every hook of the cluster's
/// tenant that hears it, inside the transaction that records the check's changed
/// answer (see [`Store::record_check`]).
pub async fn record_health_change(
    tx: &mut Transaction<'static, Any>,
    key: &super::health::CheckKey,
    change: &HealthChange<'_>,
    now_ms: i64,
) -> Result<(), StoreError> {
    let event = change.event;
    let row = sqlx::query(
        "SELECT c.tenant_id, c.name AS cluster_name, t.name AS tenant_name, \
         (SELECT hostname FROM nodes n WHERE n.cluster_id = c.id AND n.number = $2) AS hostname \
         FROM clusters c JOIN tenants t ON t.id = c.tenant_id WHERE c.id = $1",
    )
    .bind(&key.cluster_id)
    .bind(key.node_number)
    .fetch_optional(&mut **tx)
    .await?
    .or_not_found(|| format!("cluster {}", key.cluster_id))?;
    let tenant_id: String = row.try_get("tenant_id")?;
    let hearing = hooks_hearing_in(tx, &tenant_id, event).await?;
    if hearing.is_empty() {
        return Ok(());
    }
    let body = HookEventBody {
        health: Some(HookHealth {
            node: hook_node(&key.cluster_id, key.node_number, row.try_get("hostname")?),
            service: key.service.clone(),
            message: change.message.map(str::to_owned),
            down_since: change.down_since_ms.map(rfc3339),
        }),
        ..cluster_event_body(
            event,
            HookTenant {
                id: tenant_id.clone(),
                name: row.try_get("tenant_name")?,
            },
            &key.cluster_id,
            row.try_get("cluster_name")?,
            now_ms,
        )
    };
    deliver_in(tx, &hearing, &tenant_id, &body, now_ms).await
}

/// A node of `cluster_id` as an event names it.
fn hook_node(cluster_id: &str, number: i64, hostname: Option<String>) -> HookNode {
    HookNode {
        id: format!("{cluster_id}-{number}"),
        number: u32::try_from(number).unwrap_or_default(),
        hostname,
    }
}

/// (old, new) node numbers of a replacement taking `from` to `to`: the nodes `to`
/// drops, in `from`'s order, each with the node `to` adds in its place, in `to`'s
/// order (how the engine's `operations` numbers the successors).
fn replaced_pairs(from: &Layout, to: &Layout) -> Vec<(u32, u32)> {
    let gone = from
        .nodes
        .iter()
        .filter(|node| to.node(node.number).is_none())
        .map(|node| node.number);
    let added = to
        .nodes
        .iter()
        .filter(|node| from.node(node.number).is_none())
        .map(|node| node.number);
    gone.zip(added).collect()
}

/// The layout in `json`, or `None` (with a warning) when there is none or it does not
/// read: a missing event must never fail the job's own submit or completion.
fn layout_of(json: Option<&str>, what: &str, job_id: &str) -> Option<Layout> {
    match serde_json::from_str(json?) {
        Ok(layout) => Some(layout),
        Err(error) => {
            tracing::warn!(job = %job_id, %error, "the {what} layout of a replacement does not read");
            None
        }
    }
}

/// Keeps the hostnames of the nodes a `replace nodes` job takes away, inside the
/// transaction that submits it: their rows are deleted by the job's own steps, before
/// the job succeeds and `node.replaced` names them. Other jobs keep nothing.
pub async fn keep_replaced_hostnames(
    tx: &mut Transaction<'static, Any>,
    job_id: &str,
    cluster_id: &str,
    operation: Operation,
    from_layout_json: Option<&str>,
    to_layout_json: Option<&str>,
) -> Result<(), StoreError> {
    if operation != Operation::ReplaceNodes {
        return Ok(());
    }
    let (Some(from), Some(to)) = (
        layout_of(from_layout_json, "from", job_id),
        layout_of(to_layout_json, "to", job_id),
    ) else {
        return Ok(());
    };
    let gone: Vec<u32> = replaced_pairs(&from, &to)
        .into_iter()
        .map(|(old, _)| old)
        .collect();
    let rows: Vec<(i64, Option<String>)> =
        sqlx::query_as("SELECT number, hostname FROM nodes WHERE cluster_id = $1")
            .bind(cluster_id)
            .fetch_all(&mut **tx)
            .await?;
    let hostnames: BTreeMap<u32, String> = rows
        .into_iter()
        .filter_map(|(number, hostname)| Some((u32::try_from(number).ok()?, hostname?)))
        .filter(|(number, _)| gone.contains(number))
        .collect();
    let json = serde_json::to_string(&hostnames)
        .map_err(|error| corrupt(format!("hostnames of job {job_id}: {error}")))?;
    sqlx::query("UPDATE job_documents SET replaced_hostnames_json = $2 WHERE job_id = $1")
        .bind(job_id)
        .bind(json)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Writes a `node.replaced` delivery per replaced node, for every hook of the tenant
/// that hears it, inside the transaction in which a `replace nodes` job (healing's or a
/// user's) succeeds. Other jobs cost one indexed read.
pub async fn record_node_replaced(
    tx: &mut Transaction<'static, Any>,
    job_id: &str,
    now_ms: i64,
) -> Result<(), StoreError> {
    let event = HookEvent::NodeReplaced;
    let job: Option<(Operation, String, String)> =
        sqlx::query_as("SELECT operation, tenant_id, cluster_id FROM jobs WHERE id = $1")
            .bind(job_id)
            .fetch_optional(&mut **tx)
            .await?;
    let Some((operation, tenant_id, cluster_id)) = job else {
        return Ok(());
    };
    if operation != Operation::ReplaceNodes {
        return Ok(());
    }
    let hearing = hooks_hearing_in(tx, &tenant_id, event).await?;
    if hearing.is_empty() {
        return Ok(());
    }
    let Some(documents) = sqlx::query(
        "SELECT from_layout_json, to_layout_json, replaced_hostnames_json FROM job_documents \
         WHERE job_id = $1",
    )
    .bind(job_id)
    .fetch_optional(&mut **tx)
    .await?
    else {
        return Ok(());
    };
    let from: Option<String> = documents.try_get("from_layout_json")?;
    let to: Option<String> = documents.try_get("to_layout_json")?;
    let (Some(from), Some(to)) = (
        layout_of(from.as_deref(), "from", job_id),
        layout_of(to.as_deref(), "to", job_id),
    ) else {
        return Ok(());
    };
    // Absent for a job submitted before the column existed: the old names are then
    // unknown, and the event is sent all the same.
    let old_hostnames: BTreeMap<u32, String> = documents
        .try_get::<Option<String>, _>("replaced_hostnames_json")?
        .and_then(|json| serde_json::from_str(&json).ok())
        .unwrap_or_default();
    let rows: Vec<(i64, Option<String>)> =
        sqlx::query_as("SELECT number, hostname FROM nodes WHERE cluster_id = $1")
            .bind(&cluster_id)
            .fetch_all(&mut **tx)
            .await?;
    let new_hostname = |number: u32| {
        rows.iter()
            .find(|(row, _)| *row == i64::from(number))
            .and_then(|(_, hostname)| hostname.clone())
    };
    let base = job_event_body(tx, job_id, event, now_ms).await?;
    for (old, new) in replaced_pairs(&from, &to) {
        let body = HookEventBody {
            id: uuid::Uuid::new_v4().to_string(),
            replacement: Some(HookReplacement {
                old: hook_node(
                    &cluster_id,
                    i64::from(old),
                    old_hostnames.get(&old).cloned(),
                ),
                new: hook_node(&cluster_id, i64::from(new), new_hostname(new)),
            }),
            ..base.clone()
        };
        deliver_in(tx, &hearing, &tenant_id, &body, now_ms).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(numbers: &[u32]) -> Layout {
        serde_json::from_value(serde_json::json!({
            "template": "t",
            "nodes": numbers.iter().map(|number| serde_json::json!({
                "number": number, "hardwaretype": "small", "imagetype": "deb",
                "services": ["web"]
            })).collect::<Vec<_>>()
        }))
        .unwrap()
    }

    #[test]
    fn each_replaced_node_is_paired_with_the_successor_numbered_for_it() {
        // Successors are numbered after the highest node, in the old layout's order.
        let from = layout(&[1003, 1001, 1002]);
        let to = layout(&[1002, 1004, 1005]);
        assert_eq!(replaced_pairs(&from, &to), [(1003, 1004), (1001, 1005)]);
        assert_eq!(replaced_pairs(&from, &from), []);
    }
}
