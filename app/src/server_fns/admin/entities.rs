//! The entities of one catalog kind, for its list page, with a one-line summary.

use leptos::prelude::*;

use crate::error::UiError;
use crate::server_fns::admin::{EntityKind, EntityRow};

#[server(prefix = "/sfn", endpoint = "admin-entities")]
pub async fn list_entities(kind: EntityKind) -> Result<Vec<EntityRow>, UiError> {
    let caller = super::caller::caller().await?;
    super::caller::require_admin(&caller)?;
    let mut rows: Vec<EntityRow> = crate::session::service()?
        .list_entities(&caller, kind.key(), super::caller::all())
        .await?
        .items
        .into_iter()
        .map(|entity| EntityRow {
            description: text(&entity.body, "/description"),
            summary: summary(kind, &entity.body),
            name: entity.name,
            version: entity.version,
            updated_at_ms: entity.created_at_ms,
        })
        .collect();
    rows.sort_by(|left, right| left.name.cmp(&right.name));
    Ok(rows)
}

#[cfg(feature = "ssr")]
fn text(body: &serde_json::Value, pointer: &str) -> String {
    body.pointer(pointer)
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

#[cfg(feature = "ssr")]
fn names(body: &serde_json::Value, pointer: &str) -> Vec<String> {
    match body.pointer(pointer) {
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .filter_map(serde_json::Value::as_str)
            .map(str::to_owned)
            .collect(),
        Some(serde_json::Value::Object(map)) => map.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// One line that tells an entity apart in its list.
#[cfg(feature = "ssr")]
fn summary(kind: EntityKind, body: &serde_json::Value) -> String {
    let join = |items: Vec<String>| items.join(", ");
    match kind {
        EntityKind::Provider => format!("type {}", text(body, "/providertype")),
        EntityKind::HardwareType | EntityKind::ImageType => {
            format!("providers: {}", join(names(body, "/providermap")))
        }
        EntityKind::Service => {
            let requires: Vec<String> = names(body, "/dependencies/install/requires")
                .into_iter()
                .chain(names(body, "/dependencies/runtime/requires"))
                .collect();
            let actions = names(body, "/provisioner/actions");
            let mut parts = Vec::new();
            if !requires.is_empty() {
                parts.push(format!("requires {}", join(requires)));
            }
            if !actions.is_empty() {
                parts.push(format!("actions {}", join(actions)));
            }
            parts.join(" · ")
        }
        EntityKind::ClusterTemplate => {
            let bound = |key: &str| {
                body.pointer(&format!("/constraints/size/{key}"))
                    .map(|value| value.to_string().trim_matches('"').to_owned())
            };
            let size = match (bound("min"), bound("max")) {
                (Some(min), Some(max)) => format!("size {min}–{max}"),
                (Some(min), None) => format!("size ≥ {min}"),
                (None, Some(max)) => format!("size ≤ {max}"),
                (None, None) => "any size".to_owned(),
            };
            format!(
                "defaults {} · {size}",
                join(names(body, "/defaults/services"))
            )
        }
        EntityKind::PartialTemplate => {
            let services = names(body, "/defaults/services");
            let immutable =
                body.get("immutable").and_then(serde_json::Value::as_bool) == Some(true);
            format!(
                "defaults {}{}",
                join(services),
                if immutable { " · immutable" } else { "" }
            )
        }
    }
}
