//! The tenant's live clusters.

use api_types::ClusterView;
use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "list-clusters")]
pub async fn list_clusters() -> Result<Vec<ClusterView>, UiError> {
    let caller = crate::session::caller().await?;
    let page = engine::service::PageRequest {
        offset: 0,
        limit: engine::service::MAX_PAGE,
    };
    Ok(crate::session::service()?
        .list_clusters(&caller, page)
        .await?
        .items)
}
