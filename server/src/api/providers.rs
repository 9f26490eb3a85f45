//! `/api/v1/providers/{name}`: what a tenant keeps for a provider of its catalog beyond
//! its definition (which is `/api/v1/catalog/providers/{name}`): its credentials, set
//! and removed here and shown back as field names only, and the provider check. Under
//! `.../credentials/mine`, any user of the tenant keeps their own credentials for a
//! provider that allows them (`"user_credentials": true`).

use axum::body::Bytes;
use axum::extract::State;
use axum::Json;
use engine::service::ServiceError;
use engine::service::{ProviderCredentialsView, ProviderTestReport, ProviderTestRequest};

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, ApiPath, Authenticated};
use crate::http::AppState;

/// Which credential fields are set for the provider in your tenant (never their values).
#[utoipa::path(get, path = "/providers/{name}/credentials", operation_id = "show_provider_credentials",
    tag = "providers", params(("name" = String, Path, description = "Provider name")),
    responses((status = 200, body = ProviderCredentialsView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn show_credentials(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(name): ApiPath<String>,
) -> Result<Json<ProviderCredentialsView>, ApiError> {
    Ok(Json(
        state.service.provider_credentials(&caller, &name).await?,
    ))
}

/// Set (or replace) your tenant's credentials for the provider: a JSON object of
/// strings (`{"access_key_id": "...", "secret_access_key": "..."}` for ec2). They are
/// encrypted at rest and never returned; the answer lists the field names.
#[utoipa::path(put, path = "/providers/{name}/credentials", operation_id = "set_provider_credentials",
    tag = "providers", params(("name" = String, Path, description = "Provider name")),
    request_body(content = Object, description = "The credentials: a JSON object of strings"),
    responses((status = 200, body = ProviderCredentialsView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn set_credentials(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(name): ApiPath<String>,
    body: Bytes,
) -> Result<Json<ProviderCredentialsView>, ApiError> {
    let text = credentials_text(&body)?;
    Ok(Json(
        state
            .service
            .set_provider_credentials(&caller, &name, text)
            .await?,
    ))
}

/// Remove your tenant's credentials for the provider.
#[utoipa::path(delete, path = "/providers/{name}/credentials", operation_id = "delete_provider_credentials",
    tag = "providers", params(("name" = String, Path, description = "Provider name")),
    responses((status = 200, body = ProviderCredentialsView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn delete_credentials(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(name): ApiPath<String>,
) -> Result<Json<ProviderCredentialsView>, ApiError> {
    Ok(Json(
        state
            .service
            .delete_provider_credentials(&caller, &name)
            .await?,
    ))
}

/// Which fields of your own credentials for the provider are set (never their values).
/// Refused (403) when the provider does not take users' own credentials.
#[utoipa::path(get, path = "/providers/{name}/credentials/mine", operation_id = "show_my_provider_credentials",
    tag = "providers", params(("name" = String, Path, description = "Provider name")),
    responses((status = 200, body = ProviderCredentialsView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn show_my_credentials(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(name): ApiPath<String>,
) -> Result<Json<ProviderCredentialsView>, ApiError> {
    Ok(Json(
        state
            .service
            .my_provider_credentials(&caller, &name)
            .await?,
    ))
}

/// Set (or replace) your own credentials for the provider, where its admins allow it
/// (`"user_credentials": true`): nodes of the clusters you own are made with them. A
/// JSON object of strings, encrypted at rest and never returned.
#[utoipa::path(put, path = "/providers/{name}/credentials/mine", operation_id = "set_my_provider_credentials",
    tag = "providers", params(("name" = String, Path, description = "Provider name")),
    request_body(content = Object, description = "The credentials: a JSON object of strings"),
    responses((status = 200, body = ProviderCredentialsView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn set_my_credentials(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(name): ApiPath<String>,
    body: Bytes,
) -> Result<Json<ProviderCredentialsView>, ApiError> {
    let text = credentials_text(&body)?;
    Ok(Json(
        state
            .service
            .set_my_provider_credentials(&caller, &name, text)
            .await?,
    ))
}

/// Remove your own credentials for the provider: your clusters' nodes use the tenant's.
#[utoipa::path(delete, path = "/providers/{name}/credentials/mine", operation_id = "delete_my_provider_credentials",
    tag = "providers", params(("name" = String, Path, description = "Provider name")),
    responses((status = 200, body = ProviderCredentialsView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn delete_my_credentials(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(name): ApiPath<String>,
) -> Result<Json<ProviderCredentialsView>, ApiError> {
    Ok(Json(
        state
            .service
            .delete_my_provider_credentials(&caller, &name)
            .await?,
    ))
}

/// Check the provider: credentials and endpoint, and with `create` one machine made,
/// reached over SSH where the provider allows it, and deleted. Each phase is timed;
/// `passed` is false when one failed (the answer is still 200: the check ran).
#[utoipa::path(post, path = "/providers/{name}/test", operation_id = "test_provider",
    tag = "providers", params(("name" = String, Path, description = "Provider name")),
    request_body = ProviderTestRequest,
    responses((status = 200, body = ProviderTestReport), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn test(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(name): ApiPath<String>,
    ApiJson(request): ApiJson<ProviderTestRequest>,
) -> Result<Json<ProviderTestReport>, ApiError> {
    Ok(Json(
        state
            .service
            .test_provider(&caller, &name, &request)
            .await?,
    ))
}

/// A credentials body as text. Taken as raw bytes, not through a JSON extractor: a
/// JSON error message could quote the secret.
fn credentials_text(body: &Bytes) -> Result<&str, ServiceError> {
    std::str::from_utf8(body)
        .map_err(|_| ServiceError::invalid("the credentials must be UTF-8 JSON"))
}
