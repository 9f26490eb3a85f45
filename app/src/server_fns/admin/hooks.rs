//! The hooks page's server functions (issue 43): the tenant's hooks with their
//! latest deliveries; adding one (its secret is returned this once), removing one,
//! sending a test event and sending a delivery again. Each calls the service the
//! hooks API calls, which checks the role.

// A server function's arguments are its form's fields, one each (an attribute on the
// function does not reach the client half the `server` macro makes).
#![allow(clippy::too_many_arguments)]

use api_types::{CreatedHook, DeliveryView, HookView};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::UiError;

/// How many deliveries of each hook the page shows, newest first.
pub const DELIVERIES_SHOWN: u32 = 10;

/// A hook and its latest deliveries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookWithDeliveries {
    pub hook: HookView,
    pub deliveries: Vec<DeliveryView>,
    /// How many deliveries the hook has in all.
    pub total: u64,
}

#[server(prefix = "/sfn", endpoint = "admin-hooks")]
pub async fn hooks_page() -> Result<Vec<HookWithDeliveries>, UiError> {
    let caller = super::caller::caller().await?;
    super::caller::require_admin(&caller)?;
    let service = crate::session::service()?;
    let hooks = service.list_hooks(&caller, super::caller::all()).await?;
    let mut page = Vec::new();
    // A superadmin's list holds every tenant's hooks; the page is the administered
    // tenant's.
    for hook in hooks
        .items
        .into_iter()
        .filter(|hook| hook.tenant_id == caller.tenant_id())
    {
        let deliveries = service
            .hook_deliveries(
                &caller,
                &hook.id,
                engine::service::PageRequest {
                    offset: 0,
                    limit: DELIVERIES_SHOWN,
                },
            )
            .await?;
        page.push(HookWithDeliveries {
            hook,
            deliveries: deliveries.items,
            total: deliveries.total,
        });
    }
    Ok(page)
}

/// Adds a hook. `kind` says what it is: `events` (told of the ticked `events`) or
/// `gate` (asked before the ticked `gates` operations, with `timeout_secs` and
/// `on_failure`). Each bad value is named next to its field.
#[server(prefix = "/sfn", endpoint = "admin-add-hook")]
pub async fn add_hook(
    csrf: String,
    url: String,
    kind: String,
    events: Option<Vec<String>>,
    gates: Option<Vec<String>>,
    timeout_secs: String,
    on_failure: String,
    format: String,
) -> Result<CreatedHook, UiError> {
    let caller = super::caller::admin_checked(&csrf).await?;
    let mut request = api_types::HookRequest {
        url: url.trim().to_owned(),
        format: Some(format.parse().map_err(|error: api_types::UnknownValue| {
            UiError::field("format", error.to_string())
        })?),
        ..Default::default()
    };
    match kind.as_str() {
        "events" => request.events = parse_all("events", events)?,
        "gate" => {
            request.gates = parse_all("gates", gates)?;
            if request.gates.is_empty() {
                return Err(UiError::field(
                    "gates",
                    "tick at least one operation the gate is asked about",
                ));
            }
            request.timeout_secs = match timeout_secs.trim() {
                "" => None,
                raw => Some(raw.parse().map_err(|_| {
                    UiError::field(
                        "timeout_secs",
                        format!("{raw:?} is not a number of seconds (1-10)"),
                    )
                })?),
            };
            request.on_failure = Some(on_failure.parse().map_err(
                |error: api_types::UnknownValue| UiError::field("on_failure", error.to_string()),
            )?);
        }
        other => {
            return Err(UiError::field(
                "kind",
                format!("{other:?} is not a kind of hook: events or gate"),
            ))
        }
    }
    Ok(crate::session::service()?
        .add_hook(&caller, &request)
        .await?)
}

#[server(prefix = "/sfn", endpoint = "admin-remove-hook")]
pub async fn remove_hook(csrf: String, id: String) -> Result<(), UiError> {
    let caller = super::caller::admin_checked(&csrf).await?;
    crate::session::service()?.remove_hook(&caller, &id).await?;
    leptos_axum::redirect("/admin/hooks?removed=1");
    Ok(())
}

#[server(prefix = "/sfn", endpoint = "admin-test-hook")]
pub async fn test_hook(csrf: String, id: String) -> Result<DeliveryView, UiError> {
    let caller = super::caller::admin_checked(&csrf).await?;
    let delivery = crate::session::service()?.test_hook(&caller, &id).await?;
    leptos_axum::redirect(&format!("/admin/hooks?sent={}", delivery.id));
    Ok(delivery)
}

#[server(prefix = "/sfn", endpoint = "admin-redeliver")]
pub async fn redeliver(
    csrf: String,
    hook: String,
    delivery: String,
) -> Result<DeliveryView, UiError> {
    let caller = super::caller::admin_checked(&csrf).await?;
    let delivery = crate::session::service()?
        .redeliver(&caller, &hook, &delivery)
        .await?;
    leptos_axum::redirect(&format!("/admin/hooks?sent={}", delivery.id));
    Ok(delivery)
}

/// Each ticked word as `T`, or the first unknown one named next to `field`.
#[cfg(feature = "ssr")]
fn parse_all<T: std::str::FromStr<Err = api_types::UnknownValue>>(
    field: &str,
    raw: Option<Vec<String>>,
) -> Result<Vec<T>, UiError> {
    raw.unwrap_or_default()
        .iter()
        .map(|word| {
            word.parse()
                .map_err(|error: api_types::UnknownValue| UiError::field(field, error.to_string()))
        })
        .collect()
}
