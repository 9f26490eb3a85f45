//! The rollouts page's data: the tenant's catalog rollouts, newest first, each with
//! its clusters, and the templates the form offers; and a rollout's preview (the
//! API's dry run: each cluster behind with its plan summary, nothing written).

use api_types::{RolloutStarted, RolloutTemplate, RolloutView};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::UiError;

/// What the page lists and offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RolloutsPageData {
    pub rollouts: Vec<RolloutView>,
    /// The catalog's templates, those with clusters behind first.
    pub templates: Vec<RolloutTemplate>,
}

#[server(prefix = "/sfn", endpoint = "admin-rollouts")]
pub async fn rollouts_page() -> Result<RolloutsPageData, UiError> {
    let caller = super::caller::caller().await?;
    // The API lets every user of the tenant read rollouts; the console is for admins.
    super::caller::require_admin(&caller)?;
    let service = crate::session::service()?;
    Ok(RolloutsPageData {
        rollouts: service.rollouts(&caller).await?,
        templates: service.rollout_templates(&caller).await?,
    })
}

/// The form's "at most at once" as typed: blank means 1; anything but a whole
/// number is refused next to the field (0 is the service's to refuse, by name).
#[cfg(feature = "ssr")]
pub(crate) fn max_parallel(raw: &str) -> Result<u32, UiError> {
    match raw.trim() {
        "" => Ok(1),
        raw => raw.parse::<u32>().map_err(|_| {
            UiError::field(
                "max_parallel",
                format!("{raw:?} is not a number of clusters: enter a whole number, 1 or more"),
            )
        }),
    }
}

/// What starting a rollout of `template` would do, as the API's dry run answers:
/// writes nothing. Refusals as the API's: unknown template (404), `max_parallel` 0
/// (named next to its field), a tenant user (403).
#[server(prefix = "/sfn", endpoint = "admin-preview-rollout")]
pub async fn preview_rollout(
    template: String,
    max_parallel: String,
) -> Result<RolloutStarted, UiError> {
    let caller = super::caller::caller().await?;
    super::caller::require_admin(&caller)?;
    let request = api_types::RolloutRequest {
        template: template.trim().to_owned(),
        max_parallel: self::max_parallel(&max_parallel)?,
        dry_run: true,
    };
    crate::session::service()?
        .start_rollout(&caller, &request)
        .await
        .map_err(|error| super::quota::on_field(error.into(), "max_parallel"))
}
