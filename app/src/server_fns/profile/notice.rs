//! The profile page's one-time notice, kept in the signed-in session between the
//! change that made it and the page load that shows it (server side only).

use super::KeyNotice;
use crate::error::UiError;

/// The session key of the notice.
const NOTICE: &str = "corral.profile-notice";

/// Keeps `notice` for the page's next load (replacing one not shown yet).
pub async fn keep(notice: &KeyNotice) -> Result<(), UiError> {
    crate::session::request_session()?
        .insert(NOTICE, notice)
        .await
        .map_err(|error| {
            tracing::error!(%error, "could not keep the profile notice");
            UiError::Internal
        })
}

/// The notice not shown yet, taken out of the session. A notice that cannot be read
/// (a session store fault) is left out: the page shows the keys as they are anyway.
pub async fn take() -> Option<KeyNotice> {
    let session = crate::session::request_session().ok()?;
    match session.remove::<KeyNotice>(NOTICE).await {
        Ok(notice) => notice,
        Err(error) => {
            tracing::warn!(%error, "could not read the profile notice");
            None
        }
    }
}
