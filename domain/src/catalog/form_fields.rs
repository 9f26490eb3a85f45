//! The structured part of the admin console's entity form: fields that stand for
//! places in the entity's JSON (pickers of catalog names, selects, text and number
//! inputs). They post as pairs the server applies to the JSON field's object, so the
//! JSON field only holds what the form has no input for.
//!
//! Encoding (plain form fields, so it works without JavaScript):
//! - `managed[]` = a JSON pointer to a list of names the form owns; every checked
//!   `picks[]` value `pointer=name` goes into it (none checked = empty list).
//! - `text_at[]` + `text[]`, in document order: a pointer and its value. A pointer
//!   starting with `#` takes a number, `,` a comma-separated list, `;` one group
//!   per line (comma-separated names), otherwise a string. Empty removes the key.
//!
//! Everything here decodes what a browser posted, so it is untrusted: pointers are
//! bounded ([`MAX_POINTER_BYTES`], [`MAX_POINTER_PARTS`]) because each part becomes
//! one level of nested JSON, and serde_json drops and writes values recursively (a
//! 100,000-part pointer once overflowed the server's stack and aborted the process).
//! A post carries at most [`MAX_FIELDS`] structured fields. The module lives in
//! `domain` (not the app) so it can be fuzzed without the web stack.

use serde_json::{Map, Value};

/// Longest pointer a structured field may name, in bytes. The form's own pointers
/// are under 100 bytes (`/constraints/services/<service name>/quantities/max`).
pub const MAX_POINTER_BYTES: usize = 1024;

/// Most parts (`/`-separated segments) a pointer may have: each part is one level
/// of JSON nesting. The form's own pointers have at most 5.
pub const MAX_POINTER_PARTS: usize = 32;

/// Most structured fields one post may carry (`managed[]`, `picks[]` and text
/// fields together). A template form for a catalog of a few hundred services stays
/// well below it.
pub const MAX_FIELDS: usize = 2000;

/// How a text field's value becomes JSON.
pub fn typed(pointer: &str, raw: &str) -> (String, Result<Option<Value>, String>) {
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
                .map_err(|_| format!("{}: enter a whole number", shown(pointer)))
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

/// A pointer as error messages show it: cut short, since a refused one may be huge.
fn shown(pointer: &str) -> String {
    const SHOWN: usize = 60;
    match pointer.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{}…", &pointer[..cut]),
        None => pointer.to_owned(),
    }
}

/// Refuses a pointer too long or too deep to apply, naming it.
fn check_pointer(pointer: &str) -> Result<(), String> {
    if pointer.len() > MAX_POINTER_BYTES {
        return Err(format!(
            "{}: a field's pointer may be at most {MAX_POINTER_BYTES} bytes long, this one is {}",
            shown(pointer),
            pointer.len()
        ));
    }
    let parts = pointer.bytes().filter(|byte| *byte == b'/').count();
    if parts > MAX_POINTER_PARTS {
        return Err(format!(
            "{}: a field's pointer may have at most {MAX_POINTER_PARTS} parts, this one has {parts}",
            shown(pointer)
        ));
    }
    Ok(())
}

/// Sets (or with `None` removes) the value at a JSON pointer, creating objects
/// on the way. A pointer over the limits is refused with a message naming it, and
/// the body is left as it was.
pub fn set(body: &mut Value, pointer: &str, value: Option<Value>) -> Result<(), String> {
    check_pointer(pointer)?;
    let mut parts: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|part| part.replace("~1", "/").replace("~0", "~"))
        .collect();
    let Some(last) = parts.pop() else {
        return Ok(());
    };
    let mut here = body;
    for part in parts {
        let Value::Object(map) = here else {
            return Ok(());
        };
        let next = map.entry(part).or_insert_with(|| Value::Object(Map::new()));
        if !next.is_object() {
            if value.is_none() {
                return Ok(());
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
    Ok(())
}

/// Removes what the structured fields own from a body shown in the JSON field.
pub fn strip(body: &mut Value, pointers: &[String]) {
    for pointer in pointers {
        let pointer = pointer.trim_start_matches(['#', ',', ';']);
        // A pointer over the limits owns nothing (apply refuses it), so there is
        // nothing of it to take out of the body.
        if set(body, pointer, None).is_err() {
            continue;
        }
    }
    prune(body);
    drop_empty(body);
}

/// Removes empty objects left behind (for showing the rest compactly). Recursive,
/// but over a body no deeper than serde_json's parse limit plus one bounded pointer.
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

impl Posted<'_> {
    /// How many structured fields the post carries (a text field is a pointer and
    /// a value, counted once).
    pub fn len(&self) -> usize {
        self.managed.len() + self.picks.len() + self.text_at.len().max(self.text.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Applies the structured fields to the body; errors name the field's pointer.
/// A post with more than [`MAX_FIELDS`] fields is refused before anything changes.
pub fn apply(body: &mut Value, posted: &Posted) -> Result<(), Vec<String>> {
    let fields = posted.len();
    if fields > MAX_FIELDS {
        return Err(vec![format!(
            "the form carries {fields} structured fields; at most {MAX_FIELDS} are accepted"
        )]);
    }
    let mut problems = Vec::new();
    for pointer in posted.managed {
        let prefix = format!("{pointer}=");
        let picked: Vec<Value> = posted
            .picks
            .iter()
            .filter_map(|pick| pick.strip_prefix(&prefix))
            .map(|name| Value::String(name.to_owned()))
            .collect();
        if let Err(problem) = set(body, pointer, Some(Value::Array(picked))) {
            problems.push(problem);
        }
    }
    for (pointer, raw) in posted.text_at.iter().zip(posted.text) {
        match typed(pointer, raw) {
            (pointer, Ok(value)) => {
                if let Err(problem) = set(body, &pointer, value) {
                    problems.push(problem);
                }
            }
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

    use super::*;

    /// A post of text fields alone, as most of these tests send.
    fn text_fields_only<'a>(text_at: &'a [String], text: &'a [String]) -> Posted<'a> {
        Posted {
            text_at,
            text,
            ..Posted::default()
        }
    }

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
        let problems = apply(&mut body, &text_fields_only(&text_at, &text)).unwrap_err();
        assert!(problems[0].contains("whole number"));
    }

    /// The post that once aborted the server: 100,000 nested objects, dropped
    /// recursively, overflowed the stack.
    #[test]
    fn a_pointer_of_100000_parts_is_refused_not_built() {
        let deep = "/a".repeat(100_000);
        let mut body = json!({"keep": 1});
        let problem = set(&mut body, &deep, Some(json!("x"))).unwrap_err();
        assert!(problem.starts_with("/a/a/a"), "{problem}");
        assert!(problem.contains("at most 1024 bytes"), "{problem}");
        assert!(
            problem.len() < 200,
            "the message must not quote the whole pointer"
        );
        assert_eq!(body, json!({"keep": 1}));

        // Through the form: every way a pointer is posted is refused, by name.
        let managed = [deep.clone()];
        let text_at = [deep.clone(), format!("#{deep}"), format!(";{deep}")];
        let text = ["x", "1", "a,b"].map(str::to_owned);
        let problems = apply(
            &mut body,
            &Posted {
                managed: &managed,
                picks: &[],
                text_at: &text_at,
                text: &text,
            },
        )
        .unwrap_err();
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(
            problems.iter().all(|p| p.starts_with("/a/a")),
            "{problems:?}"
        );
        assert_eq!(body, json!({"keep": 1}));

        // Showing a body never fails: the pointer owns nothing.
        strip(&mut body, &text_at);
        assert_eq!(body, json!({"keep": 1}));
    }

    #[test]
    fn pointers_are_bounded_in_parts_as_well_as_bytes() {
        let mut body = json!({});
        let deepest = "/a".repeat(MAX_POINTER_PARTS);
        set(&mut body, &deepest, Some(json!(1))).unwrap();
        assert_eq!(body.pointer(&deepest), Some(&json!(1)));

        let too_deep = "/a".repeat(MAX_POINTER_PARTS + 1);
        let problem = set(&mut body, &too_deep, Some(json!(2))).unwrap_err();
        assert!(
            problem.contains("at most 32 parts, this one has 33"),
            "{problem}"
        );
        assert_eq!(body.pointer(&deepest), Some(&json!(1)));

        // Long but shallow is fine up to the byte limit.
        let long = format!("/{}", "k".repeat(MAX_POINTER_BYTES - 1));
        set(&mut body, &long, Some(json!("v"))).unwrap();
        let too_long = format!("/{}", "k".repeat(MAX_POINTER_BYTES));
        assert!(set(&mut body, &too_long, Some(json!("v"))).is_err());
    }

    #[test]
    fn a_post_with_too_many_fields_is_refused_whole() {
        let mut body = json!({});
        let text_at: Vec<String> = (0..=MAX_FIELDS).map(|i| format!("/k{i}")).collect();
        let text = vec!["v".to_owned(); text_at.len()];
        let problems = apply(&mut body, &text_fields_only(&text_at, &text)).unwrap_err();
        assert_eq!(
            problems,
            ["the form carries 2001 structured fields; at most 2000 are accepted"]
        );
        assert_eq!(body, json!({}));

        // At the limit it is applied.
        let posted = text_fields_only(&text_at[..MAX_FIELDS], &text[..MAX_FIELDS]);
        apply(&mut body, &posted).unwrap();
        assert_eq!(body.as_object().unwrap().len(), MAX_FIELDS);
    }
}
