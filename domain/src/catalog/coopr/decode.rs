//! Field-level decoding of Coopr JSON with paths.
//!
//! Decoding is by hand rather than through `serde::Deserialize` so that every
//! problem gets a field path and all of them are collected in one pass: each
//! helper records its error in the [`Ctx`] and returns a neutral value, and the
//! entity is refused at the end if anything was recorded.

use std::collections::HashSet;
use std::str::FromStr;

use indexmap::IndexMap;
use serde_json::{Map, Value};

use super::error::{DecodeError, DecodeProblem};
use crate::catalog::{Count, EntityKind, EntityMeta, Extra, Lease, Link, TemplateRef};
use crate::names::NameError;

/// Collects problems while decoding.
#[derive(Debug, Default)]
pub struct Ctx {
    pub errors: Vec<DecodeError>,
    pub file: Option<String>,
    /// Entity names met so far, to find duplicates.
    pub seen: HashSet<(EntityKind, String)>,
}

impl Ctx {
    pub fn fail(&mut self, path: impl Into<String>, problem: DecodeProblem) {
        self.errors.push(DecodeError {
            file: self.file.clone(),
            path: path.into(),
            problem,
        });
    }

    fn wrong_type(&mut self, path: &str, expected: &'static str, found: &Value) {
        self.fail(
            path,
            DecodeProblem::WrongType {
                expected,
                found: kind_of(found),
            },
        );
    }

    pub fn object(&mut self, value: Value, path: &str) -> Option<Fields> {
        match value {
            Value::Object(map) => Some(Fields {
                map,
                path: path.to_owned(),
            }),
            other => {
                self.wrong_type(path, "an object", &other);
                None
            }
        }
    }

    /// An object field decoded by `decode`, or its default when absent or broken.
    pub fn nested<T: Default>(
        &mut self,
        fields: &mut Fields,
        key: &str,
        decode: impl FnOnce(&mut Ctx, Fields) -> T,
    ) -> T {
        self.nested_opt(fields, key, decode).unwrap_or_default()
    }

    /// Like [`Ctx::nested`], but `None` when absent.
    pub fn nested_opt<T: Default>(
        &mut self,
        fields: &mut Fields,
        key: &str,
        decode: impl FnOnce(&mut Ctx, Fields) -> T,
    ) -> Option<T> {
        let value = fields.take(key)?;
        let path = fields.path_of(key);
        Some(match self.object(value, &path) {
            Some(inner) => decode(self, inner),
            None => T::default(),
        })
    }

    pub fn opt_string(&mut self, fields: &mut Fields, key: &str) -> Option<String> {
        match fields.take(key)? {
            Value::String(text) => Some(text),
            other => {
                self.wrong_type(&fields.path_of(key), "a string", &other);
                None
            }
        }
    }

    pub fn req_string(&mut self, fields: &mut Fields, key: &str) -> Option<String> {
        if !fields.has(key) {
            self.fail(fields.path_of(key), DecodeProblem::Missing);
            return None;
        }
        self.opt_string(fields, key)
    }

    pub fn opt_bool(&mut self, fields: &mut Fields, key: &str) -> Option<bool> {
        match fields.take(key)? {
            Value::Bool(flag) => Some(flag),
            other => {
                self.wrong_type(&fields.path_of(key), "true or false", &other);
                None
            }
        }
    }

    pub fn name<N: FromStr<Err = NameError>>(&mut self, value: Value, path: &str) -> Option<N> {
        match value {
            Value::String(text) => match N::from_str(&text) {
                Ok(name) => Some(name),
                Err(err) => {
                    self.fail(path, err.into());
                    None
                }
            },
            other => {
                self.wrong_type(path, "a name", &other);
                None
            }
        }
    }

    pub fn opt_name<N: FromStr<Err = NameError>>(
        &mut self,
        fields: &mut Fields,
        key: &str,
    ) -> Option<N> {
        let value = fields.take(key)?;
        self.name(value, &fields.path_of(key))
    }

    pub fn name_list<N: FromStr<Err = NameError>>(&mut self, value: Value, path: &str) -> Vec<N> {
        match value {
            Value::Array(items) => items
                .into_iter()
                .enumerate()
                .filter_map(|(index, item)| self.name(item, &format!("{path}[{index}]")))
                .collect(),
            other => {
                self.wrong_type(path, "a list of names", &other);
                Vec::new()
            }
        }
    }

    pub fn names<N: FromStr<Err = NameError>>(&mut self, fields: &mut Fields, key: &str) -> Vec<N> {
        match fields.take(key) {
            Some(value) => self.name_list(value, &fields.path_of(key)),
            None => Vec::new(),
        }
    }

    /// A list of name lists (layout groups).
    pub fn groups<N: FromStr<Err = NameError>>(
        &mut self,
        fields: &mut Fields,
        key: &str,
    ) -> Vec<Vec<N>> {
        let Some(value) = fields.take(key) else {
            return Vec::new();
        };
        let path = fields.path_of(key);
        match value {
            Value::Array(groups) => groups
                .into_iter()
                .enumerate()
                .map(|(index, group)| self.name_list(group, &format!("{path}[{index}]")))
                .collect(),
            other => {
                self.wrong_type(&path, "a list of lists of names", &other);
                Vec::new()
            }
        }
    }

    pub fn count(&mut self, fields: &mut Fields, key: &str) -> Option<Count> {
        let value = fields.take(key)?;
        let path = fields.path_of(key);
        match value {
            Value::Number(number) => match number.as_i64() {
                Some(value) => Some(Count::new(value)),
                None => {
                    self.fail(path, DecodeProblem::BadInteger(number.to_string()));
                    None
                }
            },
            Value::String(text) => match text.parse::<i64>() {
                Ok(value) => Some(Count {
                    value,
                    quoted: true,
                }),
                Err(_) => {
                    self.fail(path, DecodeProblem::BadInteger(text));
                    None
                }
            },
            Value::Null => None,
            other => {
                self.wrong_type(&path, "an integer", &other);
                None
            }
        }
    }

    /// A lease as written; whether it parses is for validation to say.
    pub fn lease(&mut self, fields: &mut Fields, key: &str) -> Option<Lease> {
        let value = fields.take(key)?;
        match value {
            Value::Number(number) => match number.as_i64() {
                Some(ms) => Some(Lease::Millis(ms)),
                None => Some(Lease::Text(number.to_string())),
            },
            Value::String(text) => Some(Lease::Text(text)),
            Value::Null => None,
            other => {
                self.wrong_type(&fields.path_of(key), "milliseconds or a duration", &other);
                None
            }
        }
    }

    /// A free-form object (`config`, `fields`, `provisioner`…).
    pub fn free_object(&mut self, fields: &mut Fields, key: &str) -> IndexMap<String, Value> {
        match fields.take(key) {
            Some(Value::Object(map)) => map.into_iter().collect(),
            Some(Value::Null) | None => IndexMap::new(),
            Some(other) => {
                self.wrong_type(&fields.path_of(key), "an object", &other);
                IndexMap::new()
            }
        }
    }

    /// `label`, `description`, `icon`, `version`.
    pub fn meta(&mut self, fields: &mut Fields) -> EntityMeta {
        EntityMeta {
            label: self.opt_string(fields, "label"),
            description: self.opt_string(fields, "description"),
            icon: self.opt_string(fields, "icon"),
            version: self.count(fields, "version"),
        }
    }

    pub fn links(&mut self, fields: &mut Fields, key: &str) -> Vec<Link> {
        let Some(value) = fields.take(key) else {
            return Vec::new();
        };
        let path = fields.path_of(key);
        let Value::Array(items) = value else {
            self.wrong_type(&path, "a list of links", &value);
            return Vec::new();
        };
        items
            .into_iter()
            .enumerate()
            .filter_map(|(index, item)| {
                let mut link = self.object(item, &format!("{path}[{index}]"))?;
                let label = self.req_string(&mut link, "label");
                let url = self.req_string(&mut link, "url");
                Some(Link {
                    label: label?,
                    url: url?,
                    extra: link.extra(),
                })
            })
            .collect()
    }

    pub fn template_ref(&mut self, value: Value, path: &str) -> Option<TemplateRef> {
        let mut fields = self.object(value, path)?;
        let name = match fields.take("name") {
            Some(name) => self.name(name, &fields.path_of("name")),
            None => {
                self.fail(fields.path_of("name"), DecodeProblem::Missing);
                None
            }
        };
        Some(TemplateRef {
            name: name?,
            extra: fields.extra(),
        })
    }
}

/// The not-yet-decoded keys of one JSON object, and its path.
#[derive(Debug)]
pub struct Fields {
    map: Map<String, Value>,
    pub path: String,
}

impl Fields {
    /// Removes a key, keeping the remaining keys in their order.
    pub fn take(&mut self, key: &str) -> Option<Value> {
        self.map.shift_remove(key)
    }

    pub fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    pub fn path_of(&self, key: &str) -> String {
        format!("{}.{key}", self.path)
    }

    /// Whatever was not decoded: the unknown keys.
    pub fn extra(self) -> Extra {
        self.map.into_iter().collect()
    }

    /// Every remaining key and value, for maps keyed by name.
    pub fn drain(&mut self) -> Vec<(String, Value)> {
        std::mem::take(&mut self.map).into_iter().collect()
    }
}

pub(super) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
