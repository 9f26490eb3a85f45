//! An admin deletes a user of a tenant they administer (never themself; a
//! superadmin only by a superadmin). The user's sessions and tokens go with them.

use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-delete-user")]
pub async fn delete_user(csrf: String, id: String) -> Result<(), UiError> {
    let caller = crate::session::caller_checked(&csrf).await?;
    let service = crate::session::service()?;
    let user = service.user(&caller, &id).await?;
    service.delete_user(&caller, &id).await?;
    leptos_axum::redirect(&format!(
        "/admin/users?deleted={}",
        crate::query::encode_value(&user.username)
    ));
    Ok(())
}
