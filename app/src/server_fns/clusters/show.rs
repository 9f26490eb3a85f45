//! Everything the cluster page shows.

use leptos::prelude::*;

use super::ClusterPage;
use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "cluster-page")]
pub async fn load_cluster_page(id: String) -> Result<ClusterPage, UiError> {
    let caller = crate::session::caller().await?;
    let service = crate::session::service()?;
    let detail = service.cluster(&caller, &id).await?;
    let layout: Option<domain::layout::Layout> =
        serde_json::from_value(detail.cluster.layout.clone()).ok();
    let config = serde_json::to_string_pretty(&detail.cluster.config).unwrap_or_default();
    let present: std::collections::BTreeSet<String> = detail
        .nodes
        .iter()
        .flat_map(|node| node.services.iter().cloned())
        .collect();
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
    Ok(ClusterPage {
        cluster: detail.cluster,
        layout,
        config,
        nodes: detail.nodes,
        jobs: detail.jobs,
        addable_services,
        links: detail.links,
    })
}
