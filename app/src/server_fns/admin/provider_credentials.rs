//! A provider's credentials in the administered tenant: which fields are set (never
//! their values), setting them from a pasted JSON object, and removing them.

use leptos::prelude::*;

use crate::error::UiError;
pub use api_types::ProviderCredentialsView;

#[server(prefix = "/sfn", endpoint = "admin-provider-credentials")]
pub async fn provider_credentials(name: String) -> Result<ProviderCredentialsView, UiError> {
    let caller = super::caller::caller().await?;
    super::caller::require_admin(&caller)?;
    Ok(crate::session::service()?
        .provider_credentials(&caller, &name)
        .await?)
}

/// Sets the credentials; the answer holds the field names only, and the form's text
/// area is emptied, so the secret is never sent back to the browser.
#[server(prefix = "/sfn", endpoint = "admin-set-provider-credentials")]
pub async fn set_provider_credentials(
    csrf: String,
    name: String,
    credentials: String,
) -> Result<ProviderCredentialsView, UiError> {
    let caller = super::caller::admin_checked(&csrf).await?;
    Ok(crate::session::service()?
        .set_provider_credentials(&caller, &name, &credentials)
        .await?)
}

#[server(prefix = "/sfn", endpoint = "admin-delete-provider-credentials")]
pub async fn delete_provider_credentials(
    csrf: String,
    name: String,
) -> Result<ProviderCredentialsView, UiError> {
    let caller = super::caller::admin_checked(&csrf).await?;
    Ok(crate::session::service()?
        .delete_provider_credentials(&caller, &name)
        .await?)
}
