//! A superadmin sets a tenant's quotas (blank = no limit).

use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-update-quotas")]
pub async fn update_quotas(
    csrf: String,
    id: String,
    max_clusters: String,
    max_nodes: String,
) -> Result<(), UiError> {
    let caller = crate::session::caller_checked(&csrf).await?;
    let update = engine::service::QuotaUpdate {
        max_clusters: super::quota::limit("max_clusters", &max_clusters)?,
        max_nodes: super::quota::limit("max_nodes", &max_nodes)?,
    };
    crate::session::service()?
        .update_quotas(&caller, &id, &update)
        .await?;
    leptos_axum::redirect("/admin/tenants?saved=1");
    Ok(())
}
