//! `/api/v1/users`, `/api/v1/tenants`, `/api/v1/tokens`, `/api/v1/audit`: who may
//! use Corral, with what limits, and what they did.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use engine::service::{
    AuditQuery, AuditView, CreatedToken, DedicatedWorkersUpdate, LocalNodesUpdate, Page,
    PageRequest, PasswordChange, ProviderTypesUpdate, QuotaUpdate, TenantRequest, TenantView,
    TokenRequest, TokenView, UserMove, UserRequest, UserUpdate, UserView,
};

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, ApiPath, ApiQuery, Authenticated};
use crate::http::AppState;

/// Users the caller administers (superadmins: everyone).
#[utoipa::path(get, path = "/users", tag = "users", params(PageRequest),
    responses((status = 200, body = Page<UserView>), (status = 403, body = ErrorBody)))]
pub async fn list_users(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiQuery(page): ApiQuery<PageRequest>,
) -> Result<Json<Page<UserView>>, ApiError> {
    Ok(Json(state.service.list_users(&caller, page).await?))
}

#[utoipa::path(post, path = "/users", tag = "users", request_body = UserRequest,
    responses((status = 201, body = UserView), (status = 403, body = ErrorBody),
              (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn create_user(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiJson(request): ApiJson<UserRequest>,
) -> Result<(StatusCode, Json<UserView>), ApiError> {
    let user = state.service.create_user(&caller, &request).await?;
    Ok((StatusCode::CREATED, Json(user)))
}

#[utoipa::path(get, path = "/users/{id}", tag = "users",
    params(("id" = String, Path, description = "User id")),
    responses((status = 200, body = UserView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn show_user(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<UserView>, ApiError> {
    Ok(Json(state.service.user(&caller, &id).await?))
}

/// Change a user's role or set a new password (their sessions end).
#[utoipa::path(patch, path = "/users/{id}", tag = "users",
    params(("id" = String, Path, description = "User id")), request_body = UserUpdate,
    responses((status = 200, body = UserView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn update_user(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
    ApiJson(update): ApiJson<UserUpdate>,
) -> Result<Json<UserView>, ApiError> {
    Ok(Json(
        state.service.update_user(&caller, &id, &update).await?,
    ))
}

#[utoipa::path(delete, path = "/users/{id}", tag = "users",
    params(("id" = String, Path, description = "User id")),
    responses((status = 204, description = "Deleted"), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn delete_user(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
) -> Result<StatusCode, ApiError> {
    state.service.delete_user(&caller, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Move a user to another tenant (superadmins). Their API tokens are revoked and their
/// sessions end; the clusters they own stay with the tenant they leave. Superadmins
/// stay in the default tenant.
#[utoipa::path(put, path = "/users/{id}/tenant", tag = "users",
    params(("id" = String, Path, description = "User id")), request_body = UserMove,
    responses((status = 200, body = UserView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
              (status = 422, body = ErrorBody)))]
pub async fn move_user(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
    ApiJson(request): ApiJson<UserMove>,
) -> Result<Json<UserView>, ApiError> {
    Ok(Json(state.service.move_user(&caller, &id, &request).await?))
}

/// Change your own password; every session of yours ends.
#[utoipa::path(post, path = "/me/password", tag = "users", request_body = PasswordChange,
    responses((status = 204, description = "Changed"), (status = 422, body = ErrorBody)))]
pub async fn change_password(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiJson(change): ApiJson<PasswordChange>,
) -> Result<StatusCode, ApiError> {
    state.service.change_password(&caller, &change).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Who you are.
#[utoipa::path(get, path = "/me", tag = "users",
    responses((status = 200, body = UserView), (status = 401, body = ErrorBody)))]
pub async fn me(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
) -> Result<Json<UserView>, ApiError> {
    Ok(Json(state.service.me(&caller).await?))
}

/// Tenants: every one for superadmins, your own otherwise.
#[utoipa::path(get, path = "/tenants", tag = "tenants", params(PageRequest),
    responses((status = 200, body = Page<TenantView>), (status = 401, body = ErrorBody)))]
pub async fn list_tenants(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiQuery(page): ApiQuery<PageRequest>,
) -> Result<Json<Page<TenantView>>, ApiError> {
    Ok(Json(state.service.list_tenants(&caller, page).await?))
}

/// Create a tenant (superadmins), optionally with a copy of another tenant's catalog.
#[utoipa::path(post, path = "/tenants", tag = "tenants", request_body = TenantRequest,
    responses((status = 201, body = TenantView), (status = 403, body = ErrorBody),
              (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn create_tenant(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiJson(request): ApiJson<TenantRequest>,
) -> Result<(StatusCode, Json<TenantView>), ApiError> {
    let tenant = state.service.create_tenant(&caller, &request).await?;
    Ok((StatusCode::CREATED, Json(tenant)))
}

#[utoipa::path(get, path = "/tenants/{id}", tag = "tenants",
    params(("id" = String, Path, description = "Tenant id")),
    responses((status = 200, body = TenantView), (status = 404, body = ErrorBody)))]
pub async fn show_tenant(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<TenantView>, ApiError> {
    Ok(Json(state.service.tenant(&caller, &id).await?))
}

/// Delete a tenant and everything it owns (superadmins); refused while it has clusters.
#[utoipa::path(delete, path = "/tenants/{id}", tag = "tenants",
    params(("id" = String, Path, description = "Tenant id")),
    responses((status = 204, description = "Deleted"), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
              (status = 422, body = ErrorBody)))]
pub async fn delete_tenant(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
) -> Result<StatusCode, ApiError> {
    state.service.delete_tenant(&caller, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Set a tenant's quotas (superadmins).
#[utoipa::path(put, path = "/tenants/{id}/quotas", tag = "tenants",
    params(("id" = String, Path, description = "Tenant id")), request_body = QuotaUpdate,
    responses((status = 200, body = TenantView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn update_quotas(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
    ApiJson(update): ApiJson<QuotaUpdate>,
) -> Result<Json<TenantView>, ApiError> {
    Ok(Json(
        state.service.update_quotas(&caller, &id, &update).await?,
    ))
}

/// Allow or forbid a tenant the `local` provider, whose node steps run on the Corral
/// server's own host (superadmins).
#[utoipa::path(put, path = "/tenants/{id}/local-nodes", tag = "tenants",
    params(("id" = String, Path, description = "Tenant id")), request_body = LocalNodesUpdate,
    responses((status = 200, body = TenantView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn set_local_nodes(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
    ApiJson(update): ApiJson<LocalNodesUpdate>,
) -> Result<Json<TenantView>, ApiError> {
    Ok(Json(
        state.service.set_local_nodes(&caller, &id, &update).await?,
    ))
}

/// Serve a tenant's tasks only on workers started for it (`corral worker --tenant
/// NAME`), or on any worker again (superadmins).
#[utoipa::path(put, path = "/tenants/{id}/dedicated-workers", tag = "tenants",
    params(("id" = String, Path, description = "Tenant id")), request_body = DedicatedWorkersUpdate,
    responses((status = 200, body = TenantView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn set_dedicated_workers(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
    ApiJson(update): ApiJson<DedicatedWorkersUpdate>,
) -> Result<Json<TenantView>, ApiError> {
    Ok(Json(
        state
            .service
            .set_dedicated_workers(&caller, &id, &update)
            .await?,
    ))
}

/// Set the provider types a tenant may build on (`local`, `ssh-pool`, `docker`, `ec2`,
/// `exec`; superadmins). Clusters already built stay; creating and changing clusters on
/// a type taken away is refused.
#[utoipa::path(put, path = "/tenants/{id}/provider-types", tag = "tenants",
    params(("id" = String, Path, description = "Tenant id")), request_body = ProviderTypesUpdate,
    responses((status = 200, body = TenantView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn set_provider_types(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
    ApiJson(update): ApiJson<ProviderTypesUpdate>,
) -> Result<Json<TenantView>, ApiError> {
    Ok(Json(
        state
            .service
            .set_provider_types(&caller, &id, &update)
            .await?,
    ))
}

/// Your API tokens (never their secrets).
#[utoipa::path(get, path = "/tokens", tag = "tokens", params(PageRequest),
    responses((status = 200, body = Page<TokenView>), (status = 401, body = ErrorBody)))]
pub async fn list_tokens(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiQuery(page): ApiQuery<PageRequest>,
) -> Result<Json<Page<TokenView>>, ApiError> {
    Ok(Json(state.service.list_tokens(&caller, page).await?))
}

/// Create a token; the secret is in this response only.
#[utoipa::path(post, path = "/tokens", tag = "tokens", request_body = TokenRequest,
    responses((status = 201, body = CreatedToken), (status = 422, body = ErrorBody)))]
pub async fn create_token(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiJson(request): ApiJson<TokenRequest>,
) -> Result<(StatusCode, Json<CreatedToken>), ApiError> {
    let token = state.service.create_token(&caller, &request).await?;
    Ok((StatusCode::CREATED, Json(token)))
}

/// Revoke one of your tokens. Safe to call twice.
#[utoipa::path(delete, path = "/tokens/{id}", tag = "tokens",
    params(("id" = String, Path, description = "Token id")),
    responses((status = 200, body = TokenView), (status = 404, body = ErrorBody)))]
pub async fn revoke_token(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<TokenView>, ApiError> {
    Ok(Json(state.service.revoke_token(&caller, &id).await?))
}

/// A user's API tokens (admins of the user's tenant; never their secrets).
#[utoipa::path(get, path = "/users/{id}/tokens", tag = "users",
    params(("id" = String, Path, description = "User id"), PageRequest),
    responses((status = 200, body = Page<TokenView>), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn list_user_tokens(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
    ApiQuery(page): ApiQuery<PageRequest>,
) -> Result<Json<Page<TokenView>>, ApiError> {
    Ok(Json(state.service.user_tokens(&caller, &id, page).await?))
}

/// Revoke one of a user's API tokens (admins of the user's tenant). Safe to call twice.
#[utoipa::path(delete, path = "/users/{id}/tokens/{token_id}", tag = "users",
    params(("id" = String, Path, description = "User id"),
           ("token_id" = String, Path, description = "Token id")),
    responses((status = 200, body = TokenView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn revoke_user_token(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath((id, token_id)): ApiPath<(String, String)>,
) -> Result<Json<TokenView>, ApiError> {
    Ok(Json(
        state
            .service
            .revoke_user_token(&caller, &id, &token_id)
            .await?,
    ))
}

/// The audit log, newest first (admins).
#[utoipa::path(get, path = "/audit", tag = "audit", params(AuditQuery),
    responses((status = 200, body = Vec<AuditView>), (status = 403, body = ErrorBody)))]
pub async fn audit(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiQuery(query): ApiQuery<AuditQuery>,
) -> Result<Json<Vec<AuditView>>, ApiError> {
    Ok(Json(state.service.audit_log(&caller, &query).await?))
}
