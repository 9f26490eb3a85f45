//! The signed-in admin's own API tokens (never their secrets).

use leptos::prelude::*;

use crate::error::UiError;
use crate::model::admin::TokenRow;

#[server(prefix = "/sfn", endpoint = "admin-tokens")]
pub async fn list_tokens() -> Result<Vec<TokenRow>, UiError> {
    let caller = crate::session::caller().await?;
    super::caller::require_admin(&caller)?;
    Ok(crate::session::service()?
        .list_tokens(&caller, super::caller::all())
        .await?
        .items
        .into_iter()
        .map(token_row)
        .collect())
}

/// A token as the console lists it.
#[cfg(feature = "ssr")]
pub fn token_row(token: engine::service::TokenView) -> TokenRow {
    TokenRow {
        id: token.id,
        name: token.name,
        created_at_ms: token.created_at_ms,
        last_used_at_ms: token.last_used_at_ms,
        expires_at_ms: token.expires_at_ms,
        revoked_at_ms: token.revoked_at_ms,
        read_only: token.scope == engine::store::tokens::TokenScope::ReadOnly,
        renews_on_use: token.renews_on_use,
    }
}
