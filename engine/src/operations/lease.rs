//! Leases that warn and forgive (issue 44 point 5). What the janitor does for a
//! cluster whose lease is ending is decided by [`decide`] (pure, table-tested): warn a
//! day and an hour before (a `lease.expiring` hook event), and at the end delete it,
//! or, when its template gives a `grace`, stop its services (and its machines, where
//! the provider can: [`machine_steps`]) and delete it when the grace is over unless
//! the lease is extended first.
//!
//! Every one of these happens once however many janitors run: a warning is recorded
//! as sent by a conditional `UPDATE` in the transaction writing its deliveries, and the
//! lease stop is marked (`lease_deletes_at_ms`) by a conditional `UPDATE` in the
//! transaction submitting the stop job ([`LeaseMark`], applied by the change's
//! submission), as extending a stopped cluster clears the mark with its start job.

use api_types::{AuditAction, LeaseWarning};
use domain::catalog::Catalog;
use domain::layout::Layout;
use domain::plan::{plan, Action, PlanOperation, ServiceGraph, TaskDag};
use serde_json::json;

use super::{submit_change, ClusterChange, ClusterState, OperationError};
use crate::provider::suspends_machines;
use crate::queue::{JobId, JobState, Queue, SubmitOptions};
use crate::store::audit::AuditEntry;
use crate::store::clusters::lease::mark_warned;
use crate::store::clusters::Cluster;
use crate::store::hooks::{record_lease_expiring, rfc3339, LeaseNotice};
use crate::store::{Store, StoreError};

pub const HOUR_MS: i64 = 3600 * 1000;
pub const DAY_MS: i64 = 24 * HOUR_MS;

/// What decides a cluster's lease at a moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseFacts {
    pub state: ClusterState,
    pub expires_ms: i64,
    /// Set when its lease already stopped it: when it goes.
    pub deletes_at_ms: Option<i64>,
    pub warned: Option<LeaseWarning>,
    /// The template's grace; `None`: deleted at the end.
    pub grace_ms: Option<i64>,
}

/// What the janitor does about a cluster's lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseAction {
    Nothing,
    /// Send this warning of the coming end.
    Warn(LeaseWarning),
    /// Stop its services (the lease ended, the grace runs until `deletes_at_ms`).
    Stop {
        deletes_at_ms: i64,
    },
    /// Delete it (forced when it failed: see the janitor).
    Delete,
}

/// What to do for a cluster's lease at `now_ms`. A cluster a job is changing is left
/// for a later round once its lease ended (the stop or delete would be refused); a
/// failed one cannot run a stop job, so it keeps its grace untouched and then goes.
/// Only the latest warning due is sent: a lease shorter than an hour gets the hour's
/// warning only, and a lease that ended unwarned (the servers were down) is not warned.
pub fn decide(facts: &LeaseFacts, now_ms: i64) -> LeaseAction {
    let can_change = matches!(facts.state, ClusterState::Active | ClusterState::Failed);
    if let Some(deletes_at) = facts.deletes_at_ms {
        return if now_ms >= deletes_at && can_change {
            LeaseAction::Delete
        } else {
            LeaseAction::Nothing
        };
    }
    if now_ms < facts.expires_ms {
        let left = facts.expires_ms - now_ms;
        return match facts.warned {
            _ if left > DAY_MS => LeaseAction::Nothing,
            Some(LeaseWarning::Hour) => LeaseAction::Nothing,
            Some(LeaseWarning::Day) if left > HOUR_MS => LeaseAction::Nothing,
            None if left > HOUR_MS => LeaseAction::Warn(LeaseWarning::Day),
            _ => LeaseAction::Warn(LeaseWarning::Hour),
        };
    }
    if !can_change {
        return LeaseAction::Nothing;
    }
    match facts.grace_ms {
        Some(grace) if now_ms < facts.expires_ms.saturating_add(grace) => {
            if facts.state == ClusterState::Active {
                LeaseAction::Stop {
                    deletes_at_ms: facts.expires_ms.saturating_add(grace),
                }
            } else {
                LeaseAction::Nothing
            }
        }
        _ => LeaseAction::Delete,
    }
}

/// The grace the cluster's template gives after its lease ends, from its snapshot.
pub fn grace_of(cluster: &Cluster) -> Result<Option<i64>, OperationError> {
    let (_, template) = super::snapshot_template(cluster)?;
    let Some(lease) = template.lease() else {
        return Ok(None);
    };
    let grace = lease
        .grace_duration()
        .map_err(|error| OperationError::BadTemplate {
            template: cluster.template_name.clone(),
            message: error.to_string(),
        })?;
    Ok(grace.map(|grace| i64::try_from(grace.millis()).unwrap_or(i64::MAX)))
}

pub use crate::store::clusters::lease::LeaseMark;

/// The plan of a lease's stop or start job, given the services' `stop_or_start` plan,
/// for a cluster `layout` on a provider of `providertype`. Where the provider stops
/// machines ([`suspends_machines`]): the stop suspends each node's machine after every
/// service stopped; the start resumes each machine first (each waits until SSH
/// answers), then bootstraps and configures every service again, since a restarted
/// machine may have another address on the cluster's network (Docker gives addresses
/// anew) that its peers' configuration names, then starts the services. Elsewhere the
/// plan stays as it is: the machines keep running.
pub fn machine_steps(
    mark: LeaseMark,
    stop_or_start: TaskDag,
    layout: &Layout,
    snapshot: &Catalog,
    providertype: &str,
) -> Result<TaskDag, OperationError> {
    if !suspends_machines(providertype) {
        return Ok(stop_or_start);
    }
    let nodes = layout.nodes.iter().map(|node| node.number);
    Ok(match mark {
        LeaseMark::Stop { .. } => {
            let mut dag = stop_or_start;
            dag.append(TaskDag::node_steps(nodes, Action::Suspend));
            dag
        }
        LeaseMark::Resume { .. } => {
            let mut dag = TaskDag::node_steps(nodes, Action::Resume);
            dag.append(plan(
                layout,
                layout,
                &PlanOperation::Reconfigure { restart: false },
                &ServiceGraph::from_catalog(snapshot),
            )?);
            dag.append(stop_or_start);
            dag
        }
    })
}

/// Starts a lease-stopped cluster again with its lease extended to `until_ms`: a start
/// job of every service, submitted in the transaction that moves the lease and clears
/// the stop mark. Refused as busy while a job (the lease's stop) runs.
pub async fn resume(
    queue: &Queue,
    cluster_id: &str,
    until_ms: i64,
    requested_by: Option<&str>,
    now_ms: i64,
) -> Result<JobId, OperationError> {
    super::change::submit_lease_change(
        queue,
        cluster_id,
        &ClusterChange::Start { services: None },
        LeaseMark::Resume { until_ms },
        requested_by,
        now_ms,
    )
    .await
}

/// What one round of [`sweep`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LeaseSweep {
    pub warned: usize,
    pub stopped: usize,
    pub deleted: usize,
}

/// One janitor round over the leases that need something now (a hundred at most, the
/// soonest first): warnings, stops and deletes. A cluster that fails is logged and
/// passed over, so that it does not hold up the others.
pub async fn sweep(queue: &Queue, now_ms: i64) -> Result<LeaseSweep, OperationError> {
    let store = queue.store();
    let mut done = LeaseSweep::default();
    for cluster in store
        .leases_due(now_ms, now_ms + HOUR_MS, now_ms + DAY_MS, 100)
        .await?
    {
        match handle(queue, &cluster, now_ms).await {
            Ok(Some(LeaseAction::Warn(_))) => done.warned += 1,
            Ok(Some(LeaseAction::Stop { .. })) => done.stopped += 1,
            Ok(Some(LeaseAction::Delete)) => done.deleted += 1,
            Ok(_) => {}
            Err(error) => {
                tracing::warn!(cluster = %cluster.name, %error, "lease: handling the cluster failed");
            }
        }
    }
    Ok(done)
}

/// Does what [`decide`] says for `cluster`; the action when this process did it.
async fn handle(
    queue: &Queue,
    cluster: &Cluster,
    now_ms: i64,
) -> Result<Option<LeaseAction>, OperationError> {
    let store = queue.store();
    let Some(expires_ms) = cluster.lease_expires_ms else {
        return Ok(None);
    };
    let grace_ms = match cluster.lease_deletes_at_ms {
        Some(_) => None,
        None => grace_of(cluster)?,
    };
    let facts = LeaseFacts {
        state: cluster.state,
        expires_ms,
        deletes_at_ms: cluster.lease_deletes_at_ms,
        warned: cluster.lease_warned,
        grace_ms,
    };
    let action = decide(&facts, now_ms);
    let did = match action {
        LeaseAction::Nothing => false,
        LeaseAction::Warn(warning) => {
            let notice = LeaseNotice {
                warning,
                expires_ms,
                grace_ms,
            };
            warn(store, cluster, cluster.lease_warned, notice, now_ms).await?
        }
        LeaseAction::Stop { deletes_at_ms } => {
            let mark = LeaseMark::Stop {
                expires_ms,
                deletes_at_ms,
            };
            let submitted = not_busy(
                super::change::submit_lease_change(
                    queue,
                    &cluster.id,
                    &ClusterChange::Stop { services: None },
                    mark,
                    None,
                    now_ms,
                )
                .await,
            )?;
            if let Some(job) = &submitted {
                tracing::info!(cluster = %cluster.name, %job, deletes_at_ms, "lease expired: stopping its services for the grace");
            }
            submitted.is_some()
        }
        LeaseAction::Delete => {
            let force = cluster.state == ClusterState::Failed;
            if force {
                // A failed forced delete is left for a person: forcing again would
                // fail the same way (its nodes could not be deleted).
                let newest = queue.newest_job(&cluster.id).await?;
                if newest.is_some_and(|(_, state, layouts)| {
                    state == JobState::Failed && layouts.is_forced_delete()
                }) {
                    return Ok(None);
                }
            }
            let submitted = not_busy(
                submit_change(
                    queue,
                    &cluster.id,
                    &ClusterChange::Delete { force },
                    None,
                    SubmitOptions::default(),
                    now_ms,
                )
                .await,
            )?;
            if let Some(job) = &submitted {
                tracing::info!(cluster = %cluster.name, %job, force, "lease expired: deleting");
            }
            submitted.is_some()
        }
    };
    if did {
        audit(store, cluster, action, now_ms).await;
    }
    Ok(did.then_some(action))
}

/// Who the audit log says acted on a lease.
pub const LEASE_ACTOR: &str = "corral (lease)";

/// Records what the janitor did of a lease in the tenant's audit log (best effort: the
/// job or the deliveries are what counts, and they are stored).
async fn audit(store: &Store, cluster: &Cluster, action: LeaseAction, now_ms: i64) {
    let (name, after) = match action {
        LeaseAction::Nothing => return,
        LeaseAction::Warn(warning) => (
            AuditAction::ClusterLeaseWarning,
            json!({"warning": warning}),
        ),
        LeaseAction::Stop { deletes_at_ms } => (
            AuditAction::ClusterLeaseStop,
            json!({"deletes_at": rfc3339(deletes_at_ms)}),
        ),
        LeaseAction::Delete => (AuditAction::ClusterLeaseDelete, json!({})),
    };
    let mut after = after;
    if let Some(expires) = cluster.lease_expires_ms {
        after["expires"] = json!(rfc3339(expires));
    }
    let entry = AuditEntry {
        id: uuid::Uuid::new_v4().to_string(),
        tenant_id: cluster.tenant_id.clone(),
        actor_id: None,
        actor_name: LEASE_ACTOR.to_owned(),
        action: name,
        target_kind: "cluster".to_owned(),
        target: cluster.name.clone(),
        address: None,
        before_json: None,
        after_json: Some(after.to_string()),
        at_ms: now_ms,
    };
    if let Err(error) = store.append_audit(&entry).await {
        tracing::warn!(%error, "lease: recording the audit entry failed");
    }
}

/// A submission's job, or `None` when another process got there first or a job runs.
fn not_busy(submitted: Result<JobId, OperationError>) -> Result<Option<JobId>, OperationError> {
    match submitted {
        Ok(job) => Ok(Some(job)),
        Err(OperationError::Busy { .. }) => Ok(None),
        Err(error) => Err(error),
    }
}

/// Records `notice` as sent and writes its hook deliveries, in one transaction; false
/// when another janitor sent it already or the lease moved meanwhile.
async fn warn(
    store: &Store,
    cluster: &Cluster,
    sent_before: Option<LeaseWarning>,
    notice: LeaseNotice,
    now_ms: i64,
) -> Result<bool, OperationError> {
    let (_turn, mut tx) = store.begin_write().await?;
    if !mark_warned(&mut tx, &cluster.id, notice, sent_before).await? {
        return Ok(false);
    }
    record_lease_expiring(&mut tx, &cluster.id, notice, now_ms).await?;
    tx.commit().await.map_err(StoreError::from)?;
    tracing::info!(cluster = %cluster.name, warning = %notice.warning, "lease: warned of its end");
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: i64 = 60_000;

    fn facts(
        state: ClusterState,
        warned: Option<LeaseWarning>,
        deletes_at_ms: Option<i64>,
        grace_ms: Option<i64>,
    ) -> LeaseFacts {
        LeaseFacts {
            state,
            expires_ms: 10 * DAY_MS,
            deletes_at_ms,
            warned,
            grace_ms,
        }
    }

    #[test]
    fn what_the_janitor_does_for_a_lease_at_each_moment() {
        use ClusterState::{Active, Failed, Updating};
        use LeaseAction::{Delete, Nothing, Stop, Warn};
        use LeaseWarning::{Day, Hour};
        let end = 10 * DAY_MS;
        let grace = Some(2 * MIN);
        let stopped = Some(end + 2 * MIN);
        #[rustfmt::skip]
        let cases: &[(&str, LeaseFacts, i64, LeaseAction)] = &[
            ("two days left", facts(Active, None, None, None), end - 2 * DAY_MS, Nothing),
            ("a day left", facts(Active, None, None, None), end - DAY_MS, Warn(Day)),
            ("day warned, 5 h left", facts(Active, Some(Day), None, None), end - 5 * 60 * MIN, Nothing),
            ("day warned, an hour left", facts(Active, Some(Day), None, None), end - HOUR_MS, Warn(Hour)),
            ("unwarned, 30 min left", facts(Active, None, None, None), end - 30 * MIN, Warn(Hour)),
            ("hour warned", facts(Active, Some(Hour), None, None), end - MIN, Nothing),
            ("a busy cluster is warned", facts(Updating, None, None, None), end - MIN, Warn(Hour)),
            ("ended, no grace", facts(Active, Some(Hour), None, None), end, Delete),
            ("ended, grace", facts(Active, Some(Hour), None, grace), end, Stop { deletes_at_ms: end + 2 * MIN }),
            ("ended unwarned, grace", facts(Active, None, None, grace), end + MIN, Stop { deletes_at_ms: end + 2 * MIN }),
            ("ended while busy", facts(Updating, None, None, grace), end + MIN, Nothing),
            ("ended failed, in grace", facts(Failed, None, None, grace), end + MIN, Nothing),
            ("ended failed, no grace", facts(Failed, None, None, None), end + MIN, Delete),
            ("grace over before it was stopped", facts(Active, None, None, grace), end + 2 * MIN, Delete),
            ("stopped, in grace", facts(Active, Some(Hour), stopped, None), end + MIN, Nothing),
            ("stopped, grace over", facts(Active, Some(Hour), stopped, None), end + 2 * MIN, Delete),
            ("stop failed, grace over", facts(Failed, None, stopped, None), end + 3 * MIN, Delete),
            ("stopped, a job runs", facts(Updating, None, stopped, None), end + 3 * MIN, Nothing),
        ];
        for (name, facts, now, expected) in cases {
            assert_eq!(decide(facts, *now), *expected, "{name}");
        }
    }
}
