//! The admin overview's numbers for the administered tenant: clusters per state,
//! nodes, jobs per state, running tasks and busy workers, failed clusters and
//! tasks, catalog size, users and quotas.

use leptos::prelude::*;

use crate::error::UiError;
use crate::server_fns::admin::Overview;

#[server(prefix = "/sfn", endpoint = "admin-overview")]
pub async fn admin_overview() -> Result<Overview, UiError> {
    use std::collections::BTreeMap;

    use api_types::ClusterState;

    let caller = super::caller::caller().await?;
    super::caller::require_admin(&caller)?;
    let service = crate::session::service()?;
    let all = super::caller::all();
    let tenant = service.tenant(&caller, caller.tenant_id()).await?;
    let clusters = service.list_clusters(&caller, all).await?.items;
    // Every live state, in the enum's order, even when no cluster is in it.
    let mut by_state: BTreeMap<ClusterState, u64> = ClusterState::ALL
        .iter()
        .filter(|state| state.is_live())
        .map(|state| (*state, 0))
        .collect();
    for cluster in &clusters {
        *by_state.entry(cluster.state).or_default() += 1;
    }
    let clusters_by_state: Vec<(ClusterState, u64)> = by_state.into_iter().collect();
    let mut catalog = Vec::new();
    for kind in crate::server_fns::admin::Kind::ALL {
        let total = service.list_entities(&caller, kind.key(), all).await?.total;
        catalog.push((kind.title().to_owned(), total));
    }
    let users = service.usernames(&caller).await?.len() as u64;
    let busy = clusters
        .iter()
        .filter(|cluster| cluster.state.is_busy())
        .map(|cluster| (cluster.id.clone(), cluster.name.clone(), cluster.state))
        .collect();
    let failed = clusters
        .iter()
        .filter(|cluster| cluster.state == ClusterState::Failed)
        .map(|cluster| (cluster.id.clone(), cluster.name.clone()))
        .collect();
    let activity = service.activity(&caller).await?;
    let failed_tasks = activity
        .failed_tasks
        .into_iter()
        .map(|task| {
            let what = match &task.service {
                Some(service) => format!("node {} · {} {service}", task.node, task.action),
                None => format!("node {} · {}", task.node, task.action),
            };
            (
                task.cluster_id,
                task.job_id,
                what,
                task.error.unwrap_or_default(),
            )
        })
        .collect();
    Ok(Overview {
        jobs_by_state: activity.jobs_by_state,
        running_tasks: activity.running_tasks,
        busy_workers: activity.busy_workers,
        failed_tasks,
        tenant: tenant.name,
        clusters_by_state,
        nodes: clusters.iter().map(|cluster| cluster.size as u64).sum(),
        live_nodes: clusters
            .iter()
            .filter(|cluster| cluster.state == ClusterState::Active)
            .map(|cluster| cluster.size as u64)
            .sum(),
        catalog,
        users,
        max_clusters: tenant.max_clusters,
        max_nodes: tenant.max_nodes,
        busy,
        failed,
    })
}
