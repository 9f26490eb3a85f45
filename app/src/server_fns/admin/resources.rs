//! Plugin resources (scripts, archives, files) of the administered tenant: every
//! version, which one is staged.

use api_types::ResourceView;
use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-resources")]
pub async fn list_resources() -> Result<Vec<ResourceView>, UiError> {
    let caller = super::caller::caller().await?;
    super::caller::require_admin(&caller)?;
    Ok(crate::session::service()?
        .list_resources(&caller, super::caller::all())
        .await?
        .items)
}
