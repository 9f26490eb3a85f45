//! A tenant admin turns on or off putting the tenant's admins' keys on every cluster
//! of the tenant; a change syncs every active cluster, which the page then lists.

use leptos::prelude::*;

use crate::error::UiError;

/// `choice` is the form's word (`on` or `off`), so each button is one plain form.
#[server(prefix = "/sfn", endpoint = "profile-admin-keys")]
pub async fn set_admin_keys(csrf: String, choice: String) -> Result<(), UiError> {
    use super::{KeyChangeKind, KeyNotice};

    let caller = crate::session::caller_checked(&csrf).await?;
    let on = match choice.trim() {
        "on" => true,
        "off" => false,
        other => {
            return Err(UiError::field(
                "choice",
                format!("say on or off, not {other:?}"),
            ))
        }
    };
    let tenant_id = caller.principal.tenant_id.clone();
    let clusters = crate::session::service()?
        .set_admin_keys_setting(
            &caller,
            &tenant_id,
            api_types::AdminKeysSetting {
                admin_keys_on_all_clusters: on,
            },
        )
        .await?;
    super::notice::keep(&KeyNotice {
        change: KeyChangeKind::AdminKeys(on),
        clusters,
    })
    .await
}
