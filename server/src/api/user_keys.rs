//! `/api/v1/me/keys` and `/api/v1/tenants/{id}/admin-keys`: the SSH public keys users
//! keep on their profile, which Corral puts on the nodes of their clusters, and the
//! tenant setting that puts its admins' keys on every cluster.

use api_types::{AdminKeysSetting, KeySync, UserKeyChange, UserKeyRequest, UserKeyView};
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, ApiPath, Authenticated};
use crate::http::AppState;

/// Your SSH public keys, oldest first.
#[utoipa::path(get, path = "/me/keys", operation_id = "list_my_keys", tag = "users",
    responses((status = 200, body = Vec<UserKeyView>), (status = 401, body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
) -> Result<Json<Vec<UserKeyView>>, ApiError> {
    Ok(Json(state.service.my_keys(&caller).await?))
}

/// Keep a public key on your profile (one OpenSSH line; at most 20 keys). It is put on
/// the nodes of your clusters by a `sync-keys` job on each, listed in the answer.
#[utoipa::path(post, path = "/me/keys", operation_id = "add_my_key", tag = "users",
    request_body = UserKeyRequest,
    responses((status = 201, body = UserKeyChange), (status = 401, body = ErrorBody),
              (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn add(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiJson(request): ApiJson<UserKeyRequest>,
) -> Result<(StatusCode, Json<UserKeyChange>), ApiError> {
    let change = state.service.add_my_key(&caller, &request).await?;
    Ok((StatusCode::CREATED, Json(change)))
}

/// Take a key off your profile, and (by a `sync-keys` job each) off your clusters.
#[utoipa::path(delete, path = "/me/keys/{id}", operation_id = "remove_my_key", tag = "users",
    params(("id" = String, Path, description = "Key id")),
    responses((status = 200, body = UserKeyChange), (status = 401, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn remove(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<UserKeyChange>, ApiError> {
    Ok(Json(state.service.remove_my_key(&caller, &id).await?))
}

/// Whether the tenant's admins' keys go on every cluster of the tenant (its admins).
#[utoipa::path(get, path = "/tenants/{id}/admin-keys", operation_id = "show_admin_keys", tag = "tenants",
    params(("id" = String, Path, description = "Tenant id")),
    responses((status = 200, body = AdminKeysSetting), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn show_setting(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<AdminKeysSetting>, ApiError> {
    Ok(Json(state.service.admin_keys_setting(&caller, &id).await?))
}

/// Put the tenant's admins' keys on every cluster of the tenant, or only on their own
/// (its admins); a change syncs every active cluster of the tenant (the answer lists
/// the jobs).
#[utoipa::path(put, path = "/tenants/{id}/admin-keys", operation_id = "set_admin_keys", tag = "tenants",
    params(("id" = String, Path, description = "Tenant id")), request_body = AdminKeysSetting,
    responses((status = 200, body = Vec<KeySync>), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn set_setting(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
    ApiJson(setting): ApiJson<AdminKeysSetting>,
) -> Result<Json<Vec<KeySync>>, ApiError> {
    Ok(Json(
        state
            .service
            .set_admin_keys_setting(&caller, &id, setting)
            .await?,
    ))
}
