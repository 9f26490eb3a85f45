//! The audit log with filters (actor, action prefix), newest first.

use leptos::prelude::*;

use crate::error::UiError;
use crate::server_fns::admin::AuditRow;

#[server(prefix = "/sfn", endpoint = "admin-audit")]
pub async fn audit_log(actor: String, action: String) -> Result<Vec<AuditRow>, UiError> {
    let caller = super::caller::caller().await?;
    super::caller::require_admin(&caller)?;
    let blank = |raw: String| {
        let raw = raw.trim().to_owned();
        (!raw.is_empty()).then_some(raw)
    };
    // A superadmin sees the tenant they switched to, like every other admin page.
    let query = engine::service::AuditQuery {
        actor: blank(actor),
        action: blank(action),
        tenant_id: Some(caller.tenant_id().to_owned()),
        before_ms: None,
        limit: Some(200),
    };
    Ok(crate::session::service()?
        .audit_log(&caller, &query)
        .await?
        .into_iter()
        .map(|entry| AuditRow {
            has_change: entry.before.is_some() || entry.after.is_some(),
            recorded: entry.action == "node.terminal.end"
                && entry
                    .after
                    .as_ref()
                    .and_then(|after| after.get("recorded"))
                    .and_then(serde_json::Value::as_bool)
                    .unwrap_or(false),
            id: entry.id,
            tenant_id: entry.tenant_id,
            actor: entry.actor,
            action: entry.action,
            target: format!("{} {}", entry.target_kind, entry.target),
            address: entry.address,
            at_ms: entry.at_ms,
        })
        .collect())
}
