//! A provider's credentials in the administered tenant: setting them from a pasted JSON
//! object, and removing them (which fields are set comes with the provider's page).

use leptos::prelude::*;

use crate::error::UiError;
pub use api_types::ProviderCredentialsView;

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
        .set_provider_credentials(
            &caller,
            &name,
            engine::service::CredentialsOwner::Tenant,
            &credentials,
        )
        .await?)
}

#[server(prefix = "/sfn", endpoint = "admin-delete-provider-credentials")]
pub async fn delete_provider_credentials(
    csrf: String,
    name: String,
) -> Result<ProviderCredentialsView, UiError> {
    let caller = super::caller::admin_checked(&csrf).await?;
    Ok(crate::session::service()?
        .delete_provider_credentials(&caller, &name, engine::service::CredentialsOwner::Tenant)
        .await?)
}
