//! Everything the cluster page shows, with one page of its node table.

use leptos::prelude::*;

use super::ClusterPage;
use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "cluster-page")]
pub async fn load_cluster_page(id: String, node_page: usize) -> Result<ClusterPage, UiError> {
    use api_types::ServiceHealth;

    use super::{DOWN_NAMED, NODES_PER_PAGE};

    let caller = crate::session::caller().await?;
    let service = crate::session::service()?;
    let mut detail = service.cluster(&caller, &id).await?;
    // The page never shows the layout, and a thousand nodes' of it would weigh more
    // than the rest of the page.
    detail.cluster.layout.nodes = Vec::new();
    let config = serde_json::to_string_pretty(&detail.cluster.config).unwrap_or_default();
    let present: std::collections::BTreeSet<String> = detail
        .nodes
        .iter()
        .flat_map(|node| node.services.iter().cloned())
        .collect();
    let down: Vec<(i64, api_types::ServiceHealthView)> = detail
        .nodes
        .iter()
        .flat_map(|node| {
            node.health
                .iter()
                .filter(|health| health.health == ServiceHealth::Down)
                .map(|health| (node.number, health.clone()))
        })
        .collect();
    let node_count = detail.nodes.len();
    let node_page = node_page.clamp(1, node_count.div_ceil(NODES_PER_PAGE).max(1));
    let node_numbers = detail.nodes.iter().map(|node| node.number).collect();
    let addable_services = match service
        .entity(&caller, "clustertemplates", &detail.cluster.template)
        .await
    {
        Ok(template) => template
            .body
            .pointer("/compatibility/services")
            .and_then(serde_json::Value::as_array)
            .map(|services| {
                services
                    .iter()
                    .filter_map(serde_json::Value::as_str)
                    .filter(|service| !present.contains(*service))
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
        // The template may since have been deleted: nothing more can be added then.
        Err(engine::service::ServiceError::NotFound(_)) => Vec::new(),
        Err(other) => return Err(other.into()),
    };
    let terminal = service.node_terminal_available(&caller, &id).await;
    Ok(ClusterPage {
        terminal,
        cluster: detail.cluster,
        config,
        nodes: detail
            .nodes
            .into_iter()
            .skip((node_page - 1) * NODES_PER_PAGE)
            .take(NODES_PER_PAGE)
            .collect(),
        node_page,
        node_count,
        node_numbers,
        services: present.into_iter().collect(),
        down_count: down.len(),
        down: down.into_iter().take(DOWN_NAMED).collect(),
        jobs: detail.jobs,
        addable_services,
        links: detail.links,
        heal_note: detail.heal_note,
        approval: detail.approvals.into_iter().next(),
        pinned: detail.pinned,
        healing: detail.healing,
    })
}
