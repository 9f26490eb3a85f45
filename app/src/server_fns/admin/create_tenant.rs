//! A superadmin creates a tenant, with quotas and optionally another tenant's catalog.

use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-create-tenant")]
pub async fn create_tenant(
    csrf: String,
    name: String,
    max_clusters: String,
    max_nodes: String,
    seed: Option<String>,
    local_nodes: Option<String>,
) -> Result<String, UiError> {
    let caller = crate::session::caller_checked(&csrf).await?;
    let name = name.trim().to_owned();
    if name.is_empty() {
        return Err(UiError::field("name", "give the tenant a name"));
    }
    let request = engine::service::TenantRequest {
        name,
        max_clusters: super::quota::limit("max_clusters", &max_clusters)?,
        max_nodes: super::quota::limit("max_nodes", &max_nodes)?,
        seed_catalog_from: seed.filter(|seed| !seed.trim().is_empty()),
        local_nodes: local_nodes.is_some(),
        provider_types: None,
    };
    crate::session::service()?
        .create_tenant(&caller, &request)
        .await
        .map_err(|error| super::quota::on_field(error.into(), "name"))?;
    leptos_axum::redirect("/admin/tenants?created=1");
    Ok(request.name)
}
