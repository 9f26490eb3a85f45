//! Sign out of this browser session.

use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "logout")]
pub async fn logout(csrf: String) -> Result<(), UiError> {
    crate::session::caller_checked(&csrf).await?;
    crate::session::request_session()?
        .flush()
        .await
        .map_err(|error| {
            tracing::error!(%error, "session not ended");
            UiError::Internal
        })?;
    leptos_axum::redirect("/login");
    Ok(())
}
