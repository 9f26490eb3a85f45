//! Changing a live cluster: add or remove services or nodes, reconfigure,
//! start/stop/restart, upgrade to the catalog's current definitions, roll back a
//! failed job, delete. Each is solved against the
//! cluster's own catalog snapshot (plus, for added services, their current definitions)
//! and planned from the cluster's committed layout.

use std::collections::BTreeSet;

use domain::catalog::coopr::{export_bundle, import_bundle};
use domain::catalog::Catalog;
use domain::change::{layouts, LayoutChange, Layouts};
use domain::layout::Layout;
use domain::names::ServiceName;
use domain::plan::{plan, Action, PlanOperation, ServiceGraph, TaskDag};
use domain::solver::{LayoutProblem, NodesToRemove, SolveRequest};
use serde_json::{Map, Value};

use super::upgrade::UpgradePreview;
use super::{layout_json, ClusterState, OperationError, Preview};
use crate::queue::{ClusterEffects, JobId, JobState, Queue, SubmitOptions, TaskState};
use crate::store::clusters::{lock_cluster_state, update_catalog_and_config, Cluster};
use crate::store::{Store, StoreError};

/// A change to an existing cluster. From the API's `ClusterChangeRequest` by `TryFrom`
/// (in [`crate::service`], which checks each field); a delete has no request.
#[derive(Debug, Clone, PartialEq)]
pub enum ClusterChange {
    /// Services (or aliases) to add; they go onto existing nodes where the template allows.
    AddServices { services: Vec<String> },
    /// Nodes to add, with the cluster's current services laid out by the solver.
    AddNodes { count: u32 },
    /// Nodes to take away (scale in): a count the solver picks, or named nodes. What
    /// stays is configured for the smaller cluster first, then the leaving nodes'
    /// services stop and are removed, then the nodes are deleted.
    RemoveNodes { which: NodesToRemove },
    /// Services (or aliases) to stop and remove on every node that runs them; refused
    /// while a service that stays requires one of them.
    RemoveServices { services: Vec<String> },
    /// Re-run bootstrap and configure everywhere (after merging `config`), optionally
    /// restarting each service around its configure.
    Reconfigure {
        restart: bool,
        config: Option<Map<String, Value>>,
    },
    Start {
        services: Option<BTreeSet<ServiceName>>,
    },
    Stop {
        services: Option<BTreeSet<ServiceName>>,
    },
    Restart {
        services: Option<BTreeSet<ServiceName>>,
    },
    /// Undo what a failed or cancelled job of this cluster did (for an upgrade: bring
    /// the definitions the cluster kept back on the nodes it touched).
    Rollback { job_id: JobId },
    /// Move the cluster to the tenant's current definitions of its template and of
    /// every entity it uses, running only what changed, at most `max_unavailable`
    /// nodes of a service at a time (see [`super::upgrade`]).
    Upgrade { max_unavailable: u32 },
    /// Give each of `nodes` a successor of the same hardware and image type with the
    /// same services, configure the cluster around the successors, then tear the old
    /// nodes down (their failed stops are passed over: a node being replaced may be
    /// gone). Nodes with stateful services need `accept_data_loss`.
    ReplaceNodes {
        nodes: BTreeSet<u32>,
        accept_data_loss: bool,
    },
    /// Stop and remove every service, then delete every node. A forced delete reports
    /// a failed stop or remove step and goes on, so that the nodes are deleted even when
    /// a service cannot be stopped (a broken script, a node that is gone).
    Delete { force: bool },
    /// Bootstrap every node again, which puts the current users' keys on it (see
    /// [`crate::execute`]'s bootstrap); no service is touched.
    SyncKeys,
}

impl ClusterChange {
    /// The operation its job is stored and shown as.
    pub fn operation(&self) -> api_types::Operation {
        use api_types::Operation as Op;
        match self {
            ClusterChange::AddServices { .. } => Op::AddServices,
            ClusterChange::AddNodes { .. } => Op::AddNodes,
            ClusterChange::RemoveNodes { .. } => Op::RemoveNodes,
            ClusterChange::RemoveServices { .. } => Op::RemoveServices,
            ClusterChange::Reconfigure { .. } => Op::Reconfigure,
            ClusterChange::Start { .. } => Op::Start,
            ClusterChange::Stop { .. } => Op::Stop,
            ClusterChange::Restart { .. } => Op::Restart,
            ClusterChange::Rollback { .. } => Op::Rollback,
            ClusterChange::Upgrade { .. } => Op::Upgrade,
            ClusterChange::ReplaceNodes { .. } => Op::ReplaceNodes,
            ClusterChange::SyncKeys => Op::SyncKeys,
            // A forced delete is a delete (its job says it is forced).
            ClusterChange::Delete { .. } => Op::Delete,
        }
    }
}

/// What a change would store besides its job.
#[derive(Debug, Clone)]
pub struct ChangePlan {
    pub preview: Preview,
    /// The snapshot grown by services the change brings in.
    pub snapshot: Catalog,
    /// The cluster config after the change.
    pub config: Map<String, Value>,
    /// For an upgrade and its rollback: the definitions that change, and those the
    /// job runs.
    pub upgrade: Option<UpgradePreview>,
    /// What the caller should know before going ahead (data a replacement loses).
    pub warnings: Vec<String>,
}

impl ChangePlan {
    /// The plan of an upgrade or of its rollback (which warn of nothing).
    fn of_upgrade(
        preview: Preview,
        snapshot: Catalog,
        config: Map<String, Value>,
        upgrade: UpgradePreview,
    ) -> Self {
        Self {
            preview,
            snapshot,
            config,
            upgrade: Some(upgrade),
            warnings: Vec::new(),
        }
    }
}

/// The facts of the cluster's newest job, which decide where a change starts from.
struct LastJob {
    id: JobId,
    state: JobState,
    from: Option<Layout>,
    to: Option<Layout>,
}

/// Plans `change` on `cluster` without storing anything.
pub async fn preview_change(
    queue: &Queue,
    cluster: &Cluster,
    change: &ClusterChange,
) -> Result<ChangePlan, OperationError> {
    let store = queue.store();
    let (mut snapshot, template) = super::snapshot_template(cluster)?;
    let committed: Layout = serde_json::from_str(&cluster.layout_json).map_err(|error| {
        OperationError::Invalid(format!("stored layout is unreadable: {error}"))
    })?;
    let mut config: Map<String, Value> =
        serde_json::from_str(&cluster.config_json).map_err(|error| {
            OperationError::Invalid(format!("stored config is unreadable: {error}"))
        })?;
    if !matches!(change, ClusterChange::Delete { .. }) {
        // Deleting stays possible (it is how a tenant gets off the provider).
        super::check_provider_allowed(store, &cluster.tenant_id, &snapshot, &cluster.provider)
            .await?;
    }
    let last = last_job(queue, &cluster.id).await?;
    // The layouts are domain's decision; what it needs read or checked is done here.
    let solve = |snapshot: &Catalog, change: LayoutChange| {
        let provider = domain::names::ProviderName::parse(cluster.provider.clone()).ok();
        layouts(&committed, &change, |services, size| {
            let request = SolveRequest {
                size,
                services: Some(services),
                provider: provider.clone(),
                hardwaretype: None,
                imagetype: None,
            };
            LayoutProblem::from_catalog(snapshot, &template, &request)
        })
        .map_err(OperationError::Unsatisfiable)
    };
    let mut warnings = Vec::new();
    let (Layouts { from, to }, operation) = match change {
        ClusterChange::AddServices { services } => {
            if services.is_empty() {
                return Err(OperationError::Invalid(
                    "name at least one service to add".into(),
                ));
            }
            let current = crate::catalog::load(store, &cluster.tenant_id).await?;
            bring_in(&mut snapshot, &current, services);
            let services = services.clone();
            let change = LayoutChange::AddServices { services };
            (solve(&snapshot, change)?, PlanOperation::AddServices)
        }
        ClusterChange::AddNodes { count } => {
            if *count == 0 {
                return Err(OperationError::Invalid("add at least one node".into()));
            }
            let change = LayoutChange::AddNodes { count: *count };
            (solve(&snapshot, change)?, PlanOperation::AddNodes)
        }
        ClusterChange::RemoveNodes { which } => {
            if let NodesToRemove::Named(numbers) = which {
                check_named_nodes(&cluster.name, &committed, numbers)?;
            }
            let change = LayoutChange::RemoveNodes {
                which: which.clone(),
            };
            (solve(&snapshot, change)?, PlanOperation::RemoveNodes)
        }
        ClusterChange::RemoveServices { services } => {
            let leaving = services_to_remove(cluster, &snapshot, &committed, services)?;
            let staying: Vec<String> = committed
                .services()
                .into_iter()
                .filter(|name| !leaving.contains(*name))
                .map(ToString::to_string)
                .collect();
            check_not_required(&snapshot, &staying, &leaving)?;
            let change = LayoutChange::RemoveServices { leaving };
            (solve(&snapshot, change)?, PlanOperation::RemoveServices)
        }
        ClusterChange::Reconfigure {
            restart,
            config: changes,
        } => {
            let changes = super::parameters::checked_changes(cluster, &config, changes.as_ref())?;
            for (key, value) in changes.iter().flatten() {
                config.insert(key.clone(), value.clone());
            }
            let operation = PlanOperation::Reconfigure { restart: *restart };
            (solve(&snapshot, LayoutChange::Same)?, operation)
        }
        ClusterChange::Start { services }
        | ClusterChange::Stop { services }
        | ClusterChange::Restart { services } => {
            // The same services on the same layout: only what is done to them differs.
            let services = services.clone();
            let operation = match change {
                ClusterChange::Start { .. } => PlanOperation::Start { services },
                ClusterChange::Stop { .. } => PlanOperation::Stop { services },
                _ => PlanOperation::Restart { services },
            };
            (solve(&snapshot, LayoutChange::Same)?, operation)
        }
        ClusterChange::Rollback { job_id } => {
            let Some(last) = last.filter(|last| &last.id == job_id) else {
                return Err(OperationError::Invalid(format!(
                    "job {job_id} is not the newest job of cluster {}: only the newest job \
                     can be rolled back",
                    cluster.name
                )));
            };
            let catalogs = queue.job_catalogs(job_id).await?;
            if let (Some(upgraded), Some(previous)) =
                (catalogs.catalog_json, catalogs.stop_catalog_json)
            {
                // An upgrade, failed or done, goes back to the definitions it replaced.
                if !matches!(
                    last.state,
                    JobState::Failed | JobState::Cancelled | JobState::Succeeded
                ) {
                    return Err(OperationError::Invalid(format!(
                        "job {job_id} is {}: wait for it to end before rolling it back",
                        last.state
                    )));
                }
                let read = |json: &str| {
                    import_bundle(json).map_err(|error| {
                        OperationError::Invalid(format!(
                            "the definitions stored with job {job_id} are unreadable: {error}"
                        ))
                    })
                };
                let (preview, upgrade) = super::upgrade::preview_rollback(
                    queue,
                    &committed,
                    job_id,
                    read(&upgraded)?,
                    read(&previous)?,
                )
                .await?;
                return Ok(ChangePlan::of_upgrade(preview, snapshot, config, upgrade));
            }
            if !matches!(last.state, JobState::Failed | JobState::Cancelled) {
                return Err(OperationError::Invalid(format!(
                    "job {job_id} is {}: only a failed or cancelled job can be rolled back",
                    last.state
                )));
            }
            let failed = queue.job_plan(job_id).await?;
            let completed = attempted_or_done(queue, job_id).await?;
            let change = LayoutChange::Rollback {
                started: last.from,
                target: last.to,
            };
            let operation = PlanOperation::Rollback { failed, completed };
            (solve(&snapshot, change)?, operation)
        }
        ClusterChange::Upgrade { max_unavailable } => {
            let (preview, upgrade) =
                super::upgrade::preview(store, cluster, &snapshot, &committed, *max_unavailable)
                    .await?;
            return Ok(ChangePlan::of_upgrade(preview, snapshot, config, upgrade));
        }
        ClusterChange::ReplaceNodes {
            nodes,
            accept_data_loss,
        } => {
            let (to, warned) = super::replace::replacement(
                &cluster.name,
                &snapshot,
                &committed,
                nodes,
                *accept_data_loss,
            )?;
            warnings = warned;
            let from = committed.clone();
            (Layouts { from, to }, PlanOperation::ReplaceNodes)
        }
        ClusterChange::SyncKeys => (
            solve(&snapshot, LayoutChange::Same)?,
            PlanOperation::SyncKeys,
        ),
        ClusterChange::Delete { .. } => {
            // After a failed job, nodes of its target layout may exist: take them all down.
            let failed_target = match last {
                Some(LastJob {
                    state: JobState::Failed | JobState::Cancelled,
                    to,
                    ..
                }) => to,
                _ => None,
            };
            let change = LayoutChange::Delete { failed_target };
            (solve(&snapshot, change)?, PlanOperation::Delete)
        }
    };
    if matches!(
        operation,
        PlanOperation::AddServices | PlanOperation::AddNodes
    ) {
        super::check_automators(&snapshot, &to)?;
    }
    if matches!(
        operation,
        PlanOperation::AddNodes | PlanOperation::ReplaceNodes
    ) {
        super::node_limits::check_new_nodes(
            store.docker_limits(),
            &snapshot,
            &cluster.provider,
            &from,
            &to,
        )?;
    }
    if matches!(operation, PlanOperation::Delete) {
        let suspended = suspended_nodes(store, cluster).await?;
        if !suspended.is_empty() {
            // Nothing runs on a machine a lease stopped (its services were stopped
            // before it): it is deleted as it is, after the others' teardown.
            let mut running = from.clone();
            running
                .nodes
                .retain(|node| !suspended.contains(&node.number));
            let mut dag = plan(
                &running,
                &to,
                &operation,
                &ServiceGraph::from_catalog(&snapshot),
            )?;
            let stopped = from
                .nodes
                .iter()
                .map(|node| node.number)
                .filter(|number| suspended.contains(number));
            dag.append(TaskDag::node_steps(stopped, Action::Delete));
            return Ok(ChangePlan {
                preview: Preview { from, to, dag },
                snapshot,
                config,
                upgrade: None,
                warnings,
            });
        }
    }
    let (start, end) = match &operation {
        // Rollback plans from the failed job's own before/after layouts.
        PlanOperation::Rollback { .. } => (&to, &from),
        _ => (&from, &to),
    };
    let dag = plan(
        start,
        end,
        &operation,
        &ServiceGraph::from_catalog(&snapshot),
    )?;
    Ok(ChangePlan {
        preview: Preview { from, to, dag },
        snapshot,
        config,
        upgrade: None,
        warnings,
    })
}

/// The type of the provider the cluster's nodes come from (`local` when its snapshot
/// does not name it, as the steps read it).
fn providertype<'a>(snapshot: &'a Catalog, cluster: &Cluster) -> &'a str {
    snapshot
        .provider(&cluster.provider)
        .map_or(crate::provider::LOCAL_PROVIDER, |provider| {
            provider.providertype.as_str()
        })
}

/// The numbers of the cluster's nodes whose machines a lease stopped.
async fn suspended_nodes(
    store: &Store,
    cluster: &Cluster,
) -> Result<BTreeSet<u32>, OperationError> {
    Ok(store
        .list_nodes(&cluster.id)
        .await?
        .into_iter()
        .filter(|node| node.state == crate::execute::NodeState::Stopped)
        .filter_map(|node| u32::try_from(node.number).ok())
        .collect())
}

/// Refuses named nodes the cluster does not have.
pub(super) fn check_named_nodes(
    cluster_name: &str,
    committed: &Layout,
    numbers: &BTreeSet<u32>,
) -> Result<(), OperationError> {
    let unknown: Vec<String> = numbers
        .iter()
        .filter(|number| committed.node(**number).is_none())
        .map(ToString::to_string)
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    let known: Vec<String> = committed
        .nodes
        .iter()
        .map(|node| node.number.to_string())
        .collect();
    Err(OperationError::Invalid(format!(
        "cluster {} has no node {} (its nodes: {})",
        cluster_name,
        unknown.join(", "),
        known.join(", ")
    )))
}

/// The cluster's services `names` stand for (a service or an alias its services
/// provide); a name matching none of them is refused, and so is removing every service.
fn services_to_remove(
    cluster: &Cluster,
    snapshot: &Catalog,
    committed: &Layout,
    names: &[String],
) -> Result<BTreeSet<ServiceName>, OperationError> {
    if names.is_empty() {
        return Err(OperationError::Invalid(
            "name at least one service to remove".into(),
        ));
    }
    let on_cluster = committed.services();
    let mut leaving = BTreeSet::new();
    for name in names {
        let matching: Vec<&ServiceName> = on_cluster
            .iter()
            .copied()
            .filter(|service| {
                service.as_str() == name
                    || snapshot
                        .service(service.as_str())
                        .is_some_and(|known| known.answers_to(name))
            })
            .collect();
        if matching.is_empty() {
            let present: Vec<&str> = on_cluster.iter().map(|s| s.as_str()).collect();
            return Err(OperationError::Invalid(format!(
                "service {name} is not on cluster {} (its services: {})",
                cluster.name,
                present.join(", ")
            )));
        }
        leaving.extend(matching.into_iter().cloned());
    }
    if leaving.len() == on_cluster.len() {
        return Err(OperationError::Invalid(format!(
            "removing every service of cluster {} leaves nothing to run: delete the cluster              instead",
            cluster.name
        )));
    }
    Ok(leaving)
}

/// Refuses removing a service that a service staying on the cluster requires (at
/// install or at run time), unless another staying service provides it too.
fn check_not_required(
    snapshot: &Catalog,
    staying: &[String],
    leaving: &BTreeSet<ServiceName>,
) -> Result<(), OperationError> {
    let staying: Vec<&domain::catalog::Service> = staying
        .iter()
        .filter_map(|name| snapshot.service(name))
        .collect();
    let mut problems = Vec::new();
    for service in &staying {
        let dependencies = &service.dependencies;
        let stages = [
            ("to install", &dependencies.install.requires),
            ("to run", &dependencies.runtime.requires),
        ];
        for (when, required) in stages {
            for needed in required {
                let met = staying.iter().any(|s| s.answers_to(needed.as_str()));
                let gone = leaving.iter().find(|name| {
                    snapshot
                        .service(name.as_str())
                        .is_some_and(|s| s.answers_to(needed.as_str()))
                });
                if let (false, Some(gone)) = (met, gone) {
                    problems.push(format!("{} needs {gone} {when}", service.name));
                }
            }
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    problems.dedup();
    Err(OperationError::StillRequired(format!(
        "cannot remove {}: {} (remove those services too, or keep it)",
        leaving
            .iter()
            .map(ServiceName::as_str)
            .collect::<Vec<_>>()
            .join(", "),
        problems.join("; ")
    )))
}

/// Submits `change` as the cluster's next job; refused while another job runs, and on
/// a failed cluster for anything but rollback and delete.
pub async fn submit_change(
    queue: &Queue,
    cluster_id: &str,
    change: &ClusterChange,
    requested_by: Option<&str>,
    options: SubmitOptions,
    now_ms: i64,
) -> Result<JobId, OperationError> {
    let asked = Submission::Asked(options);
    submit(queue, cluster_id, change, requested_by, now_ms, asked).await
}

/// Submits a change the cluster's lease calls for (the janitor's stop at its end, the
/// start of a lease-stopped cluster whose lease is extended), recording `mark` in the
/// transaction that submits its job: refused as busy when the mark no longer applies
/// (another janitor stopped it, the lease moved), so it happens once.
pub(crate) async fn submit_lease_change(
    queue: &Queue,
    cluster_id: &str,
    change: &ClusterChange,
    mark: super::lease::LeaseMark,
    requested_by: Option<&str>,
    now_ms: i64,
) -> Result<JobId, OperationError> {
    let lease = Submission::Lease(mark);
    submit(queue, cluster_id, change, requested_by, now_ms, lease).await
}

/// Submits the change a held grow asked for (see [`super::approval`]), planned now, in
/// the transaction that marks its request approved; the cluster must still await it.
pub async fn submit_held_change(
    queue: &Queue,
    cluster_id: &str,
    change: &ClusterChange,
    requested_by: Option<&str>,
    approval: &super::approval::Approval<'_>,
    now_ms: i64,
) -> Result<JobId, OperationError> {
    let approved = Submission::Approved(approval);
    submit(queue, cluster_id, change, requested_by, now_ms, approved).await
}

/// How a change came to be submitted, beyond who asked: what each way brings to
/// [`submit`].
enum Submission<'a> {
    /// Asked for, with the asker's options.
    Asked(SubmitOptions),
    /// Called for by the cluster's lease; the mark is recorded with the job.
    Lease(super::lease::LeaseMark),
    /// A held grow's approval, marked with the job.
    Approved(&'a super::approval::Approval<'a>),
}

async fn submit(
    queue: &Queue,
    cluster_id: &str,
    change: &ClusterChange,
    requested_by: Option<&str>,
    now_ms: i64,
    how: Submission<'_>,
) -> Result<JobId, OperationError> {
    let store = queue.store();
    let (options, approval, lease) = match how {
        Submission::Asked(options) => (options, None, None),
        Submission::Lease(mark) => (SubmitOptions::default(), None, Some(mark)),
        Submission::Approved(approval) => (SubmitOptions::default(), Some(approval), None),
    };
    let cluster = store.cluster(cluster_id).await?;
    let mut plan = preview_change(queue, &cluster, change).await?;
    if let Some(mark) = lease {
        plan.preview.dag = super::lease::machine_steps(
            mark,
            std::mem::take(&mut plan.preview.dag),
            &plan.preview.to,
            &plan.snapshot,
            providertype(&plan.snapshot, &cluster),
        )?;
    }
    // The tenant's gates, after the preview and before anything is written.
    crate::hooks::check_gates(
        store,
        &cluster.tenant_id,
        crate::hooks::GateCall::change(&cluster, change, requested_by, &plan.preview),
    )
    .await?;
    let deleting = matches!(change, ClusterChange::Delete { .. });
    let options = SubmitOptions {
        effects: Some(ClusterEffects {
            running: if deleting {
                ClusterState::Deleting
            } else {
                ClusterState::Updating
            },
            succeeded: if deleting {
                ClusterState::Deleted
            } else {
                ClusterState::Active
            },
            failed: ClusterState::Failed,
            from_layout_json: Some(layout_json(&plan.preview.from)),
            to_layout_json: Some(layout_json(&plan.preview.to)),
            requested_by: requested_by.map(str::to_owned),
            forced: matches!(
                change,
                ClusterChange::Delete { force: true } | ClusterChange::ReplaceNodes { .. }
            ),
            catalog_json: job_catalog(&plan, |upgrade| &upgrade.catalog),
            stop_catalog_json: job_catalog(&plan, |upgrade| &upgrade.stop_catalog),
        }),
        non_idempotent_steps: non_idempotent_steps(
            plan.upgrade
                .as_ref()
                .map_or(&plan.snapshot, |upgrade| &upgrade.catalog),
        ),
        ..options
    };
    let (_turn, mut tx) = store.begin_write().await?;
    // Re-read under the write lock: the checks below must see the latest state.
    let state = lock_cluster_state(&mut tx, store.backend(), cluster_id).await?;
    let busy = |hint: String| OperationError::Busy {
        name: cluster.name.clone(),
        state,
        hint,
    };
    if let Some((job_id, job_state)) = queue.unfinished_jobs_in(&mut tx, cluster_id).await?.first()
    {
        return Err(busy(format!(
            "job {job_id} is {job_state}; wait for it to finish or cancel it first"
        )));
    }
    match (state, approval) {
        (ClusterState::AwaitingApproval, None) => {
            return Err(busy(
                "an approver decides its request first (corral approval list)".into(),
            ))
        }
        (ClusterState::AwaitingApproval, Some(_)) => {}
        (_, Some(_)) => return Err(busy("it no longer awaits approval".into())),
        (ClusterState::Deleted, None) => return Err(busy("it no longer exists".into())),
        (ClusterState::Failed, None)
            if !matches!(
                change,
                ClusterChange::Delete { .. } | ClusterChange::Rollback { .. }
            ) =>
        {
            return Err(busy(
                "retry or roll back its failed job, or delete the cluster".into(),
            ))
        }
        _ => {}
    }
    match lease {
        Some(mark) => {
            if !crate::store::clusters::lease::write_mark(&mut tx, cluster_id, mark).await? {
                return Err(busy(match mark {
                    super::lease::LeaseMark::Stop { .. } => {
                        "its lease moved or another process stopped it".into()
                    }
                    super::lease::LeaseMark::Resume { .. } => {
                        "its lease no longer keeps it stopped".into()
                    }
                }));
            }
        }
        None => {
            // A cluster its lease stopped only goes, or starts again when the lease
            // is extended: anything else would run it on an ended lease.
            if !matches!(change, ClusterChange::Delete { .. })
                && crate::store::clusters::lease::deletes_at(&mut tx, cluster_id)
                    .await?
                    .is_some()
            {
                return Err(busy(
                    "its lease ended and its services are stopped; extend the lease first".into(),
                ));
            }
        }
    }
    let growth = plan
        .preview
        .to
        .size()
        .saturating_sub(plan.preview.from.size()) as u64;
    if growth > 0 {
        super::quota::check_growth(&mut tx, store.backend(), &cluster.tenant_id, 0, growth).await?;
    }
    update_catalog_and_config(
        &mut tx,
        cluster_id,
        &export_bundle(&plan.snapshot).to_string(),
        &Value::Object(plan.config.clone()).to_string(),
    )
    .await?;
    let job_id = queue
        .submit_in(
            &mut tx,
            &cluster.tenant_id,
            cluster_id,
            change.operation(),
            &plan.preview.dag,
            &options,
            now_ms,
        )
        .await?;
    if let Some(approval) = approval {
        super::approval::approve_in(&mut tx, approval, job_id.as_str(), now_ms).await?;
    }
    tx.commit().await.map_err(StoreError::from)?;
    Ok(job_id)
}

/// One of the definitions an upgrade's job runs, as stored.
fn job_catalog(plan: &ChangePlan, which: impl Fn(&UpgradePreview) -> &Catalog) -> Option<String> {
    plan.upgrade
        .as_ref()
        .map(|upgrade| export_bundle(which(upgrade)).to_string())
}

/// Steps the catalog declares unsafe to repeat: `"idempotent": false` (or `"false"`)
/// among an action's fields.
pub(crate) fn non_idempotent_steps(catalog: &Catalog) -> BTreeSet<(ServiceName, Action)> {
    let mut steps = BTreeSet::new();
    for service in catalog.services.values() {
        for (action, spec) in &service.provisioner.actions {
            let declared = spec.fields.get("idempotent");
            if matches!(declared, Some(Value::Bool(false)))
                || declared.and_then(Value::as_str) == Some("false")
            {
                steps.insert((service.name.clone(), Action::from(*action)));
            }
        }
    }
    steps
}

/// Copies into `snapshot` the named services (and the services providing a named alias)
/// from the tenant's current catalog, unless the snapshot has them already.
fn bring_in(snapshot: &mut Catalog, current: &Catalog, names: &[String]) {
    for name in names {
        if snapshot.is_service_or_alias(name) {
            continue;
        }
        let found: Vec<_> = current
            .service(name)
            .into_iter()
            .chain(current.providers_of(name))
            .cloned()
            .collect();
        for service in found {
            snapshot.insert_service(service);
        }
    }
}

/// Succeeded tasks of the job, plus creates that were attempted at all: a provider may
/// have made the machine before the create failed, and deleting is safe to repeat.
async fn attempted_or_done(
    queue: &Queue,
    job_id: &JobId,
) -> Result<BTreeSet<domain::plan::TaskId>, OperationError> {
    Ok(queue
        .job_tasks(job_id)
        .await?
        .into_iter()
        .filter(|task| {
            task.state == TaskState::Succeeded
                || (task.action == Action::Create && task.attempts > 0)
        })
        .map(|task| task.number)
        .collect())
}

async fn last_job(queue: &Queue, cluster_id: &str) -> Result<Option<LastJob>, OperationError> {
    let Some((id, state, layouts)) = queue.newest_job(cluster_id).await? else {
        return Ok(None);
    };
    // An unreadable stored layout counts as none: a rollback or delete then works from
    // the cluster's committed layout.
    let layout = |json: Option<String>| json.and_then(|json| serde_json::from_str(&json).ok());
    Ok(Some(LastJob {
        id,
        state,
        from: layout(layouts.from_layout_json),
        to: layout(layouts.to_layout_json),
    }))
}
