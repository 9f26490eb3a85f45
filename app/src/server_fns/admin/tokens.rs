//! The signed-in admin's own API tokens (never their secrets).

use api_types::TokenView;
use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-tokens")]
pub async fn list_tokens() -> Result<Vec<TokenView>, UiError> {
    let caller = crate::session::caller().await?;
    super::caller::require_admin(&caller)?;
    Ok(crate::session::service()?
        .list_tokens(&caller, super::caller::all())
        .await?
        .items)
}
