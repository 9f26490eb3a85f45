//! Users the admin may manage: a tenant admin's tenant, or every tenant for a
//! superadmin.

use leptos::prelude::*;

use crate::error::UiError;
use crate::server_fns::admin::UserRow;

#[server(prefix = "/sfn", endpoint = "admin-users")]
pub async fn list_users() -> Result<Vec<UserRow>, UiError> {
    let caller = crate::session::caller().await?;
    super::caller::require_admin(&caller)?;
    user_rows(&caller).await
}

/// The users the caller administers with their tenants' names, by tenant then name.
#[cfg(feature = "ssr")]
pub(super) async fn user_rows(caller: &engine::service::Caller) -> Result<Vec<UserRow>, UiError> {
    let service = crate::session::service()?;
    let tenants: std::collections::HashMap<String, String> = service
        .list_tenants(caller, super::caller::all())
        .await?
        .items
        .into_iter()
        .map(|tenant| (tenant.id, tenant.name))
        .collect();
    let mut rows: Vec<UserRow> = service
        .list_users(caller, super::caller::all())
        .await?
        .items
        .into_iter()
        .map(|user| UserRow {
            tenant: tenants
                .get(&user.tenant_id)
                .cloned()
                .unwrap_or(user.tenant_id),
            id: user.id,
            username: user.username,
            role: user.role,
            created_at_ms: user.created_at_ms,
        })
        .collect();
    rows.sort_by(|left, right| {
        (&left.tenant, &left.username).cmp(&(&right.tenant, &right.username))
    });
    Ok(rows)
}
