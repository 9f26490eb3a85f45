//! `/api/v1/session`: signing in and out with a password, for browsers and for
//! `corral login` (which then creates an API token).

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use engine::accounts::{Password, TokenSecret};
use engine::service::ServiceError;
use tower_sessions::Session;

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, Authenticated, ClientAddress, SessionData, SESSION_USER};
use crate::http::AppState;

pub use api_types::{LoginRequest, SessionView};

/// Sign in: sets the session cookie (a fresh session id) and returns the CSRF token.
#[utoipa::path(post, path = "/session", tag = "session",
    request_body = LoginRequest,
    responses(
        (status = 200, description = "Signed in", body = SessionView),
        (status = 401, description = "Wrong username or password", body = ErrorBody),
        (status = 429, description = "Too many failed attempts", body = ErrorBody),
    ))]
pub async fn login(
    State(state): State<AppState>,
    ClientAddress(address): ClientAddress,
    session: Session,
    ApiJson(request): ApiJson<LoginRequest>,
) -> Result<Json<SessionView>, ApiError> {
    let password = Password::new(request.password);
    let (principal, user) = state
        .service
        .login(&request.username, &password, address.as_deref())
        .await
        .map_err(|error| match error {
            ServiceError::Unauthenticated => {
                ApiError::unauthenticated("wrong username or password")
            }
            other => other.into(),
        })?;
    // A new id on every sign-in: an id planted before sign-in is worth nothing after.
    session.cycle_id().await.map_err(ApiError::internal)?;
    let data = SessionData {
        user,
        csrf: TokenSecret::generate().expose().to_owned(),
        signed_in_at_ms: engine::store::now_ms(),
    };
    session
        .insert(SESSION_USER, &data)
        .await
        .map_err(ApiError::internal)?;
    let user = state
        .service
        .me(&engine::service::Caller::new(principal, address))
        .await?;
    Ok(Json(SessionView {
        user,
        csrf_token: data.csrf,
    }))
}

/// The signed-in user and the CSRF token.
#[utoipa::path(get, path = "/session", tag = "session",
    responses(
        (status = 200, description = "The session", body = SessionView),
        (status = 401, description = "Not signed in", body = ErrorBody),
    ))]
pub async fn current(
    State(state): State<AppState>,
    session: Session,
    Authenticated(caller): Authenticated,
) -> Result<Json<SessionView>, ApiError> {
    let data: Option<SessionData> = session
        .get(SESSION_USER)
        .await
        .map_err(ApiError::internal)?;
    let Some(data) = data else {
        return Err(ApiError::unauthenticated(
            "this needs a browser session, not a token",
        ));
    };
    Ok(Json(SessionView {
        user: state.service.me(&caller).await?,
        csrf_token: data.csrf,
    }))
}

/// Sign out of this session.
#[utoipa::path(delete, path = "/session", tag = "session",
    responses((status = 204, description = "Signed out"), (status = 401, body = ErrorBody)))]
pub async fn logout(
    session: Session,
    Authenticated(_caller): Authenticated,
) -> Result<StatusCode, ApiError> {
    session.flush().await.map_err(ApiError::internal)?;
    Ok(StatusCode::NO_CONTENT)
}

/// Sign out of every session of this user, on every device.
#[utoipa::path(post, path = "/session/logout-everywhere", tag = "session",
    responses((status = 204, description = "Every session ended"), (status = 401, body = ErrorBody)))]
pub async fn logout_everywhere(
    State(state): State<AppState>,
    session: Session,
    Authenticated(caller): Authenticated,
) -> Result<StatusCode, ApiError> {
    state.service.logout_everywhere(&caller).await?;
    let _ = session.flush().await;
    Ok(StatusCode::NO_CONTENT)
}
