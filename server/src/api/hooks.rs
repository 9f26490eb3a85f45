//! `/api/v1/hooks`: a tenant's lifecycle hooks (events and gates), each hook's delivery
//! log, test events and redeliveries. Adding a hook answers with its signing secret,
//! the only time it is shown.

use api_types::{CreatedHook, DeliveryView, HookRequest, HookView};
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use engine::service::{Page, PageRequest};

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, ApiPath, ApiQuery, Authenticated};
use crate::http::AppState;

/// The hooks of your tenant (superadmins: of every tenant).
#[utoipa::path(get, path = "/hooks", operation_id = "list_hooks", tag = "hooks", params(PageRequest),
    responses((status = 200, body = Page<HookView>), (status = 403, body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiQuery(page): ApiQuery<PageRequest>,
) -> Result<Json<Page<HookView>>, ApiError> {
    Ok(Json(state.service.list_hooks(&caller, page).await?))
}

/// Add a hook: `events` it is sent (signed `HookEventBody` deliveries), `gates` it is
/// asked before (a `GateRequestBody`, answered with a `GateAnswer`), or both. The URL
/// must reach a public address unless the operator allows its range
/// (`--hook-allow`); 422 names the address otherwise. The answer holds the signing
/// secret, shown this once.
#[utoipa::path(post, path = "/hooks", operation_id = "add_hook", tag = "hooks",
    request_body = HookRequest,
    responses((status = 201, body = CreatedHook), (status = 403, body = ErrorBody),
              (status = 422, body = ErrorBody)))]
pub async fn add(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiJson(request): ApiJson<HookRequest>,
) -> Result<(StatusCode, Json<CreatedHook>), ApiError> {
    let created = state.service.add_hook(&caller, &request).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

#[utoipa::path(get, path = "/hooks/{id}", operation_id = "show_hook", tag = "hooks",
    params(("id" = String, Path, description = "Hook id")),
    responses((status = 200, body = HookView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn show(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<HookView>, ApiError> {
    Ok(Json(state.service.hook(&caller, &id).await?))
}

/// Remove a hook with its delivery log.
#[utoipa::path(delete, path = "/hooks/{id}", operation_id = "remove_hook", tag = "hooks",
    params(("id" = String, Path, description = "Hook id")),
    responses((status = 204, description = "Removed"), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn remove(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
) -> Result<StatusCode, ApiError> {
    state.service.remove_hook(&caller, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Queue a `test` event to the hook; its delivery (returned) shows how the receiver
/// answered once sent.
#[utoipa::path(post, path = "/hooks/{id}/test", operation_id = "test_hook", tag = "hooks",
    params(("id" = String, Path, description = "Hook id")),
    responses((status = 202, body = DeliveryView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn test(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
) -> Result<(StatusCode, Json<DeliveryView>), ApiError> {
    let delivery = state.service.test_hook(&caller, &id).await?;
    Ok((StatusCode::ACCEPTED, Json(delivery)))
}

/// The hook's deliveries, newest first, each with its attempts (status, time, the
/// start of the answer).
#[utoipa::path(get, path = "/hooks/{id}/deliveries", operation_id = "hook_deliveries", tag = "hooks",
    params(("id" = String, Path, description = "Hook id"), PageRequest),
    responses((status = 200, body = Page<DeliveryView>), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn deliveries(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
    ApiQuery(page): ApiQuery<PageRequest>,
) -> Result<Json<Page<DeliveryView>>, ApiError> {
    Ok(Json(
        state.service.hook_deliveries(&caller, &id, page).await?,
    ))
}

/// Send a delivered or given-up delivery again (same id, same body); 409 while it is
/// still pending.
#[utoipa::path(post, path = "/hooks/{id}/deliveries/{delivery}/redeliver", operation_id = "redeliver",
    tag = "hooks",
    params(("id" = String, Path, description = "Hook id"),
           ("delivery" = String, Path, description = "Delivery id")),
    responses((status = 202, body = DeliveryView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn redeliver(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath((id, delivery)): ApiPath<(String, String)>,
) -> Result<(StatusCode, Json<DeliveryView>), ApiError> {
    let view = state.service.redeliver(&caller, &id, &delivery).await?;
    Ok((StatusCode::ACCEPTED, Json(view)))
}
