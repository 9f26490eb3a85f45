//! Keep an SSH public key on the signed-in user's profile; the service starts a
//! `sync-keys` job on each of their clusters, which the page then lists.

use leptos::prelude::*;

use crate::error::UiError;

/// `public_key` is the pasted line (`ssh-ed25519 AAAA… me@laptop`). Every refusal
/// shows under the field: a line that is not a public key (422), and the same key
/// twice or one key too many (the API's 409), which are about the line too.
#[server(prefix = "/sfn", endpoint = "profile-add-key")]
pub async fn add_key(csrf: String, public_key: String) -> Result<(), UiError> {
    use super::{KeyChangeKind, KeyNotice, KEY_FIELD};

    let caller = crate::session::caller_checked(&csrf).await?;
    let request = api_types::UserKeyRequest { public_key };
    let change = crate::session::service()?
        .add_my_key(&caller, &request)
        .await
        .map_err(|error| match UiError::from(error) {
            UiError::Conflict(message) => UiError::field(KEY_FIELD, message),
            UiError::Invalid { message, problems } if problems.is_empty() => {
                UiError::field(KEY_FIELD, message)
            }
            other => other,
        })?;
    let fingerprint = change.key.map(|key| key.fingerprint).unwrap_or_default();
    super::notice::keep(&KeyNotice {
        change: KeyChangeKind::Added(fingerprint),
        clusters: change.clusters,
    })
    .await
}
