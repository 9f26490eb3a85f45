//! Plugin resources (scripts, archives, files) of the administered tenant: every
//! version, which one is staged.

use leptos::prelude::*;

use crate::error::UiError;
use crate::model::admin::ResourceRow;

#[server(prefix = "/sfn", endpoint = "admin-resources")]
pub async fn list_resources() -> Result<Vec<ResourceRow>, UiError> {
    let caller = super::caller::caller().await?;
    super::caller::require_admin(&caller)?;
    Ok(crate::session::service()?
        .list_resources(&caller, super::caller::all())
        .await?
        .items
        .into_iter()
        .map(|resource| ResourceRow {
            kind: resource.kind,
            name: resource.name,
            version: resource.version,
            sha256: resource.sha256,
            size_bytes: resource.size_bytes,
            staged: resource.staged,
            created_at_ms: resource.created_at_ms,
        })
        .collect())
}
