//! The rollouts page's data: the tenant's catalog rollouts, newest first, each with
//! its clusters. Read-only: a rollout is started from the CLI or the API.

use api_types::RolloutView;
use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-rollouts")]
pub async fn rollouts_page() -> Result<Vec<RolloutView>, UiError> {
    let caller = super::caller::caller().await?;
    // The API lets every user of the tenant read rollouts; the console is for admins.
    super::caller::require_admin(&caller)?;
    Ok(crate::session::service()?.rollouts(&caller).await?)
}
