//! `/api/v1/catalog/rollouts`: a template's new catalog revision rolled out across the
//! tenant's clusters built from it (issue 40). Starting one is for tenant admins; the
//! listing and records are the tenant's to read.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use engine::service::{RolloutRequest, RolloutStarted, RolloutView};

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, ApiPath, Authenticated};
use crate::http::AppState;

/// List the template's clusters that are behind its current revision, each with its
/// plan summary and whether it is pinned, and (unless `dry_run`) start upgrading them,
/// at most `max_parallel` at a time, stopping at the first that fails. Tenant admins.
#[utoipa::path(post, path = "/catalog/rollouts", tag = "catalog", request_body = RolloutRequest,
    responses((status = 200, description = "The dry run's listing", body = RolloutStarted),
              (status = 201, description = "The listing and the rollout started", body = RolloutStarted),
              (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
              (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn start(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiJson(request): ApiJson<RolloutRequest>,
) -> Result<(StatusCode, Json<RolloutStarted>), ApiError> {
    let started = state.service.start_rollout(&caller, &request).await?;
    let status = if started.rollout.is_some() {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(started)))
}

/// The tenant's rollouts, newest first, each with its clusters' outcomes and jobs.
#[utoipa::path(get, path = "/catalog/rollouts", tag = "catalog",
    responses((status = 200, body = Vec<RolloutView>)))]
pub async fn list(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
) -> Result<Json<Vec<RolloutView>>, ApiError> {
    Ok(Json(state.service.rollouts(&caller).await?))
}

/// One rollout: its record, and each cluster's outcome and job.
#[utoipa::path(get, path = "/catalog/rollouts/{id}", tag = "catalog",
    params(("id" = String, Path, description = "Rollout id")),
    responses((status = 200, body = RolloutView), (status = 404, body = ErrorBody)))]
pub async fn show(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<RolloutView>, ApiError> {
    Ok(Json(state.service.rollout(&caller, &id).await?))
}
