//! The tenant's whole catalog as a Coopr bundle: what the try-it panel solves
//! against in the browser (fetched once per page), and the export's content.

use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-catalog-bundle")]
pub async fn catalog_bundle() -> Result<serde_json::Value, UiError> {
    let caller = super::caller::caller().await?;
    super::caller::require_admin(&caller)?;
    Ok(crate::session::service()?.export_catalog(&caller).await?)
}
