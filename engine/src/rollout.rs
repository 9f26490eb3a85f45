//! The rollout driver (issue 40): moves every running rollout on, from the monitor
//! loop of the worker pool that serves all tenants. What to do next is
//! [`decide::decide`] (pure); here it reads the rows, each running cluster's job and
//! health checks, and applies the steps. Everything it knows is in the database, so a
//! server killed in the middle resumes where it was: a cluster claimed but whose job
//! was never recorded gets the job submitted since its claim, or a new one.
//!
//! Upgrades go through the same service call as `corral cluster change ID upgrade`,
//! as the user who started the rollout: the same checks, audit and job.

pub mod decide;

use api_types::{ClusterChangeRequest, JobId, JobState, RolloutClusterState as C, RolloutState};

use self::decide::{Entry, Observed, Step};
use crate::execute::Executor;
use crate::principal::Principal;
use crate::service::{Caller, Service, ServiceError};
use crate::store::rollouts::{Rollout, RolloutCluster};
use crate::store::{now_ms, Store};

/// Moves every active rollout on by one round; failures are logged and retried on
/// the next tick.
pub async fn advance_all(executor: &Executor) {
    let rollouts = match executor.store().active_rollouts().await {
        Ok(rollouts) => rollouts,
        Err(error) => {
            tracing::warn!(%error, "listing rollouts failed");
            return;
        }
    };
    for rollout in rollouts {
        if let Err(error) = advance(executor, &rollout).await {
            tracing::warn!(rollout = %rollout.id, %error, "advancing a rollout failed");
        }
    }
}

/// One round of one rollout.
pub async fn advance(executor: &Executor, rollout: &Rollout) -> Result<(), ServiceError> {
    let store = executor.store();
    let rows = store.rollout_clusters(&rollout.id).await?;
    let now = now_ms();
    let mut entries = Vec::with_capacity(rows.len());
    for row in &rows {
        let observed = if row.state == C::Running {
            Some(observe(executor, rollout, row, now).await?)
        } else {
            None
        };
        entries.push(Entry {
            state: row.state,
            observed,
        });
    }
    let max_parallel = usize::try_from(rollout.max_parallel).unwrap_or(1).max(1);
    let mut state = rollout.state;
    for step in decide::decide(state, max_parallel, &entries) {
        match step {
            Step::Succeed(index) => {
                store
                    .move_rollout_cluster(
                        &rollout.id,
                        &rows[index].cluster_id,
                        C::Running,
                        C::Succeeded,
                        None,
                        Some("upgraded; its health checks are not red"),
                        now,
                    )
                    .await?;
            }
            Step::Fail(index, reason) => {
                store
                    .move_rollout_cluster(
                        &rollout.id,
                        &rows[index].cluster_id,
                        C::Running,
                        C::Failed,
                        None,
                        Some(&reason),
                        now,
                    )
                    .await?;
                tracing::warn!(rollout = %rollout.id, cluster = %rows[index].cluster_name, %reason, "a rollout's cluster failed");
            }
            Step::Stopping(reason) => {
                let failed = entries
                    .iter()
                    .zip(&rows)
                    .find(|(entry, _)| matches!(entry.observed, Some(Observed::Failed(_))))
                    .map_or("?", |(_, row)| row.cluster_name.as_str());
                let reason = format!(
                    "stopped at cluster {failed}: {reason}; the clusters after it were left untouched"
                );
                store
                    .move_rollout(
                        &rollout.id,
                        state,
                        RolloutState::Stopping,
                        Some(&reason),
                        now,
                    )
                    .await?;
                state = RolloutState::Stopping;
            }
            Step::Untouch(index) => {
                store
                    .move_rollout_cluster(
                        &rollout.id,
                        &rows[index].cluster_id,
                        C::Pending,
                        C::Untouched,
                        None,
                        Some("the rollout stopped before its turn"),
                        now,
                    )
                    .await?;
            }
            Step::Start(index) => start(executor, rollout, &rows[index], now).await?,
            Step::End(end) => {
                let reason = (end == RolloutState::Succeeded).then(|| {
                    let count = |wanted| rows.iter().filter(|row| row.state == wanted).count();
                    let upgraded = entries
                        .iter()
                        .filter(|entry| {
                            entry.state == C::Succeeded || entry.observed == Some(Observed::Passed)
                        })
                        .count();
                    format!(
                        "{upgraded} cluster(s) upgraded, {} pinned passed over",
                        count(C::SkippedPinned)
                    )
                });
                store
                    .move_rollout(&rollout.id, state, end, reason.as_deref(), now)
                    .await?;
            }
        }
    }
    Ok(())
}

/// What became of a running cluster's upgrade.
async fn observe(
    executor: &Executor,
    rollout: &Rollout,
    row: &RolloutCluster,
    now: i64,
) -> Result<Observed, ServiceError> {
    let store = executor.store();
    let job_id = match &row.job_id {
        Some(job_id) => JobId::from(job_id.as_str()),
        None => {
            if let Some(note) = &row.note {
                return Ok(Observed::Failed(note.clone()));
            }
            // Claimed, but the job was not recorded (the server stopped in between):
            // the job submitted since the claim, or a new one.
            let since = row.started_at_ms.unwrap_or(now);
            let adopted = executor
                .queue()
                .cluster_jobs(&row.cluster_id)
                .await?
                .into_iter()
                .find(|job| job.created_at_ms >= since);
            match adopted {
                Some(job) => {
                    record(store, rollout, row, Upgrade::Job(job.id.as_str()), now).await?;
                    job.id
                }
                None => {
                    submit(executor, rollout, row, now).await?;
                    return Ok(Observed::Working);
                }
            }
        }
    };
    let job = executor.queue().job(&job_id).await?;
    Ok(match job.state {
        JobState::Succeeded => {
            let checks: Vec<_> = store
                .cluster_health(&row.cluster_id)
                .await?
                .into_iter()
                .map(|check| {
                    (
                        format!("{} on node {}", check.service, check.node_number),
                        check.health,
                        check.checked_at_ms,
                    )
                })
                .collect();
            decide::health(&checks, job.finished_at_ms.unwrap_or(now), now)
        }
        JobState::Failed | JobState::Cancelled => {
            Observed::Failed(format!("its upgrade job {job_id} {}", job.state))
        }
        JobState::Queued | JobState::Running | JobState::Cancelling => Observed::Working,
    })
}

/// Claims a pending cluster and submits its upgrade.
async fn start(
    executor: &Executor,
    rollout: &Rollout,
    row: &RolloutCluster,
    now: i64,
) -> Result<(), ServiceError> {
    let claimed = executor
        .store()
        .move_rollout_cluster(
            &rollout.id,
            &row.cluster_id,
            C::Pending,
            C::Running,
            None,
            None,
            now,
        )
        .await?;
    if claimed {
        submit(executor, rollout, row, now).await?;
    }
    Ok(())
}

/// Submits the cluster's upgrade as the rollout's creator and records the job, or,
/// when it is refused, why (the next round fails the cluster with it).
async fn submit(
    executor: &Executor,
    rollout: &Rollout,
    row: &RolloutCluster,
    now: i64,
) -> Result<(), ServiceError> {
    let store = executor.store();
    let caller = match store.user(&rollout.created_by).await {
        Ok(user) => Caller::new(Principal::from_user(&user), None),
        Err(error) => {
            let note = format!("the user who started the rollout is gone ({error})");
            return record(store, rollout, row, Upgrade::Refused(&note), now).await;
        }
    };
    let service = Service::new(executor.queue().clone(), executor.resources().clone());
    let request = ClusterChangeRequest::Upgrade {
        max_unavailable: None,
    };
    match service
        .change_cluster(&caller, &row.cluster_id, &request)
        .await
    {
        Ok(submitted) if submitted.job_id.is_empty() => {
            let note = "its upgrade waits for an approval; a rollout does not wait for approvals";
            record(store, rollout, row, Upgrade::Refused(note), now).await
        }
        Ok(submitted) => {
            let job = Upgrade::Job(&submitted.job_id);
            record(store, rollout, row, job, now).await
        }
        Err(ServiceError::Internal { cause }) => Err(ServiceError::Internal { cause }),
        Err(refused) => {
            let note = format!("its upgrade was refused: {refused}");
            record(store, rollout, row, Upgrade::Refused(&note), now).await
        }
    }
}

/// What became of a running cluster's upgrade: its job, or why it has none.
enum Upgrade<'a> {
    Job(&'a str),
    Refused(&'a str),
}

/// Records `upgrade` on the cluster's row, which stays running.
async fn record(
    store: &Store,
    rollout: &Rollout,
    row: &RolloutCluster,
    upgrade: Upgrade<'_>,
    now: i64,
) -> Result<(), ServiceError> {
    let (job_id, note) = match upgrade {
        Upgrade::Job(job_id) => (Some(job_id), None),
        Upgrade::Refused(note) => (None, Some(note)),
    };
    let (id, cluster_id) = (&rollout.id, &row.cluster_id);
    store
        .move_rollout_cluster(id, cluster_id, C::Running, C::Running, job_id, note, now)
        .await?;
    Ok(())
}
