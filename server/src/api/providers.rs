//! `/api/v1/providers/{name}`: what a tenant keeps for a provider of its catalog beyond
//! its definition (which is `/api/v1/catalog/providers/{name}`): its credentials, set
//! and removed here and shown back as field names only, and the provider check. Under
//! `.../credentials/mine`, any user of the tenant keeps their own credentials for a
//! provider that allows them (`"user_credentials": true`).

use axum::body::Bytes;
use axum::extract::State;
use axum::Json;
use engine::service::{
    CredentialsOwner, ProviderCredentialsView, ProviderTestReport, ProviderTestRequest,
    ServiceError,
};

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, ApiPath, Authenticated};
use crate::http::AppState;

/// The show, set and delete handlers of one owner's credentials under `$path`. The
/// tenant's and the caller's own differ only in whose credentials they pass on
/// ([`CredentialsOwner`]), so one definition makes both sets, each with its own
/// routes and OpenAPI entries (the docs given with each name describe it).
macro_rules! credentials_endpoints {
    (
        $owner:expr, $path:tt,
        $(#[$show_doc:meta])* show: $show:ident = $show_id:tt,
        $(#[$set_doc:meta])* set: $set:ident = $set_id:tt,
        $(#[$delete_doc:meta])* delete: $delete:ident = $delete_id:tt $(,)?
    ) => {
        $(#[$show_doc])*
        #[utoipa::path(get, path = $path, operation_id = $show_id,
            tag = "providers", params(("name" = String, Path, description = "Provider name")),
            responses((status = 200, body = ProviderCredentialsView), (status = 403, body = ErrorBody),
                      (status = 404, body = ErrorBody)))]
        pub async fn $show(
            State(state): State<AppState>,
            Authenticated(caller): Authenticated,
            ApiPath(name): ApiPath<String>,
        ) -> Result<Json<ProviderCredentialsView>, ApiError> {
            Ok(Json(state.service.provider_credentials(&caller, &name, $owner).await?))
        }

        $(#[$set_doc])*
        #[utoipa::path(put, path = $path, operation_id = $set_id,
            tag = "providers", params(("name" = String, Path, description = "Provider name")),
            request_body(content = Object, description = "The credentials: a JSON object of strings"),
            responses((status = 200, body = ProviderCredentialsView), (status = 403, body = ErrorBody),
                      (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
        pub async fn $set(
            State(state): State<AppState>,
            Authenticated(caller): Authenticated,
            ApiPath(name): ApiPath<String>,
            body: Bytes,
        ) -> Result<Json<ProviderCredentialsView>, ApiError> {
            let text = credentials_text(&body)?;
            Ok(Json(state.service.set_provider_credentials(&caller, &name, $owner, text).await?))
        }

        $(#[$delete_doc])*
        #[utoipa::path(delete, path = $path, operation_id = $delete_id,
            tag = "providers", params(("name" = String, Path, description = "Provider name")),
            responses((status = 200, body = ProviderCredentialsView), (status = 403, body = ErrorBody),
                      (status = 404, body = ErrorBody)))]
        pub async fn $delete(
            State(state): State<AppState>,
            Authenticated(caller): Authenticated,
            ApiPath(name): ApiPath<String>,
        ) -> Result<Json<ProviderCredentialsView>, ApiError> {
            Ok(Json(state.service.delete_provider_credentials(&caller, &name, $owner).await?))
        }
    };
}

credentials_endpoints!(
    CredentialsOwner::Tenant, "/providers/{name}/credentials",
    /// Which credential fields are set for the provider in your tenant (never their values).
    show: show_credentials = "show_provider_credentials",
    /// Set (or replace) your tenant's credentials for the provider: a JSON object of
    /// strings (`{"access_key_id": "...", "secret_access_key": "..."}` for ec2). They are
    /// encrypted at rest and never returned; the answer lists the field names.
    set: set_credentials = "set_provider_credentials",
    /// Remove your tenant's credentials for the provider.
    delete: delete_credentials = "delete_provider_credentials",
);

credentials_endpoints!(
    CredentialsOwner::Caller, "/providers/{name}/credentials/mine",
    /// Which fields of your own credentials for the provider are set (never their values).
    /// Refused (403) when the provider does not take users' own credentials.
    show: show_my_credentials = "show_my_provider_credentials",
    /// Set (or replace) your own credentials for the provider, where its admins allow it
    /// (`"user_credentials": true`): nodes of the clusters you own are made with them. A
    /// JSON object of strings, encrypted at rest and never returned.
    set: set_my_credentials = "set_my_provider_credentials",
    /// Remove your own credentials for the provider: your clusters' nodes use the tenant's.
    delete: delete_my_credentials = "delete_my_provider_credentials",
);

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
