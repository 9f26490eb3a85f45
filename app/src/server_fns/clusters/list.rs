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
    Ok(service
        .list_clusters(&caller, page)
        .await?
        .items
        .into_iter()
        .map(|view| ClusterRow::from_view(view, &usernames))
        .collect())
}
