//! Take an SSH public key off the signed-in user's profile; the service starts a
//! `sync-keys` job on each of their clusters, which the page then lists.

use leptos::prelude::*;

use crate::error::UiError;

/// `id` is the key's id, from the page's list.
#[server(prefix = "/sfn", endpoint = "profile-remove-key")]
pub async fn remove_key(csrf: String, id: String) -> Result<(), UiError> {
    use super::{KeyChangeKind, KeyNotice};

    let caller = crate::session::caller_checked(&csrf).await?;
    let service = crate::session::service()?;
    // The notice names the key by its fingerprint, which the removal does not return.
    let fingerprint = service
        .my_keys(&caller)
        .await?
        .into_iter()
        .find(|key| key.id == id)
        .map(|key| key.fingerprint)
        .unwrap_or_default();
    let change = service.remove_my_key(&caller, &id).await?;
    super::notice::keep(&KeyNotice {
        change: KeyChangeKind::Removed(fingerprint),
        clusters: change.clusters,
    })
    .await
}
