//! An admin revokes one of a user's API tokens (a lost laptop, a leaked CI secret).

use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-revoke-user-token")]
pub async fn revoke_user_token(csrf: String, user_id: String, id: String) -> Result<(), UiError> {
    let caller = crate::session::caller_checked(&csrf).await?;
    let service = crate::session::service()?;
    service.revoke_user_token(&caller, &user_id, &id).await?;
    let user = service.user(&caller, &user_id).await?;
    leptos_axum::redirect(&format!(
        "/admin/users/{}?saved=token",
        crate::query::encode_value(&user.username)
    ));
    Ok(())
}
