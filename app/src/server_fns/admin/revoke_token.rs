//! Revoke one of the admin's API tokens.

use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-revoke-token")]
pub async fn revoke_token(csrf: String, id: String) -> Result<(), UiError> {
    let caller = crate::session::caller_checked(&csrf).await?;
    crate::session::service()?
        .revoke_token(&caller, &id)
        .await?;
    leptos_axum::redirect("/admin/tokens?revoked=1");
    Ok(())
}
