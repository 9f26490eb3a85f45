//! Create an API token; its secret is returned this once (to the page that shows
//! it), never stored readable.

use leptos::prelude::*;

use crate::error::UiError;
use crate::server_fns::admin::NewToken;

#[server(prefix = "/sfn", endpoint = "admin-create-token")]
pub async fn create_token(
    csrf: String,
    name: String,
    days: String,
    read_only: Option<String>,
) -> Result<NewToken, UiError> {
    let caller = crate::session::caller_checked(&csrf).await?;
    let expires_in_seconds = match days.trim() {
        "" => None,
        raw => match raw.parse::<u64>() {
            Ok(days) if days > 0 => Some(days.saturating_mul(86_400)),
            _ => {
                return Err(UiError::field(
                    "days",
                    "enter a number of days (1 or more), or leave it blank",
                ))
            }
        },
    };
    let request = engine::service::TokenRequest {
        name: name.trim().to_owned(),
        expires_in_seconds,
        renew_on_use: false,
        scope: if read_only.is_some() {
            engine::store::tokens::TokenScope::ReadOnly
        } else {
            engine::store::tokens::TokenScope::Full
        },
    };
    let created = crate::session::service()?
        .create_token(&caller, &request)
        .await
        .map_err(|error| super::quota::on_field(error.into(), "name"))?;
    Ok(NewToken {
        name: created.token.name,
        secret: created.secret,
    })
}
