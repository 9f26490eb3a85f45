//! Pages that need a signed-in user send visitors to `/login?next=<where they were
//! going>` before anything renders, so a bookmark works after signing in, with or
//! without JavaScript. `/` sends signed-in users to their clusters.
//!
//! Every page request also gets the session's CSRF token in its extensions, for
//! the forms the page renders. Only the presence of a signed-in session is checked
//! here; whether it is still valid (absolute age, ended by a password change) is
//! checked by every server function, which answers "sign in again" when it is not.
//!
//! A session that cannot be read because the database is not answering gets a plain
//! 503 saying so, rather than a trip to the login page that would fail the same way.

use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tower_sessions::Session;

use app::query::encode_value;
use app::session::{session_failure, CsrfToken, SessionData, SESSION_USER};
use engine::service::ServiceError;

/// Path prefixes of pages for signed-in users only.
const PROTECTED: &[&str] = &["/clusters", "/admin", "/profile"];

fn is_protected(path: &str) -> bool {
    PROTECTED.iter().any(|prefix| {
        path == *prefix
            || path
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// Paths that answer without the session: health checks must not wait for (or fail
/// with) the session store.
const SESSIONLESS: &[&str] = &["/healthz", "/readyz", "/metrics"];

pub async fn page_guard(session: Session, mut request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    let is_page = !path.starts_with("/api/")
        && !path.starts_with("/pkg/")
        && !SESSIONLESS.contains(&path.as_str());
    let data = if is_page {
        match session.get::<SessionData>(SESSION_USER).await {
            Ok(data) => data,
            Err(error) => match session_failure(error) {
                ServiceError::Unavailable => return database_unavailable(),
                // An unreadable record: as if there were none (sign in again).
                _ => None,
            },
        }
    } else {
        None
    };
    if let Some(data) = &data {
        // Pages render the session's CSRF token into their forms from here.
        request
            .extensions_mut()
            .insert(CsrfToken(data.csrf.clone()));
    }
    if path != "/" && !is_protected(&path) {
        return next.run(request).await;
    }
    let target = match (path.as_str(), data.is_some()) {
        ("/", true) => "/clusters".to_owned(),
        ("/", false) => "/login".to_owned(),
        (_, true) => return next.run(request).await,
        (_, false) => {
            let wanted = request
                .uri()
                .path_and_query()
                .map_or(path.as_str(), |path_and_query| path_and_query.as_str());
            format!("/login?next={}", encode_value(wanted))
        }
    };
    (StatusCode::SEE_OTHER, [(header::LOCATION, target)]).into_response()
}

/// The plain answer of a page while the database is not answering.
pub fn database_unavailable() -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::RETRY_AFTER, RETRY_AFTER_SECS),
        ],
        format!("{}\n", api_types::DATABASE_UNAVAILABLE),
    )
        .into_response()
}

/// When a client should try again while the database is not answering (a restart
/// takes seconds).
pub const RETRY_AFTER_SECS: &str = "5";

#[cfg(test)]
mod tests {
    use super::is_protected;
    use app::query::encode_value;

    #[test]
    fn protects_the_portal_and_admin_trees_only() {
        assert!(is_protected("/clusters"));
        assert!(is_protected("/clusters/new"));
        assert!(is_protected("/admin/users"));
        assert!(is_protected("/profile"));
        assert!(!is_protected("/clustersx"));
        assert!(!is_protected("/login"));
        assert!(!is_protected("/api/v1/clusters"));
    }

    #[test]
    fn next_survives_query_strings() {
        assert_eq!(
            encode_value("/clusters/new?size=3&template=web"),
            "/clusters/new%3Fsize%3D3%26template%3Dweb"
        );
    }
}
