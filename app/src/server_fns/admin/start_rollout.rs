//! Start a rollout of a template's current revision across its clusters that are
//! behind (what the page previewed), as `POST /api/v1/catalog/rollouts` does; the
//! page then shows it at the top of its list.

use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-start-rollout")]
pub async fn start_rollout(
    csrf: String,
    template: String,
    max_parallel: String,
) -> Result<api_types::RolloutView, UiError> {
    let caller = super::caller::admin_checked(&csrf).await?;
    let request = api_types::RolloutRequest {
        template: template.trim().to_owned(),
        max_parallel: super::rollouts::max_parallel(&max_parallel)?,
        dry_run: false,
    };
    let started = crate::session::service()?
        .start_rollout(&caller, &request)
        .await
        .map_err(|error| super::quota::on_field(error.into(), "max_parallel"))?;
    // A started rollout always has its record; without one nothing was started.
    let rollout = started.rollout.ok_or(UiError::Internal)?;
    // Without JavaScript the browser follows this to the list, the new rollout first.
    leptos_axum::redirect(&format!("/admin/rollouts?started={}", rollout.id));
    Ok(rollout)
}
