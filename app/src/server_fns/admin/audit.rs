//! The audit log with filters (actor, action prefix), newest first, a page at a time:
//! a page ends with the cursor of its last entry, and the next one starts right after
//! it (by time, then id), so entries of one millisecond are neither skipped nor shown
//! twice.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::UiError;
use crate::server_fns::admin::AuditRow;

/// Entries a page shows.
pub const AUDIT_PAGE: usize = 100;

/// One page of the log, and where the next (older) one starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditLogPage {
    pub rows: Vec<AuditRow>,
    /// `before` for the page of older entries; `None` on the oldest page.
    pub older: Option<String>,
}

/// `before`: blank for the newest page, else an `older` a page gave out (anything else
/// reads as the newest page, as a link cut short would).
#[server(prefix = "/sfn", endpoint = "admin-audit")]
pub async fn audit_log(
    actor: String,
    action: String,
    before: String,
) -> Result<AuditLogPage, UiError> {
    let caller = super::caller::caller().await?;
    super::caller::require_admin(&caller)?;
    let blank = |raw: String| {
        let raw = raw.trim().to_owned();
        (!raw.is_empty()).then_some(raw)
    };
    let (before_ms, before_id) = match before.split_once('.') {
        Some((ms, id)) if !id.is_empty() => match ms.parse::<i64>() {
            Ok(ms) => (Some(ms), Some(id.to_owned())),
            Err(_) => (None, None),
        },
        _ => (None, None),
    };
    // A superadmin sees the tenant they switched to, like every other admin page.
    let query = engine::service::AuditQuery {
        actor: blank(actor),
        action: blank(action),
        tenant_id: Some(caller.tenant_id().to_owned()),
        before_ms,
        before_id,
        // One more than a page says whether an older page follows.
        limit: Some(AUDIT_PAGE as u32 + 1),
    };
    let mut rows: Vec<AuditRow> = crate::session::service()?
        .audit_log(&caller, &query)
        .await?
        .into_iter()
        .map(|entry| AuditRow {
            has_change: entry.before.is_some() || entry.after.is_some(),
            // Compared by the name parsed: an older version's entry may carry a name
            // this version does not know (it lists all the same, as its text).
            recorded: entry.known_action() == Some(api_types::AuditAction::NodeTerminalEnd)
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
        .collect();
    let more = rows.len() > AUDIT_PAGE;
    rows.truncate(AUDIT_PAGE);
    let older = more
        .then(|| rows.last().map(|row| format!("{}.{}", row.at_ms, row.id)))
        .flatten();
    Ok(AuditLogPage { rows, older })
}
