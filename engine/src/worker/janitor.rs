//! The janitor: the pool's housekeeping loop. At start it re-adopts the nodes an
//! earlier process made of the tenants its pool serves (a restarted server must not
//! leak or lose them); then, on a
//! timer, it returns tasks whose leases expired to the queue, warns of cluster leases
//! ending and stops or deletes clusters whose lease ran out, through ordinary jobs
//! (see [`crate::operations::lease`]), ends approval requests left undecided past
//! their rule's window, and now and then prunes the history and the audit log older
//! than their retentions (see [`crate::store::history`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use tokio::sync::{watch, Notify};

use crate::execute::Executor;
use crate::provider::NodeRecord;
use crate::queue::{Queue, WorkerScope};
use crate::store::clusters::nodes::{Node, NodeRow};
use crate::store::{now_ms, Store};

/// Nodes adopted concurrently when a pool starts.
const ADOPTIONS_AT_ONCE: usize = 16;

/// How long something that ended stays in the database: the history (`corral serve
/// --history-retention-secs`: deleted clusters, ended jobs with their output, sent hook
/// deliveries) or the audit log (`--audit-retention-secs`). The cost ledger and
/// terminal recordings stay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoryRetention {
    Forever,
    For(Duration),
}

impl Default for HistoryRetention {
    /// 90 days.
    fn default() -> Self {
        HistoryRetention::For(Duration::from_secs(90 * 24 * 3600))
    }
}

/// The audit log's default retention: a year, since who did what is asked about long
/// after the clusters are gone (a yearly review), yet it must not grow forever.
pub const AUDIT_RETENTION_DEFAULT: HistoryRetention =
    HistoryRetention::For(Duration::from_secs(365 * 24 * 3600));

/// What the janitor prunes, and after how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retentions {
    pub history: HistoryRetention,
    pub audit: HistoryRetention,
}

/// Prunes run at most this often, however long the retention: a pass scans the jobs.
const PRUNE_AT_MOST_EVERY: Duration = Duration::from_secs(600);

impl HistoryRetention {
    /// Whether a prune is due at `now`, the last having run at `last` (`None`: none yet
    /// in this process). A pass runs four times per retention, so nothing outlives it
    /// by more than a quarter, and at most every [`PRUNE_AT_MOST_EVERY`].
    pub fn prune_due(self, last: Option<Instant>, now: Instant) -> bool {
        let HistoryRetention::For(keep) = self else {
            return false;
        };
        last.is_none_or(|last| now.duration_since(last) >= (keep / 4).min(PRUNE_AT_MOST_EVERY))
    }
}

pub(super) async fn run(
    executor: Executor,
    scope: WorkerScope,
    every: Duration,
    retentions: Retentions,
    wake: Arc<Notify>,
    adopted: watch::Sender<bool>,
    mut stopped: watch::Receiver<bool>,
) {
    adopt_nodes(&executor, &scope).await;
    adopted.send_replace(true);
    let mut last_prune = None;
    let mut last_audit_prune = None;
    while super::next_turn(every, &mut stopped).await {
        sweep(executor.queue(), &wake).await;
        if let HistoryRetention::For(keep) = retentions.history {
            if retentions.history.prune_due(last_prune, Instant::now()) {
                last_prune = Some(Instant::now());
                prune(executor.store(), keep).await;
            }
        }
        if let HistoryRetention::For(keep) = retentions.audit {
            if retentions.audit.prune_due(last_audit_prune, Instant::now()) {
                last_audit_prune = Some(Instant::now());
                prune_audit(executor.store(), keep).await;
            }
        }
    }
}

/// One pass of the audit log's retention.
async fn prune_audit(store: &Store, keep: Duration) {
    let keep_ms = i64::try_from(keep.as_millis()).unwrap_or(i64::MAX);
    match store.prune_audit(now_ms().saturating_sub(keep_ms)).await {
        Ok(0) => {}
        Ok(entries) => tracing::info!(entries, "pruned audit entries older than the retention"),
        Err(error) => tracing::warn!(%error, "pruning old audit entries failed"),
    }
}

/// One pass of the history retention.
async fn prune(store: &Store, keep: Duration) {
    let keep_ms = i64::try_from(keep.as_millis()).unwrap_or(i64::MAX);
    match store.prune_history(now_ms().saturating_sub(keep_ms)).await {
        Ok(pruned) if pruned.is_empty() => {}
        Ok(pruned) => tracing::info!(
            clusters = pruned.clusters,
            jobs = pruned.jobs,
            hook_deliveries = pruned.hook_deliveries,
            "pruned history older than the retention"
        ),
        Err(error) => tracing::warn!(%error, "pruning old history failed"),
    }
}

/// One round: expired task leases, then cluster leases, then approvals.
pub async fn sweep(queue: &Queue, wake: &Notify) {
    let store = queue.store();
    match queue.requeue_expired(now_ms()).await {
        Ok(expired) if !expired.is_empty() => {
            crate::metrics::record_expired_leases(expired.len());
            for task in &expired {
                tracing::warn!(
                    task = %task.task_id,
                    worker = %task.worker_id,
                    attempt = task.attempt,
                    now = %task.task_state,
                    "task lease expired"
                );
            }
            wake.notify_waiters();
        }
        Ok(_) => {}
        Err(error) => {
            store
                .reachability()
                .failed("requeueing expired leases", &error, error.is_unreachable())
        }
    }
    match crate::operations::lease::sweep(queue, now_ms()).await {
        Ok(done) if done.stopped + done.deleted > 0 => {
            tracing::info!(
                stopped = done.stopped,
                deleted = done.deleted,
                "stopping or deleting clusters whose lease expired"
            );
            wake.notify_waiters();
        }
        Ok(_) => {}
        Err(error) => {
            let unreachable = matches!(
                &error,
                crate::operations::OperationError::Store(store) if store.is_unreachable()
            ) || matches!(
                &error,
                crate::operations::OperationError::Queue(queue) if queue.is_unreachable()
            );
            store
                .reachability()
                .failed("handling cluster leases", &error, unreachable);
        }
    }
    match crate::service::expire_due_approvals(store, now_ms()).await {
        Ok(0) => {}
        Ok(count) => tracing::info!(count, "approval requests expired undecided"),
        Err(error) => store.reachability().failed(
            "expiring approval requests",
            &error,
            error.is_unreachable(),
        ),
    }
}

/// Takes over every recorded node of a live cluster of the tenants `scope` serves (and
/// no other tenant's: see [`Store::live_nodes`]): checks it is there, restarts what it
/// can (a local node's sshd after a reboot), and stores the refreshed record. Nodes are
/// adopted [`ADOPTIONS_AT_ONCE`] at a time, since claiming waits for all of them.
async fn adopt_nodes(executor: &Executor, scope: &WorkerScope) {
    let store = executor.store();
    let nodes = match store.live_nodes(scope).await {
        Ok(nodes) => nodes,
        Err(error) => {
            tracing::warn!(%error, "listing nodes to adopt failed");
            return;
        }
    };
    let adopted = futures::stream::iter(nodes)
        .map(|node| adopt_node(executor, node))
        .buffer_unordered(ADOPTIONS_AT_ONCE)
        .filter(|adopted| std::future::ready(*adopted))
        .count()
        .await;
    if adopted > 0 {
        tracing::info!(nodes = adopted, "re-adopted nodes");
    }
}

/// Adopts one node; whether its provider took it over.
async fn adopt_node(executor: &Executor, node: Node) -> bool {
    // A machine a lease stopped stays stopped: adopting would start it (its lease's
    // extension does, with its services).
    if node.state == crate::execute::NodeState::Stopped {
        return false;
    }
    let Some(record) = node
        .provider_json
        .as_deref()
        .and_then(|json| serde_json::from_str::<NodeRecord>(json).ok())
    else {
        return false;
    };
    let Some(provider) = executor.providers().get(&record.provider) else {
        return false;
    };
    let fresh = match provider.adopt(&record).await {
        Ok(fresh) => fresh,
        Err(error) => {
            tracing::warn!(node = %record.id, %error, "adopting a node failed");
            return false;
        }
    };
    if fresh != record {
        let row = NodeRow {
            cluster_id: node.cluster_id,
            number: node.number,
            hostname: Some(fresh.address().to_owned()),
            hardwaretype: node.hardwaretype,
            imagetype: node.imagetype,
            services_json: node.services_json,
            provider_json: serde_json::to_string(&fresh).ok(),
            state: node.state,
        };
        if let Err(error) = executor.store().save_node(&row, now_ms()).await {
            tracing::warn!(node = %record.id, %error, "saving an adopted node failed");
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prunes_run_four_times_a_retention_and_at_most_every_ten_minutes() {
        let start = Instant::now();
        let minute = Duration::from_secs(60);
        let hour = 60 * minute;
        let cases = [
            // (retention, minutes since the last prune (None: never), due)
            (HistoryRetention::Forever, None, false),
            (HistoryRetention::Forever, Some(600), false),
            (HistoryRetention::For(4 * minute), None, true),
            (HistoryRetention::For(4 * minute), Some(0), false),
            (HistoryRetention::For(4 * minute), Some(1), true),
            (HistoryRetention::For(hour), Some(10), true),
            (HistoryRetention::For(hour), Some(9), false),
            (HistoryRetention::default(), Some(9), false),
            (HistoryRetention::default(), Some(10), true),
        ];
        for (retention, minutes_ago, due) in cases {
            let now = start + hour;
            let last = minutes_ago.map(|minutes: u32| now - minute * minutes);
            assert_eq!(
                retention.prune_due(last, now),
                due,
                "{retention:?}, last prune {minutes_ago:?} min ago"
            );
        }
    }
}
