//! The structured part of the entity form: fields that stand for places in the
//! entity's JSON (pickers of catalog names, selects, text and number inputs). They
//! post as pairs the server applies to the JSON field's object, so the JSON field
//! only holds what the form has no input for.
//!
//! Encoding (plain form fields, so it works without JavaScript):
//! - `managed[]` = a JSON pointer to a list of names the form owns; every checked
//!   `picks[]` value `pointer=name` goes into it (none checked = empty list).
//! - `text_at[]` + `text[]`, in document order: a pointer and its value. A pointer
//!   starting with `#` takes a number, `,` a comma-separated list, `;` one group
//!   per line (comma-separated names), otherwise a string. Empty removes the key.

use serde_json::{Map, Value};

/// How a text field's value becomes JSON.
fn typed(pointer: &str, raw: &str) -> (String, Result<Option<Value>, String>) {
    let raw = raw.trim();
    let names = |line: &str| -> Vec<Value> {
        line.split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(|name| Value::String(name.to_owned()))
            .collect()
    };
    if let Some(pointer) = pointer.strip_prefix('#') {
        let value = if raw.is_empty() {
            Ok(None)
        } else {
            raw.parse::<i64>()
                .map(|number| Some(Value::from(number)))
                .map_err(|_| format!("{pointer}: enter a whole number"))
        };
        (pointer.to_owned(), value)
    } else if let Some(pointer) = pointer.strip_prefix(',') {
        (pointer.to_owned(), Ok(Some(Value::Array(names(raw)))))
    } else if let Some(pointer) = pointer.strip_prefix(';') {
        let groups = raw
            .lines()
            .map(names)
            .filter(|group| !group.is_empty())
            .map(Value::Array)
            .collect();
        (pointer.to_owned(), Ok(Some(Value::Array(groups))))
    } else if raw.is_empty() {
        (pointer.to_owned(), Ok(None))
    } else {
        (pointer.to_owned(), Ok(Some(Value::String(raw.to_owned()))))
    }
}

/// Sets (or with `None` removes) the value at a JSON pointer, creating objects
/// on the way.
pub fn set(body: &mut Value, pointer: &str, value: Option<Value>) {
    let mut parts: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|part| part.replace("~1", "/").replace("~0", "~"))
        .collect();
    let Some(last) = parts.pop() else {
        return;
    };
    let mut here = body;
    for part in parts {
        let Value::Object(map) = here else {
            return;
        };
        let next = map.entry(part).or_insert_with(|| Value::Object(Map::new()));
        if !next.is_object() {
            if value.is_none() {
                return;
            }
            *next = Value::Object(Map::new());
        }
        here = next;
    }
    if let Value::Object(map) = here {
        match value {
            Some(value) => {
                map.insert(last, value);
            }
            None => {
                map.remove(&last);
            }
        }
    }
}

/// Removes what the structured fields own from a body shown in the JSON field.
pub fn strip(body: &mut Value, pointers: &[String]) {
    for pointer in pointers {
        let pointer = pointer.trim_start_matches(['#', ',', ';']);
        set(body, pointer, None);
    }
    prune(body);
    drop_empty(body);
}

/// Removes empty objects left behind (for showing the rest compactly).
fn drop_empty(value: &mut Value) {
    if let Value::Object(map) = value {
        for child in map.values_mut() {
            drop_empty(child);
        }
        map.retain(|_, child| !matches!(child, Value::Object(inner) if inner.is_empty()));
    }
}

/// Drops objects the structured fields left empty where emptiness means nothing:
/// per-service constraints, actions without an automator type, empty parents.
fn prune(body: &mut Value) {
    if let Some(Value::Object(actions)) = body.pointer_mut("/provisioner/actions") {
        actions.retain(|_, action| action.get("type").is_some());
    }
    if let Some(Value::Object(services)) = body.pointer_mut("/constraints/services") {
        for constraint in services.values_mut() {
            if let Value::Object(fields) = constraint {
                fields.retain(|_, value| !matches!(value, Value::Object(map) if map.is_empty()));
                fields.retain(|_, value| !matches!(value, Value::Array(items) if items.is_empty()));
            }
        }
        services
            .retain(|_, constraint| !matches!(constraint, Value::Object(map) if map.is_empty()));
    }
}

/// The form's structured fields as posted.
#[derive(Debug, Default)]
pub struct Posted<'a> {
    pub managed: &'a [String],
    pub picks: &'a [String],
    pub text_at: &'a [String],
    pub text: &'a [String],
}

/// Applies the structured fields to the body; errors name the field's pointer.
pub fn apply(body: &mut Value, posted: &Posted) -> Result<(), Vec<String>> {
    for pointer in posted.managed {
        let prefix = format!("{pointer}=");
        let picked: Vec<Value> = posted
            .picks
            .iter()
            .filter_map(|pick| pick.strip_prefix(&prefix))
            .map(|name| Value::String(name.to_owned()))
            .collect();
        set(body, pointer, Some(Value::Array(picked)));
    }
    let mut problems = Vec::new();
    for (pointer, raw) in posted.text_at.iter().zip(posted.text) {
        match typed(pointer, raw) {
            (pointer, Ok(value)) => set(body, &pointer, value),
            (_, Err(problem)) => problems.push(problem),
        }
    }
    prune(body);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// The names in the list at `pointer`.
pub fn names_at(body: &Value, pointer: &str) -> Vec<String> {
    body.pointer(pointer)
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|item| match item {
                    Value::String(name) => Some(name.clone()),
                    // Default services may be `{"name", "config"}`.
                    Value::Object(map) => {
                        map.get("name").and_then(Value::as_str).map(str::to_owned)
                    }
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The value at `pointer` as a text field shows it (`#`, `,`, `;` as above).
pub fn text_at(body: &Value, pointer: &str) -> String {
    let bare = pointer.trim_start_matches(['#', ',', ';']);
    let value = body.pointer(bare);
    if pointer.starts_with(';') {
        return value
            .and_then(Value::as_array)
            .map(|groups| {
                groups
                    .iter()
                    .map(|group| names_at(group, "").join(", "))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default();
    }
    if pointer.starts_with(',') {
        return names_at(body, bare).join(", ");
    }
    match value {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Number(number)) => number.to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Tests fail loudly by design.

    use serde_json::json;

    use super::{apply, strip, Posted};

    #[test]
    fn picks_texts_and_numbers_land_at_their_pointers() {
        let mut body = json!({"dependencies": {"runtime": {"requires": ["old"]}}});
        let managed = ["/dependencies/runtime/requires".to_owned()];
        let picks = ["/dependencies/runtime/requires=base".to_owned()];
        let text_at = [
            "#/constraints/size/min".to_owned(),
            "/provisioner/actions/install/type".to_owned(),
            "/provisioner/actions/install/fields/script".to_owned(),
            "/provisioner/actions/start/type".to_owned(),
            ";/constraints/layout/cantcoexist".to_owned(),
        ];
        let text = ["2", "shell", "echo hi", "", "a, b\nc,d"].map(str::to_owned);
        apply(
            &mut body,
            &Posted {
                managed: &managed,
                picks: &picks,
                text_at: &text_at,
                text: &text,
            },
        )
        .unwrap();
        assert_eq!(
            body,
            json!({
                "dependencies": {"runtime": {"requires": ["base"]}},
                "constraints": {"size": {"min": 2}, "layout": {"cantcoexist": [["a", "b"], ["c", "d"]]}},
                "provisioner": {"actions": {"install": {"type": "shell", "fields": {"script": "echo hi"}}}}
            })
        );
        assert_eq!(
            super::text_at(&body, ";/constraints/layout/cantcoexist"),
            "a, b\nc, d"
        );
        strip(&mut body, text_at.as_ref());
        assert_eq!(
            body,
            json!({"dependencies": {"runtime": {"requires": ["base"]}}})
        );
    }

    #[test]
    fn a_bad_number_is_reported() {
        let mut body = json!({});
        let text_at = ["#/constraints/size/max".to_owned()];
        let text = ["lots".to_owned()];
        let problems = apply(
            &mut body,
            &Posted {
                managed: &[],
                picks: &[],
                text_at: &text_at,
                text: &text,
            },
        )
        .unwrap_err();
        assert!(problems[0].contains("whole number"));
    }
}
