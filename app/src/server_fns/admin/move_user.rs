//! A superadmin moves a user to another tenant, once the user's page has said what
//! the move does. The service refuses tenant admins, superadmins as the user moved,
//! and a tenant that does not exist or is the user's own.

use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-move-user")]
pub async fn move_user(csrf: String, id: String, tenant: String) -> Result<(), UiError> {
    let caller = crate::session::caller_checked(&csrf).await?;
    let request = engine::service::UserMove { tenant };
    let user = crate::session::service()?
        .move_user(&caller, &id, &request)
        .await?;
    leptos_axum::redirect(&format!(
        "/admin/users/{}?saved=tenant",
        crate::query::encode_value(&user.username)
    ));
    Ok(())
}
