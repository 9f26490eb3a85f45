//! The tenant's live clusters.

use leptos::prelude::*;

use crate::error::UiError;
use crate::model::ClusterRow;

#[server(prefix = "/sfn", endpoint = "list-clusters")]
pub async fn list_clusters() -> Result<Vec<ClusterRow>, UiError> {
    let caller = crate::session::caller().await?;
    let service = crate::session::service()?;
    let usernames = service.usernames(&caller).await?;
    let page = engine::service::PageRequest {
        offset: 0,
        limit: engine::service::MAX_PAGE,
    };
    let mut rows = Vec::new();
    for view in service.list_clusters(&caller, page).await?.items {
        let limits = service.lease_limits(&caller, &view.id).await?;
        rows.push(ClusterRow::from_view(view, &usernames, limits));
    }
    Ok(rows)
}
