//! Turn healing on or off for one cluster, or leave it to the template's policy: a
//! healing cluster's dead nodes are replaced by jobs the monitor submits.

use leptos::prelude::*;

use crate::error::UiError;

/// `choice` is the form's word (`on`, `off` or `template`), so each button of the
/// switch is one plain form.
#[server(prefix = "/sfn", endpoint = "cluster-healing")]
pub async fn set_healing(
    csrf: String,
    id: String,
    choice: String,
) -> Result<api_types::HealingView, UiError> {
    let caller = crate::session::caller_checked(&csrf).await?;
    let enabled = match choice.trim() {
        "on" => Some(true),
        "off" => Some(false),
        "template" => None,
        other => {
            return Err(UiError::field(
                "choice",
                format!("say on, off or template, not {other:?}"),
            ))
        }
    };
    Ok(crate::session::service()?
        .set_healing(&caller, &id, &api_types::HealingChoice { enabled })
        .await?)
}
