//! Coopr's macros (`%host.service.S%`, `%join(map(…))%`…) in configuration and
//! action fields, expanded as seen from one node of a cluster.
//!
//! The grammar and values are Coopr's (docs/coopr-format.md §6) with Corral's rules:
//! lists are in node-number order, `[n]` is 0-based, `%%` is a literal `%`, an
//! unknown macro is an error naming the macro and the field, both
//! `%host.self.service.S%` and `%ip.self.service.S%` work, and syntax can be checked
//! once, at import, with [`check_syntax`]. Values put into shell commands are
//! single-quoted ([`expand_for_shell`]) so a host name can never inject a command.

mod eval;
mod parse;
mod shell;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::names::ServiceName;

pub use shell::shell_quote;

/// Address type used when a macro names none.
pub const DEFAULT_ADDRESS_TYPE: &str = "bind_v4";

/// One node as macros see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MacroNode {
    pub number: u32,
    pub host: String,
    /// Addresses by type (`bind_v4`, `access_v4`…).
    pub ips: BTreeMap<String, String>,
    pub services: BTreeSet<ServiceName>,
}

/// The cluster as seen from one node (or from none, for cluster-level text such as
/// link URLs, where `%host.self%` and friends are errors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MacroContext {
    pub owner: String,
    /// In any order; macros list nodes by number. Shared: every node of a cluster sees
    /// the same list, and a step on each of N nodes would otherwise copy it N times.
    pub nodes: Arc<[MacroNode]>,
    pub this_node: Option<u32>,
    /// The cluster's template parameter values by name (`%param.NAME%`), as kept in
    /// its config under [`crate::catalog::parameters::CONFIG_KEY`].
    pub parameters: Arc<serde_json::Map<String, Value>>,
}

/// A macro that cannot be expanded, and in which field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{problem}", in_field(.field))]
pub struct MacroError {
    /// Path of the field holding the text (`config.kv.peers`), when known.
    pub field: Option<String>,
    pub problem: MacroProblem,
}

impl MacroError {
    /// Names the field the text came from (used by callers of [`check_syntax`]).
    pub fn in_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }
}

fn in_field(field: &Option<String>) -> String {
    match field {
        Some(field) => format!("field {field}: "),
        None => String::new(),
    }
}

/// What is wrong with one macro.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MacroProblem {
    #[error("cannot parse %{expr}%: {reason} (write %% for a literal %)")]
    Syntax { expr: String, reason: &'static str },
    #[error("unknown macro %{name}%")]
    Unknown { name: String },
    #[error("macro %{name}% names a single value and cannot be indexed")]
    IndexOnScalar { name: String },
    #[error("macro %{name}[{index}]%: index out of range, {len} nodes carry the service")]
    IndexOutOfRange {
        name: String,
        index: usize,
        len: usize,
    },
    #[error("macro %{name}%: node {node} has no {kind} address")]
    MissingAddress {
        name: String,
        node: u32,
        kind: String,
    },
    #[error("macro %{name}%: this node does not carry service {service}")]
    NotOnThisNode { name: String, service: String },
    #[error("macro %{name}% needs a current node, and there is none here")]
    NoThisNode { name: String },
}

/// Checks every `%…%` in `text` parses and names a known macro. Values are not
/// looked at, so this is what catalog import runs on every macro-bearing string.
pub fn check_syntax(text: &str) -> Result<(), MacroError> {
    for piece in parse::pieces(text) {
        if let parse::Piece::Macro(expr) = piece {
            parse::parse(expr).map_err(|problem| MacroError {
                field: None,
                problem,
            })?;
        }
    }
    Ok(())
}

/// Expands the macros of `text` as seen from `context`; `field` names where the
/// text came from, for errors.
///
/// As in Coopr, a macro about a service on no node yields nothing, and if no macro
/// of the string yields anything the text is returned unchanged.
pub fn expand(text: &str, context: &MacroContext, field: &str) -> Result<String, MacroError> {
    eval::Evaluator::new(context)
        .expand(text, eval::Quoting::None)
        .map_err(|problem| MacroError {
            field: Some(field.to_owned()),
            problem,
        })
}

/// Like [`expand`], for text that becomes a POSIX shell command: each macro's value
/// is one single-quoted word (empty `''` if it yields nothing), and the text is
/// never returned with unexpanded macros. Macros must therefore stand outside any
/// quotes of their own in the command.
pub fn expand_for_shell(
    text: &str,
    context: &MacroContext,
    field: &str,
) -> Result<String, MacroError> {
    eval::Evaluator::new(context)
        .expand(text, eval::Quoting::Shell)
        .map_err(|problem| MacroError {
            field: Some(field.to_owned()),
            problem,
        })
}

/// Expands every string value (not key) of a JSON value with [`expand`]. Field
/// paths in errors extend `field` with `.key` and `[index]`.
pub fn expand_json(
    value: &Value,
    context: &MacroContext,
    field: &str,
) -> Result<Value, MacroError> {
    map_strings(value, field, &mut |text, path| expand(text, context, path))
}

/// Expands every string value of a JSON value with [`expand_for_shell`] (for action
/// fields that become commands).
pub fn expand_json_for_shell(
    value: &Value,
    context: &MacroContext,
    field: &str,
) -> Result<Value, MacroError> {
    let mut evaluator = eval::Evaluator::new(context);
    map_strings(value, field, &mut |text, path| {
        evaluator
            .expand(text, eval::Quoting::Shell)
            .map_err(|problem| MacroError {
                field: Some(path.to_owned()),
                problem,
            })
    })
}

/// Checks the syntax of every string value of a JSON value, naming the field of the
/// first error.
pub fn check_json_syntax(value: &Value, field: &str) -> Result<(), MacroError> {
    map_strings(value, field, &mut |text, path| {
        check_syntax(text)
            .map(|()| String::new())
            .map_err(|error| error.in_field(path))
    })
    .map(|_| ())
}

fn map_strings(
    value: &Value,
    path: &str,
    on_string: &mut dyn FnMut(&str, &str) -> Result<String, MacroError>,
) -> Result<Value, MacroError> {
    Ok(match value {
        Value::String(text) => Value::String(on_string(text, path)?),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| map_strings(item, &format!("{path}[{i}]"), on_string))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(entries) => Value::Object(
            entries
                .iter()
                .map(|(key, item)| {
                    let child = if path.is_empty() {
                        key.clone()
                    } else {
                        format!("{path}.{key}")
                    };
                    Ok((key.clone(), map_strings(item, &child, on_string)?))
                })
                .collect::<Result<_, MacroError>>()?,
        ),
        other => other.clone(),
    })
}
