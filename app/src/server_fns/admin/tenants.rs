//! Tenants: every tenant for a superadmin, one's own for a tenant admin, each with
//! what it holds (live clusters, users) so the page can say why a delete is refused.

use leptos::prelude::*;

use crate::error::UiError;
use crate::server_fns::admin::TenantRow;

#[server(prefix = "/sfn", endpoint = "admin-tenants")]
pub async fn list_tenants() -> Result<Vec<TenantRow>, UiError> {
    // The real caller, not the switched scope: the list is of all tenants.
    let caller = crate::session::caller().await?;
    super::caller::require_admin(&caller)?;
    let service = crate::session::service()?;
    let tenants = service
        .list_tenants(&caller, super::caller::all())
        .await?
        .items;
    let mut rows = Vec::with_capacity(tenants.len());
    for tenant in tenants {
        let usage = service.tenant_usage(&caller, &tenant.id).await?;
        rows.push(TenantRow {
            is_default: tenant.id == engine::store::tenants::DEFAULT_TENANT_ID,
            tenant,
            live_clusters: usage.live_clusters,
            users: usage.users,
        });
    }
    Ok(rows)
}

/// What the tenants page says about the `local` provider on this server when its
/// nodes would run as the server's own OS user (the server is not root); `None` when
/// they get unprivileged users of their own.
#[server(prefix = "/sfn", endpoint = "admin-local-nodes-note")]
pub async fn local_nodes_note() -> Result<Option<String>, UiError> {
    use engine::provider::NodeIsolation;

    let caller = crate::session::caller().await?;
    super::caller::require_admin(&caller)?;
    let isolation = NodeIsolation::of_this_process();
    Ok((isolation == NodeIsolation::ServerUser).then(|| isolation.explanation().to_owned()))
}
