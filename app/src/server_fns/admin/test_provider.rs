//! The provider page's Test button: the provider check, optionally with one machine.

use leptos::prelude::*;

use crate::error::UiError;
pub use api_types::ProviderTestReport;

#[server(prefix = "/sfn", endpoint = "admin-test-provider")]
pub async fn test_provider(
    csrf: String,
    name: String,
    // A checkbox: present ("on") when ticked.
    create: Option<String>,
) -> Result<ProviderTestReport, UiError> {
    let caller = super::caller::admin_checked(&csrf).await?;
    let request = api_types::ProviderTestRequest {
        create: create.is_some(),
        ..Default::default()
    };
    Ok(crate::session::service()?
        .test_provider(&caller, &name, &request)
        .await?)
}
