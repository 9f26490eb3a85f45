//! A page of the tenant's live clusters, filtered and paged in the database.

use api_types::ClusterList;
use leptos::prelude::*;

use crate::error::UiError;

/// The page after `cursor` (the first when blank) of the clusters matching the
/// filters; a blank filter keeps every cluster, an unknown state too.
#[server(prefix = "/sfn", endpoint = "list-clusters")]
pub async fn list_clusters(
    state: String,
    template: String,
    q: String,
    mine: bool,
    cursor: String,
) -> Result<ClusterList, UiError> {
    let caller = crate::session::caller().await?;
    let blank = |text: String| (!text.trim().is_empty()).then_some(text);
    let request = engine::service::ClusterListRequest {
        state: state.parse().ok(),
        template: blank(template),
        q: blank(q),
        mine,
        cursor: blank(cursor),
        ..Default::default()
    };
    Ok(crate::session::service()?
        .list_clusters(&caller, &request)
        .await?)
}
