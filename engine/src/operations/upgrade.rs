//! Upgrading a cluster to the tenant's current catalog, and rolling a failed upgrade
//! back: the definitions each job runs, the steps, and the batches.
//!
//! The decisions are `domain::upgrade`'s; this module reads the catalogs they compare
//! and refuses what cannot be upgraded (a removed template or service, a layout the new
//! template no longer allows) with what to do about it.

use std::collections::BTreeSet;

use domain::catalog::{Catalog, ClusterTemplate, EntityKind};
use domain::layout::Layout;
use domain::names::{ProviderName, TemplateName};
use domain::plan::{plan, upgrade_batches, PlanOperation, Upgrade};
use domain::solver::{solve_with_existing, Existing, LayoutProblem, SolveRequest};
use domain::upgrade::{
    drift, service_upgrades, upgrade_graph, DriftKind, EntityDrift, UpgradeSteps,
};

use super::{OperationError, Preview};
use crate::queue::{JobId, Queue, TaskState};
use crate::store::clusters::Cluster;
use crate::store::Store;

/// What an upgrade (or the rollback of one) shows and runs beyond its plan.
#[derive(Debug, Clone)]
pub struct UpgradePreview {
    /// The entities whose definitions change, each before and after.
    pub drift: Vec<EntityDrift>,
    pub steps: UpgradeSteps,
    /// The node numbers of each batch, in order.
    pub batches: Vec<Vec<u32>>,
    /// The definitions the job's steps run (stops aside), committed to the cluster
    /// when it succeeds.
    pub catalog: Catalog,
    /// The definitions the job's stops run: those it replaces.
    pub stop_catalog: Catalog,
}

/// Plans moving `cluster` (built with `snapshot`, laid out as `committed`) to the
/// tenant's current definitions, `max_unavailable` nodes of a service at a time.
pub(super) async fn preview(
    store: &Store,
    cluster: &Cluster,
    snapshot: &Catalog,
    committed: &Layout,
    max_unavailable: u32,
) -> Result<(Preview, UpgradePreview), OperationError> {
    if max_unavailable == 0 {
        return Err(OperationError::Invalid(
            "max_unavailable must be at least 1".into(),
        ));
    }
    let current = crate::catalog::load(store, &cluster.tenant_id).await?;
    let template_name = TemplateName::parse(cluster.template_name.clone())
        .map_err(|error| OperationError::Invalid(error.to_string()))?;
    let template = match current.resolved_template(&template_name) {
        Ok(template) => template,
        Err(_) if current.clustertemplate(template_name.as_str()).is_none() => {
            return Err(OperationError::Invalid(format!(
                "template {template_name} is no longer in the catalog, so cluster {} has \
                 nothing to upgrade to (restore the template, or keep the cluster as it is)",
                cluster.name
            )))
        }
        Err(error) => {
            return Err(OperationError::BadTemplate {
                template: cluster.template_name.clone(),
                message: error.message(),
            })
        }
    };
    let found = drift(snapshot, &current, Some(&template));
    refuse_removed(cluster, committed, &found)?;
    if found.is_empty() {
        return Err(OperationError::Invalid(format!(
            "cluster {} already runs the catalog's current definitions: nothing to upgrade",
            cluster.name
        )));
    }
    check_layout_allowed(cluster, &current, &template, committed)?;
    let target = crate::catalog::snapshot(&current, &template, &cluster.provider, committed);
    super::check_automators(&target, committed)?;
    // Stated, not left to the cluster's: a rollback of this job reads them here.
    let stop_catalog = snapshot.clone();
    plan_move(
        committed,
        found,
        stop_catalog,
        target,
        None,
        max_unavailable,
    )
}

/// Plans undoing the upgrade `job_id` (failed or done), which moved the cluster from
/// `previous` to `upgraded` definitions: on the nodes it touched, the services it
/// changed are stopped with its definitions and brought back with the previous ones,
/// which the cluster keeps again once this job succeeds.
pub(super) async fn preview_rollback(
    queue: &Queue,
    committed: &Layout,
    job_id: &JobId,
    upgraded: Catalog,
    previous: Catalog,
) -> Result<(Preview, UpgradePreview), OperationError> {
    let touched: BTreeSet<u32> = queue
        .job_tasks(job_id)
        .await?
        .into_iter()
        .filter(|task| task.state == TaskState::Succeeded || task.attempts > 0)
        .map(|task| task.node)
        .collect();
    let template = previous.clustertemplates.values().next();
    let found = drift(&upgraded, &previous, template);
    plan_move(committed, found, upgraded, previous, Some(touched), 1)
}

/// The plan moving the services of `committed` from the `from` definitions to the
/// `to` ones (on `nodes`, or all), and what it runs beside it.
fn plan_move(
    committed: &Layout,
    found: Vec<EntityDrift>,
    from: Catalog,
    to: Catalog,
    nodes: Option<BTreeSet<u32>>,
    max_unavailable: u32,
) -> Result<(Preview, UpgradePreview), OperationError> {
    let on_cluster = committed.services().into_iter().cloned().collect();
    let steps = service_upgrades(&from, &to, &on_cluster);
    let upgrade = Upgrade {
        steps: steps.clone(),
        nodes,
        max_unavailable,
    };
    let dag = plan(
        committed,
        committed,
        &PlanOperation::Upgrade(upgrade.clone()),
        &upgrade_graph(&from, &to),
    )?;
    Ok((
        Preview {
            from: committed.clone(),
            to: committed.clone(),
            dag,
        },
        UpgradePreview {
            drift: found,
            steps,
            batches: upgrade_batches(committed, &upgrade),
            catalog: to,
            stop_catalog: from,
        },
    ))
}

/// Refuses an upgrade that would leave a service on the cluster without a definition.
fn refuse_removed(
    cluster: &Cluster,
    committed: &Layout,
    found: &[EntityDrift],
) -> Result<(), OperationError> {
    let on_cluster = committed.services();
    let removed: Vec<&str> = found
        .iter()
        .filter(|entity| entity.kind == EntityKind::Service && entity.drift == DriftKind::Removed)
        .map(|entity| entity.name.as_str())
        .filter(|name| on_cluster.iter().any(|service| service.as_str() == *name))
        .collect();
    if removed.is_empty() {
        return Ok(());
    }
    Err(OperationError::Invalid(format!(
        "service(s) {} of cluster {} are no longer in the catalog: remove them from the \
         cluster first (change remove-services), or restore them in the catalog",
        removed.join(", "),
        cluster.name
    )))
}

/// Refuses an upgrade whose template no longer allows the cluster as it is laid out,
/// with the solver's reason and what to do.
fn check_layout_allowed(
    cluster: &Cluster,
    current: &Catalog,
    template: &ClusterTemplate,
    committed: &Layout,
) -> Result<(), OperationError> {
    if committed.nodes.is_empty() {
        // No node yet (its create has not finished): nothing the template could refuse.
        return Ok(());
    }
    let size = u32::try_from(committed.size()).unwrap_or(u32::MAX);
    let services: Vec<String> = committed
        .services()
        .into_iter()
        .map(ToString::to_string)
        .collect();
    let request = SolveRequest {
        size,
        services: Some(services),
        provider: ProviderName::parse(cluster.provider.clone()).ok(),
        hardwaretype: None,
        imagetype: None,
    };
    let refused = |reason: String| {
        OperationError::Invalid(format!(
            "the current template {} no longer allows cluster {} as it is: {reason}; \
             change the cluster first (add nodes, or remove the service) or fix the template",
            template.name, cluster.name
        ))
    };
    let problem = LayoutProblem::from_catalog(current, template, &request)
        .map_err(|unsatisfiable| refused(unsatisfiable.to_string()))?;
    let solved = solve_with_existing(
        &problem,
        &Existing {
            nodes: committed.nodes.clone(),
            extend_nodes: false,
            grow_up_to: None,
        },
    )
    .map_err(|unsatisfiable| refused(unsatisfiable.to_string()))?;
    if solved.nodes != committed.nodes {
        return Err(refused(format!(
            "it would need {} nodes laid out differently (it has {})",
            solved.size(),
            committed.size()
        )));
    }
    Ok(())
}
