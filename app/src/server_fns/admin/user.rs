//! One user the admin manages, by username (unique across tenants); another
//! tenant's user is "not found" to a tenant admin.

use leptos::prelude::*;

use crate::error::UiError;
use crate::model::admin::UserDetail;

#[server(prefix = "/sfn", endpoint = "admin-user")]
pub async fn admin_user(username: String) -> Result<UserDetail, UiError> {
    let caller = crate::session::caller().await?;
    super::caller::require_admin(&caller)?;
    let user = super::users::user_rows(&caller)
        .await?
        .into_iter()
        .find(|user| user.username == username)
        .ok_or_else(|| UiError::NotFound(format!("user {username:?}")))?;
    Ok(UserDetail {
        is_me: user.id == caller.principal.user_id,
        viewer_is_superadmin: caller.principal.is_superadmin(),
        user,
    })
}
