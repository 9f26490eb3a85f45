//! The janitor: the pool's housekeeping loop. At start it re-adopts the nodes an
//! earlier process made of the tenants its pool serves (a restarted server must not
//! leak or lose them); then, on a
//! timer, it returns tasks whose leases expired to the queue, warns of cluster leases
//! ending and stops or deletes clusters whose lease ran out, through ordinary jobs
//! (see [`crate::operations::lease`]), and ends approval requests left undecided past
//! their rule's window.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use tokio::sync::{watch, Notify};

use crate::execute::Executor;
use crate::provider::NodeRecord;
use crate::queue::{self, WorkerScope};
use crate::store::clusters::nodes::{Node, NodeRecord as NodeRow};
use crate::store::{now_ms, Store};

/// Nodes adopted concurrently when a pool starts.
const ADOPTIONS_AT_ONCE: usize = 16;

pub(super) async fn run(
    executor: Executor,
    scope: WorkerScope,
    every: Duration,
    wake: Arc<Notify>,
    adopted: watch::Sender<bool>,
    mut stopped: watch::Receiver<bool>,
) {
    adopt_nodes(&executor, &scope).await;
    adopted.send_replace(true);
    loop {
        tokio::select! {
            () = tokio::time::sleep(every) => {}
            _ = stopped.changed() => {}
        }
        if *stopped.borrow() {
            return;
        }
        sweep(executor.store(), &wake).await;
    }
}

/// One round: expired task leases, then cluster leases, then approvals.
pub async fn sweep(store: &Store, wake: &Notify) {
    match queue::requeue_expired(store, now_ms()).await {
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
    match crate::operations::lease::sweep(store, now_ms()).await {
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
