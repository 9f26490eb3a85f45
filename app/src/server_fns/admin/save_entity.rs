//! Create or replace a catalog entity from the console's form: name and
//! description as fields, the rest as Coopr JSON. The whole catalog is validated
//! with the change applied (by the service); every problem comes back next to the
//! field it is about.

// A server function's arguments are its form's fields, one each.
#![allow(clippy::too_many_arguments)]

use leptos::prelude::*;

use crate::error::UiError;
use crate::server_fns::admin::EntityKind;

/// `original` is empty for a new entity (and for a clone), the entity's name when
/// editing it.
#[server(prefix = "/sfn", endpoint = "admin-save-entity")]
pub async fn save_entity(
    csrf: String,
    kind: EntityKind,
    original: String,
    name: String,
    description: String,
    body: String,
    managed: Option<Vec<String>>,
    picks: Option<Vec<String>>,
    text_at: Option<Vec<String>>,
    text: Option<Vec<String>>,
) -> Result<String, UiError> {
    use crate::server_fns::admin::ConsoleKind;

    use crate::pages::admin::catalog::fields::{apply, Posted};

    let caller = super::caller::admin_checked(&csrf).await?;
    let service = crate::session::service()?;
    let name = name.trim().to_owned();
    let original = original.trim();
    check_name(&name)?;
    if !original.is_empty() && original != name {
        return Err(UiError::field(
            "name",
            "an entity cannot be renamed; clone it under the new name instead",
        ));
    }
    if original.is_empty() && service.entity(&caller, kind.key(), &name).await.is_ok() {
        return Err(UiError::field(
            "name",
            format!("a {} named {name:?} already exists", kind.singular()),
        ));
    }
    let mut value = parse_body(&body)?;
    let posted = Posted {
        managed: managed.as_deref().unwrap_or_default(),
        picks: picks.as_deref().unwrap_or_default(),
        text_at: text_at.as_deref().unwrap_or_default(),
        text: text.as_deref().unwrap_or_default(),
    };
    apply(&mut value, &posted).map_err(|problems| UiError::Invalid {
        message: problems.join("; "),
        problems: problems
            .into_iter()
            .map(|message| crate::error::FieldProblem {
                field: "structured".to_owned(),
                message,
            })
            .collect(),
    })?;
    if let serde_json::Value::Object(fields) = &mut value {
        fields.insert("name".to_owned(), serde_json::Value::String(name.clone()));
        let description = description.trim();
        if description.is_empty() {
            fields.remove("description");
        } else {
            fields.insert(
                "description".to_owned(),
                serde_json::Value::String(description.to_owned()),
            );
        }
    }
    service
        .put_entity(&caller, kind.key(), &name, value)
        .await
        .map_err(|error| on_body(error.into()))?;
    let url = format!("/admin/{}/{}?saved=1", kind.path(), name);
    leptos_axum::redirect(&url);
    Ok(url)
}

/// Coopr's name rule: 1–255 characters of `[A-Za-z0-9_.-]`.
#[cfg(feature = "ssr")]
fn check_name(name: &str) -> Result<(), UiError> {
    let ok = !name.is_empty()
        && name.len() <= 255
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if name == "new" {
        // `/admin/<kind>/new` is the create form.
        Err(UiError::field(
            "name",
            "\"new\" is reserved; pick another name",
        ))
    } else if ok {
        Ok(())
    } else {
        Err(UiError::field(
            "name",
            "use 1–255 letters, digits, '_', '.' or '-'",
        ))
    }
}

#[cfg(feature = "ssr")]
fn parse_body(raw: &str) -> Result<serde_json::Value, UiError> {
    if raw.trim().is_empty() {
        return Ok(serde_json::Value::Object(serde_json::Map::new()));
    }
    match serde_json::from_str::<serde_json::Value>(raw) {
        Ok(value @ serde_json::Value::Object(_)) => Ok(value),
        Ok(_) => Err(UiError::field(
            "body",
            "write a JSON object: { \"key\": value }",
        )),
        Err(error) => Err(UiError::field("body", format!("not valid JSON: {error}"))),
    }
}

/// The catalog's problems name JSON paths inside the catalog; the form shows them
/// under the JSON field (with their path), except those about the name.
#[cfg(feature = "ssr")]
fn on_body(error: UiError) -> UiError {
    match error {
        UiError::Invalid { message, problems } => UiError::Invalid {
            message,
            problems: problems
                .into_iter()
                .map(|problem| {
                    let field = if problem.field == "name" {
                        "name"
                    } else {
                        "body"
                    };
                    crate::error::FieldProblem {
                        field: field.to_owned(),
                        message: if field == "body" && !problem.field.is_empty() {
                            format!("{}: {}", problem.field, problem.message)
                        } else {
                            problem.message
                        },
                    }
                })
                .collect(),
        },
        other => other,
    }
}
