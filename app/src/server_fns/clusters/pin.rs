//! Pin a cluster to its catalog revision, or unpin it: a rollout of its template's
//! new revision lists a pinned cluster and passes it over.

use leptos::prelude::*;

use crate::error::UiError;

/// `pinned` is the form's word (`true` or `false`), so the switch is one plain form.
#[server(prefix = "/sfn", endpoint = "cluster-pin")]
pub async fn pin_cluster(csrf: String, id: String, pinned: String) -> Result<bool, UiError> {
    let caller = crate::session::caller_checked(&csrf).await?;
    let pinned = match pinned.trim() {
        "true" => true,
        "false" => false,
        other => {
            return Err(UiError::field(
                "pinned",
                format!("say true or false, not {other:?}"),
            ))
        }
    };
    let choice = crate::session::service()?
        .set_pinned(&caller, &id, &api_types::PinChoice { pinned })
        .await?;
    Ok(choice.pinned)
}
