//! One user the admin manages, by username (unique across tenants); another
//! tenant's user is "not found" to a tenant admin. With the user comes what a
//! delete or a move would touch, for the page's confirmations.

use leptos::prelude::*;

use crate::error::UiError;
use crate::server_fns::admin::UserDetail;

#[server(prefix = "/sfn", endpoint = "admin-user")]
pub async fn admin_user(username: String) -> Result<UserDetail, UiError> {
    use api_types::Role;

    let caller = crate::session::caller().await?;
    super::caller::require_admin(&caller)?;
    let rows = super::users::user_rows(&caller).await?;
    let user = rows
        .iter()
        .find(|user| user.username == username)
        .cloned()
        .ok_or_else(|| UiError::NotFound(format!("user {username:?}")))?;
    let only_tenant_admin = user.role == Role::TenantAdmin
        && !rows.iter().any(|other| {
            other.id != user.id && other.tenant == user.tenant && other.role == Role::TenantAdmin
        });
    let mut detail = UserDetail {
        is_me: user.id == caller.principal.user_id,
        viewer_is_superadmin: caller.principal.is_superadmin(),
        tokens: Vec::new(),
        owned_clusters: Vec::new(),
        move_targets: Vec::new(),
        only_tenant_admin,
        user,
    };
    // A superadmin's tokens are for superadmins' eyes; one's own are on /admin/tokens.
    if detail.may_change() {
        let service = crate::session::service()?;
        detail.tokens = service
            .user_tokens(&caller, &detail.user.id, super::caller::all())
            .await?
            .items;
        detail.owned_clusters = service.owned_clusters(&caller, &detail.user.id).await?;
        detail.move_targets = move_targets(&caller, &detail).await?;
    }
    Ok(detail)
}

/// The tenants a superadmin may move the user to: every one but the user's own.
/// Superadmins stay in the default tenant, so they have none.
#[cfg(feature = "ssr")]
async fn move_targets(
    caller: &engine::service::Caller,
    detail: &UserDetail,
) -> Result<Vec<String>, UiError> {
    if !detail.viewer_is_superadmin || detail.user.role == api_types::Role::Superadmin {
        return Ok(Vec::new());
    }
    let mut names: Vec<String> = crate::session::service()?
        .list_tenants(caller, super::caller::all())
        .await?
        .items
        .into_iter()
        .map(|tenant| tenant.name)
        .filter(|name| *name != detail.user.tenant)
        .collect();
    names.sort();
    Ok(names)
}
