//! Tenants: every tenant for a superadmin, one's own for a tenant admin.

use leptos::prelude::*;

use crate::error::UiError;
use crate::model::admin::TenantRow;

#[server(prefix = "/sfn", endpoint = "admin-tenants")]
pub async fn list_tenants() -> Result<Vec<TenantRow>, UiError> {
    // The real caller, not the switched scope: the list is of all tenants.
    let caller = crate::session::caller().await?;
    super::caller::require_admin(&caller)?;
    Ok(crate::session::service()?
        .list_tenants(&caller, super::caller::all())
        .await?
        .items
        .into_iter()
        .map(|tenant| TenantRow {
            id: tenant.id,
            name: tenant.name,
            max_clusters: tenant.max_clusters,
            max_nodes: tenant.max_nodes,
            created_at_ms: tenant.created_at_ms,
        })
        .collect())
}
