//! Sign in with a username and password; on success, go where the visitor was
//! headed (`next`, a path on this site) or to the clusters.

use leptos::prelude::*;

use crate::error::UiError;

/// Where to go after signing in: `next` when it is a plain path on this site (never
/// another origin, which would make the login page an open redirect).
pub fn landing(next: Option<&str>) -> String {
    match next {
        Some(path) if is_plain_local_path(path) => path.to_owned(),
        _ => "/clusters".to_owned(),
    }
}

/// A path of this site that no browser reads as another origin: one leading `/`, no
/// `//` or `/\` start, no backslash, and nothing a browser strips before parsing
/// (TAB, LF, CR and other controls: `/<TAB>/evil.example` becomes `//evil.example`).
/// Controls would also be refused as a `Location` header.
pub fn is_plain_local_path(path: &str) -> bool {
    let mut chars = path.chars();
    chars.next() == Some('/')
        && !matches!(chars.next(), Some('/' | '\\'))
        && path
            .chars()
            .all(|c| !c.is_control() && !c.is_whitespace() && c != '\\')
}

#[server(prefix = "/sfn", endpoint = "login")]
pub async fn login(
    username: String,
    password: String,
    next: Option<String>,
) -> Result<(), UiError> {
    use engine::accounts::{Password, TokenSecret};
    use engine::service::ServiceError;

    use crate::session::{self, SessionData, SESSION_USER};

    if username.trim().is_empty() {
        return Err(UiError::field("username", "enter your username"));
    }
    if password.is_empty() {
        return Err(UiError::field("password", "enter your password"));
    }
    let parts = use_context::<http::request::Parts>().ok_or(UiError::Internal)?;
    let address = session::client_address(&parts);
    let service = session::service()?;
    let (_, user) = service
        .login(&username, &Password::new(password), address.as_deref())
        .await
        .map_err(|error| match error {
            ServiceError::Unauthenticated => {
                UiError::field("password", "wrong username or password")
            }
            other => other.into(),
        })?;
    let web_session = session::request_session()?;
    // A new id on every sign-in: an id planted before sign-in is worth nothing after.
    web_session.cycle_id().await.map_err(|error| {
        tracing::error!(%error, "session id not cycled");
        UiError::Internal
    })?;
    let data = SessionData {
        user,
        csrf: TokenSecret::generate().expose().to_owned(),
        signed_in_at_ms: engine::store::now_ms(),
    };
    web_session
        .insert(SESSION_USER, &data)
        .await
        .map_err(|error| {
            tracing::error!(%error, "session not saved");
            UiError::Internal
        })?;
    leptos_axum::redirect(&landing(next.as_deref()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::landing;

    #[test]
    fn only_local_paths_are_followed() {
        assert_eq!(landing(Some("/clusters/abc")), "/clusters/abc");
        assert_eq!(landing(Some("/admin?x=1")), "/admin?x=1");
        assert_eq!(landing(Some("//evil.example/")), "/clusters");
        assert_eq!(landing(Some("https://evil.example/")), "/clusters");
        assert_eq!(landing(Some("/\\evil.example")), "/clusters");
        assert_eq!(landing(None), "/clusters");
    }

    #[test]
    fn what_browsers_strip_cannot_smuggle_another_origin() {
        for hostile in [
            "/\t/evil.example/",
            "/\n/evil.example/",
            "/\r\n/evil.example/",
            "/clusters\nSet-Cookie: x=1",
            "/ /evil.example",
            "/\u{0}",
            "/\u{7f}/evil",
            "",
            "clusters",
        ] {
            assert_eq!(landing(Some(hostile)), "/clusters", "{hostile:?}");
        }
        assert_eq!(landing(Some("/")), "/");
    }
}
