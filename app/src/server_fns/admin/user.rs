//! One user the admin manages, by username (unique across tenants); another
//! tenant's user is "not found" to a tenant admin.

use leptos::prelude::*;

use crate::error::UiError;
use crate::server_fns::admin::UserDetail;

#[server(prefix = "/sfn", endpoint = "admin-user")]
pub async fn admin_user(username: String) -> Result<UserDetail, UiError> {
    let caller = crate::session::caller().await?;
    super::caller::require_admin(&caller)?;
    let user = super::users::user_rows(&caller)
        .await?
        .into_iter()
        .find(|user| user.username == username)
        .ok_or_else(|| UiError::NotFound(format!("user {username:?}")))?;
    let is_me = user.id == caller.principal.user_id;
    // A superadmin's tokens are for superadmins' eyes; one's own are on /admin/tokens.
    let may_change =
        !is_me && (user.role != api_types::Role::Superadmin || caller.principal.is_superadmin());
    let tokens = if may_change {
        crate::session::service()?
            .user_tokens(&caller, &user.id, super::caller::all())
            .await?
            .items
    } else {
        Vec::new()
    };
    Ok(UserDetail {
        is_me,
        viewer_is_superadmin: caller.principal.is_superadmin(),
        tokens,
        user,
    })
}
