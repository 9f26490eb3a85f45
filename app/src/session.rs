//! Who is behind a browser request (server side only).
//!
//! A signed-in browser holds a `tower-sessions` session whose [`SessionData`] names
//! the user and the session's CSRF token. The JSON API's cookie authentication and
//! the server functions of the pages both read it through [`signed_in`], so the
//! rules (absolute age, ended sessions) live in one place. State-changing server
//! functions also take the CSRF token as a form field and check it with
//! [`caller_checked`]: a cross-site form can make the browser send the cookie, but it
//! cannot know the token.

use engine::service::{Caller, Service, ServiceError, SessionUser};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};
use tower_sessions::Session;

use crate::error::UiError;

/// The session key holding the signed-in user.
pub const SESSION_USER: &str = "corral.user";

/// What a signed-in session stores.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionData {
    pub user: SessionUser,
    /// Compared with `X-CSRF-Token` (API) or the `csrf` form field (pages).
    pub csrf: String,
    pub signed_in_at_ms: i64,
}

/// The signed-in session's CSRF token, put into each page request's extensions
/// by the server so pages can render it without waiting for anything.
#[derive(Debug, Clone)]
pub struct CsrfToken(pub String);

/// Session rules the server decides and the pages follow.
#[derive(Debug, Clone, Copy)]
pub struct SessionPolicy {
    /// A session older than this is refused however active it is.
    pub max_age_ms: i64,
}

/// Why a request carries no usable session.
#[derive(Debug, thiserror::Error)]
pub enum SessionRejection {
    #[error("not signed in")]
    SignedOut,
    #[error("the session has expired; sign in again")]
    Expired,
    #[error("the session has ended; sign in again")]
    Ended,
    #[error(transparent)]
    Service(ServiceError),
}

/// What a failed read of the session store means for the request. The store's
/// backend errors are its database's: its statements (read, write, delete one row by
/// id) only fail when the database does not answer, so they count as that (503),
/// while a record that does not decode is a fault of the server (500).
pub fn session_failure(error: tower_sessions::session::Error) -> ServiceError {
    use tower_sessions::session::Error;
    use tower_sessions::session_store::Error as StoreError;
    match error {
        Error::Store(StoreError::Backend(cause)) => {
            tracing::debug!(%cause, "the session store is not answering");
            ServiceError::Unavailable
        }
        other => ServiceError::internal(other),
    }
}

/// A request's signed-in user: the engine's principal and the session's data.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub principal: engine::principal::Principal,
    pub data: SessionData,
}

/// The session's user, checked against the absolute age and the user's session
/// epoch (password changes and "log out everywhere" end sessions).
pub async fn signed_in(
    session: &Session,
    service: &Service,
    policy: SessionPolicy,
) -> Result<SignedIn, SessionRejection> {
    let data: Option<SessionData> = session
        .get(SESSION_USER)
        .await
        .map_err(|error| SessionRejection::Service(session_failure(error)))?;
    let Some(data) = data else {
        return Err(SessionRejection::SignedOut);
    };
    if engine::store::now_ms() - data.signed_in_at_ms > policy.max_age_ms {
        // Best effort: the session is refused whether or not the flush works.
        let _ = session.flush().await;
        return Err(SessionRejection::Expired);
    }
    let principal = service
        .session_principal(&data.user)
        .await
        .map_err(|error| match error {
            ServiceError::Unauthenticated => SessionRejection::Ended,
            other => SessionRejection::Service(other),
        })?;
    Ok(SignedIn { principal, data })
}

/// The request a server function or page is serving.
fn request_parts() -> Result<http::request::Parts, UiError> {
    use_context::<http::request::Parts>().ok_or_else(|| {
        tracing::error!("no request in the reactive context");
        UiError::Internal
    })
}

/// The client's address as the server resolved it (behind a trusted reverse proxy,
/// the address that proxy forwarded for), put in each request's extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientIp(pub String);

/// The client address the server saw (for throttling and the audit log).
pub fn client_address(parts: &http::request::Parts) -> Option<String> {
    if let Some(ClientIp(address)) = parts.extensions.get::<ClientIp>() {
        return Some(address.clone());
    }
    parts
        .extensions
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|info| info.0.ip().to_string())
}

/// The request's session (the session layer puts it in the request's extensions).
pub fn request_session() -> Result<Session, UiError> {
    request_parts()?
        .extensions
        .get::<Session>()
        .cloned()
        .ok_or_else(|| {
            tracing::error!("the session layer is missing");
            UiError::Internal
        })
}

/// The engine's service layer, provided to every page and server function.
pub fn service() -> Result<Service, UiError> {
    use_context::<Service>().ok_or_else(|| {
        tracing::error!("no service in the reactive context");
        UiError::Internal
    })
}

/// The signed-in caller of this request, for reading.
pub async fn current() -> Result<(Caller, SessionData), UiError> {
    let parts = request_parts()?;
    let session = request_session()?;
    let policy = use_context::<SessionPolicy>().ok_or(UiError::Internal)?;
    let signed_in = signed_in(&session, &service()?, policy)
        .await
        .map_err(|rejection| match rejection {
            SessionRejection::Service(error) => error.into(),
            _ => UiError::Unauthenticated,
        })?;
    Ok((
        Caller::new(signed_in.principal, client_address(&parts)),
        signed_in.data,
    ))
}

/// The signed-in caller, for reading.
pub async fn caller() -> Result<Caller, UiError> {
    Ok(current().await?.0)
}

/// The signed-in caller of a state-changing call, which must carry the session's
/// CSRF token.
pub async fn caller_checked(csrf: &str) -> Result<Caller, UiError> {
    let (caller, data) = current().await?;
    if !engine::accounts::constant_time_eq(csrf.as_bytes(), data.csrf.as_bytes()) {
        return Err(UiError::Forbidden(
            "this form is out of date (its security token does not match your session); reload the page and try again"
                .to_owned(),
        ));
    }
    Ok(caller)
}
