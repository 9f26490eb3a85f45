//! `/api/v1/pool-hosts`: the hosts a tenant's admins lend to the `ssh-pool` provider.
//! Responses carry each host's public client key for `authorized_keys`; the private key
//! stays in the store.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use engine::service::{Page, PageRequest, PoolHostRequest, PoolHostUpdate, PoolHostView};

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, ApiPath, ApiQuery, Authenticated};
use crate::http::AppState;

/// The pool hosts of your tenant (superadmins: of every tenant), each free or checked
/// out to a cluster's node.
#[utoipa::path(get, path = "/pool-hosts", operation_id = "list_pool_hosts", tag = "pool-hosts", params(PageRequest),
    responses((status = 200, body = Page<PoolHostView>), (status = 403, body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiQuery(page): ApiQuery<PageRequest>,
) -> Result<Json<Page<PoolHostView>>, ApiError> {
    Ok(Json(state.service.list_pool_hosts(&caller, page).await?))
}

/// Register a host. Corral makes a key pair for it: authorize `client_public_key` on
/// the host before a cluster uses it.
#[utoipa::path(post, path = "/pool-hosts", tag = "pool-hosts",
    request_body = PoolHostRequest,
    responses((status = 201, body = PoolHostView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
              (status = 422, body = ErrorBody)))]
pub async fn register(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiJson(request): ApiJson<PoolHostRequest>,
) -> Result<(StatusCode, Json<PoolHostView>), ApiError> {
    let host = state.service.register_pool_host(&caller, &request).await?;
    Ok((StatusCode::CREATED, Json(host)))
}

#[utoipa::path(get, path = "/pool-hosts/{id}", operation_id = "show_pool_host", tag = "pool-hosts",
    params(("id" = String, Path, description = "Pool host id")),
    responses((status = 200, body = PoolHostView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn show(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<PoolHostView>, ApiError> {
    Ok(Json(state.service.pool_host(&caller, &id).await?))
}

/// Rename a host, or change its address, user or host key while no node holds it.
#[utoipa::path(patch, path = "/pool-hosts/{id}", operation_id = "update_pool_host", tag = "pool-hosts",
    params(("id" = String, Path, description = "Pool host id")), request_body = PoolHostUpdate,
    responses((status = 200, body = PoolHostView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
              (status = 422, body = ErrorBody)))]
pub async fn update(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
    ApiJson(update): ApiJson<PoolHostUpdate>,
) -> Result<Json<PoolHostView>, ApiError> {
    Ok(Json(
        state
            .service
            .update_pool_host(&caller, &id, &update)
            .await?,
    ))
}

/// Remove a host; refused (409, naming the cluster) while it is checked out.
#[utoipa::path(delete, path = "/pool-hosts/{id}", operation_id = "remove_pool_host", tag = "pool-hosts",
    params(("id" = String, Path, description = "Pool host id")),
    responses((status = 204, description = "Removed"), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn remove(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
) -> Result<StatusCode, ApiError> {
    state.service.remove_pool_host(&caller, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}
