//! Extend a cluster's lease by some hours from now.

use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "extend-lease")]
pub async fn extend_lease(csrf: String, id: String, hours: String) -> Result<(), UiError> {
    let caller = crate::session::caller_checked(&csrf).await?;
    let hours: u64 = hours
        .trim()
        .parse()
        .ok()
        .filter(|hours| *hours > 0)
        .ok_or_else(|| UiError::field("hours", "enter a whole number of hours, at least 1"))?;
    crate::session::service()?
        .extend_lease(
            &caller,
            &id,
            &engine::service::LeaseExtension {
                seconds: hours.saturating_mul(3600),
            },
        )
        .await?;
    Ok(())
}
