//! Request extractors of the API: who is calling ([`Authenticated`]), and JSON bodies
//! and query strings whose rejections are [`ApiError`]s in the API's JSON shape.
//!
//! A caller is authenticated by `Authorization: Bearer <token>` or by the session
//! cookie. Cookie-authenticated requests that change state must carry the session's
//! CSRF token in `X-CSRF-Token`: a cross-site page can make the browser send the
//! cookie, but it cannot read the token.

use app::session::{signed_in, SessionPolicy, SessionRejection};
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use engine::service::{Access, Caller, ServiceError};
use tower_sessions::Session;

use super::error::{ApiError, ErrorCode};
use crate::http::AppState;

/// The header cookie-authenticated, state-changing requests carry.
pub const CSRF_HEADER: &str = "x-csrf-token";

pub use app::session::{SessionData, SESSION_USER};

/// The authenticated caller of a request.
pub struct Authenticated(pub Caller);

fn client_address(parts: &Parts) -> Option<String> {
    app::session::client_address(parts)
}

impl FromRequestParts<AppState> for Authenticated {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let address = client_address(parts);
        let access = if parts.method.is_safe() {
            Access::Read
        } else {
            Access::Write
        };
        if let Some(value) = parts.headers.get(header::AUTHORIZATION) {
            let raw = value
                .to_str()
                .ok()
                .and_then(|value| value.strip_prefix("Bearer "))
                .ok_or_else(|| {
                    ApiError::unauthenticated("use the header Authorization: Bearer <token>")
                })?;
            let principal = state
                .service
                .token_principal(raw, access)
                .await
                .map_err(|error| match error {
                    ServiceError::Unauthenticated => {
                        ApiError::unauthenticated("the token is unknown, expired or revoked")
                    }
                    other => other.into(),
                })?;
            return Ok(Authenticated(Caller::new(principal, address)));
        }
        let session = Session::from_request_parts(parts, state)
            .await
            .map_err(|(_, message)| ApiError::internal(message))?;
        let policy = SessionPolicy {
            max_age_ms: state.session_max_age_ms,
        };
        let signed_in = signed_in(&session, &state.service, policy)
            .await
            .map_err(|rejection| match rejection {
                SessionRejection::SignedOut => ServiceError::Unauthenticated.into(),
                SessionRejection::Service(error) => error.into(),
                other => ApiError::unauthenticated(other.to_string()),
            })?;
        if !parts.method.is_safe() {
            let sent = parts
                .headers
                .get(CSRF_HEADER)
                .and_then(|value| value.to_str().ok());
            if sent != Some(signed_in.data.csrf.as_str()) {
                return Err(ApiError::forbidden(
                    "missing or wrong CSRF token: send the X-CSRF-Token header from GET /api/v1/session",
                ));
            }
        }
        let principal = signed_in.principal;
        Ok(Authenticated(Caller::new(principal, address)))
    }
}

/// A JSON body; malformed JSON, a wrong content type or an oversized body is a
/// JSON error naming the problem.
#[derive(FromRequest)]
#[from_request(via(axum::Json), rejection(ApiError))]
pub struct ApiJson<T>(pub T);

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        match rejection {
            JsonRejection::MissingJsonContentType(_) => ApiError::new(
                ErrorCode::UnsupportedMediaType,
                "send the body as JSON with Content-Type: application/json",
            ),
            JsonRejection::JsonDataError(error) => ApiError::new(
                ErrorCode::Invalid,
                format!("the JSON does not fit: {}", error.body_text()),
            ),
            JsonRejection::JsonSyntaxError(error) => {
                ApiError::bad_request(format!("malformed JSON: {}", error.body_text()))
            }
            other if other.status() == StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(
                ErrorCode::PayloadTooLarge,
                "the body is larger than this endpoint accepts",
            ),
            other => ApiError::bad_request(other.body_text()),
        }
    }
}

/// Query parameters; a malformed query string is a JSON 400.
#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(ApiError))]
pub struct ApiQuery<T>(pub T);

impl From<QueryRejection> for ApiError {
    fn from(rejection: QueryRejection) -> Self {
        match rejection {
            QueryRejection::FailedToDeserializeQueryString(error) => {
                ApiError::bad_request(format!("bad query string: {}", error.body_text()))
            }
            other => ApiError::bad_request(other.body_text()),
        }
    }
}

/// Path parameters; one that does not parse (a non-numeric version, say) is a JSON 400.
#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
pub struct ApiPath<T>(pub T);

impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> Self {
        ApiError::bad_request(format!("bad path parameter: {}", rejection.body_text()))
    }
}

/// The client's IP address, when the server was started with connection info.
pub struct ClientAddress(pub Option<String>);

impl<S: Send + Sync> FromRequestParts<S> for ClientAddress {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(ClientAddress(client_address(parts)))
    }
}
