//! `/api/v1/clusters`: create (or dry-run), list, show, plan and submit changes,
//! extend the lease, delete.

use api_types::ClusterList;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use engine::service::{
    ClusterChangeRequest, ClusterCreateRequest, ClusterDetail, ClusterListRequest, ClusterView,
    LeaseExtension, PlanView, SubmittedJob,
};
use serde::Deserialize;
use utoipa::IntoParams;

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, ApiPath, ApiQuery, Authenticated};
use crate::http::AppState;

#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DryRun {
    /// Only check and show what would happen; change nothing.
    #[serde(default)]
    pub dry_run: bool,
}

#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeleteOptions {
    /// Go on when a service's stop or remove step fails (the failure is reported in the
    /// job's output) and delete the nodes anyway.
    #[serde(default)]
    pub force: bool,
}

/// The caller's tenant's live clusters, a page at a time, expiring first: follow
/// `next` as `cursor` until it is absent. `total` and `cost` are the whole list's.
#[utoipa::path(get, path = "/clusters", operation_id = "list_clusters", tag = "clusters", params(ClusterListRequest),
    responses(
        (status = 200, body = ClusterList),
        (status = 400, description = "A parameter is not of its type", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 422, description = "A bad limit, cursor or offset (named in details)", body = ErrorBody),
    ))]
pub async fn list(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiQuery(request): ApiQuery<ClusterListRequest>,
) -> Result<Json<ClusterList>, ApiError> {
    Ok(Json(state.service.list_clusters(&caller, &request).await?))
}

/// Create a cluster from a template, or preview it with `dry_run=true`.
#[utoipa::path(post, path = "/clusters", tag = "clusters", params(DryRun),
    request_body = ClusterCreateRequest,
    responses(
        (status = 201, description = "Created; the job builds it", body = SubmittedJob),
        (status = 200, description = "Dry run: what would be built", body = PlanView),
        (status = 409, description = "Name taken or quota exceeded", body = ErrorBody),
        (status = 422, description = "Invalid or unsatisfiable", body = ErrorBody),
    ))]
pub async fn create(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiQuery(dry): ApiQuery<DryRun>,
    ApiJson(request): ApiJson<ClusterCreateRequest>,
) -> Result<Response, ApiError> {
    if dry.dry_run {
        let plan = state.service.preview_cluster(&caller, &request).await?;
        return Ok(Json(plan).into_response());
    }
    let submitted = state.service.create_cluster(&caller, &request).await?;
    Ok((StatusCode::CREATED, Json(submitted)).into_response())
}

/// A cluster with its nodes, jobs and links (URLs with the live nodes' addresses).
#[utoipa::path(get, path = "/clusters/{id}", operation_id = "show_cluster", tag = "clusters",
    params(("id" = String, Path, description = "Cluster id, or the name of a live cluster of your tenant")),
    responses((status = 200, body = ClusterDetail), (status = 404, body = ErrorBody)))]
pub async fn show(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<ClusterDetail>, ApiError> {
    Ok(Json(state.service.cluster(&caller, &id).await?))
}

/// What a change would do (layouts and tasks), without doing it.
#[utoipa::path(post, path = "/clusters/{id}/plan", tag = "clusters",
    params(("id" = String, Path, description = "Cluster id, or the name of a live cluster of your tenant")),
    request_body = ClusterChangeRequest,
    responses((status = 200, body = PlanView), (status = 404, body = ErrorBody),
              (status = 422, body = ErrorBody)))]
pub async fn plan(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
    ApiJson(change): ApiJson<ClusterChangeRequest>,
) -> Result<Json<PlanView>, ApiError> {
    Ok(Json(
        state.service.plan_change(&caller, &id, &change).await?,
    ))
}

/// Submit a change: add services or nodes, reconfigure, start, stop, restart, roll back.
#[utoipa::path(post, path = "/clusters/{id}/changes", tag = "clusters",
    params(("id" = String, Path, description = "Cluster id, or the name of a live cluster of your tenant")),
    request_body = ClusterChangeRequest,
    responses((status = 202, description = "Submitted", body = SubmittedJob),
              (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
              (status = 422, body = ErrorBody)))]
pub async fn change(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
    ApiJson(change): ApiJson<ClusterChangeRequest>,
) -> Result<(StatusCode, Json<SubmittedJob>), ApiError> {
    let submitted = state.service.change_cluster(&caller, &id, &change).await?;
    Ok((StatusCode::ACCEPTED, Json(submitted)))
}

/// Set the lease to end the given number of seconds from now.
#[utoipa::path(put, path = "/clusters/{id}/lease", tag = "clusters",
    params(("id" = String, Path, description = "Cluster id, or the name of a live cluster of your tenant")),
    request_body = LeaseExtension,
    responses((status = 200, body = ClusterView), (status = 404, body = ErrorBody),
              (status = 422, body = ErrorBody)))]
pub async fn extend_lease(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
    ApiJson(extension): ApiJson<LeaseExtension>,
) -> Result<Json<ClusterView>, ApiError> {
    Ok(Json(
        state.service.extend_lease(&caller, &id, &extension).await?,
    ))
}

/// Turn healing on or off for the cluster (`{"enabled": null}`: back to its template's
/// policy). The owner or a tenant admin.
#[utoipa::path(put, path = "/clusters/{id}/healing", tag = "clusters",
    params(("id" = String, Path, description = "Cluster id, or the name of a live cluster of your tenant")),
    request_body = api_types::HealingChoice,
    responses((status = 200, body = api_types::HealingView), (status = 404, body = ErrorBody),
              (status = 422, body = ErrorBody)))]
pub async fn set_healing(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
    ApiJson(choice): ApiJson<api_types::HealingChoice>,
) -> Result<Json<api_types::HealingView>, ApiError> {
    Ok(Json(
        state.service.set_healing(&caller, &id, &choice).await?,
    ))
}

/// Pin the cluster to its catalog revision (`{"pinned": true}`), or unpin it: a
/// rollout of its template's new revision lists a pinned cluster and passes it over.
#[utoipa::path(put, path = "/clusters/{id}/pin", tag = "clusters",
    params(("id" = String, Path, description = "Cluster id, or the name of a live cluster of your tenant")),
    request_body = api_types::PinChoice,
    responses((status = 200, body = api_types::PinChoice), (status = 404, body = ErrorBody),
              (status = 422, body = ErrorBody)))]
pub async fn set_pinned(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
    ApiJson(choice): ApiJson<api_types::PinChoice>,
) -> Result<Json<api_types::PinChoice>, ApiError> {
    Ok(Json(state.service.set_pinned(&caller, &id, &choice).await?))
}

/// Delete the cluster: its nodes are stopped and removed by a delete job; with
/// `force=true`, a stop or remove step that fails is passed over.
#[utoipa::path(delete, path = "/clusters/{id}", operation_id = "delete_cluster", tag = "clusters",
    params(("id" = String, Path, description = "Cluster id, or the name of a live cluster of your tenant"),
           DeleteOptions),
    responses((status = 202, description = "Delete submitted", body = SubmittedJob),
              (status = 400, description = "A bad query (force is true or false)", body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn delete(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
    ApiQuery(options): ApiQuery<DeleteOptions>,
) -> Result<(StatusCode, Json<SubmittedJob>), ApiError> {
    let submitted = state
        .service
        .delete_cluster(&caller, &id, options.force)
        .await?;
    Ok((StatusCode::ACCEPTED, Json(submitted)))
}
