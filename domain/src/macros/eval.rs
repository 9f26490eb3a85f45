//! Evaluating parsed macros against a [`MacroContext`].

use std::collections::BTreeMap;

use super::parse::{self, Expr, Piece, Reference};
use super::shell::shell_quote;
use super::{MacroContext, MacroNode, MacroProblem, DEFAULT_ADDRESS_TYPE};

/// How each macro's value is written into the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quoting {
    None,
    Shell,
}

/// A piece of text after parsing.
enum Parsed<'t> {
    Text(&'t str),
    Macro(Expr<'t>),
}

/// A macro's value before it is written out.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Value {
    /// A service on no node (or, for `instance.self`, not on this node).
    Nothing,
    One(String),
    Many(Vec<String>),
}

/// Expands strings against one context, remembering which nodes carry each service
/// so expanding a whole config scans the node list once per service, not per macro.
pub(crate) struct Evaluator<'a> {
    context: &'a MacroContext,
    carrying: BTreeMap<String, Vec<&'a MacroNode>>,
}

impl<'a> Evaluator<'a> {
    pub fn new(context: &'a MacroContext) -> Self {
        Self {
            context,
            carrying: BTreeMap::new(),
        }
    }

    pub fn expand(&mut self, text: &str, quoting: Quoting) -> Result<String, MacroProblem> {
        // Parse every macro before evaluating any, so a malformed macro is reported
        // the same way whatever the cluster looks like.
        let pieces = parse::pieces(text)
            .into_iter()
            .map(|piece| match piece {
                Piece::Macro(raw) => parse::parse(raw).map(Parsed::Macro),
                Piece::Text(literal) => Ok(Parsed::Text(literal)),
                Piece::Percent => Ok(Parsed::Text("%")),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut out = String::with_capacity(text.len());
        let mut macros = 0usize;
        let mut produced = 0usize;
        for piece in pieces {
            match piece {
                Parsed::Text(literal) => out.push_str(literal),
                Parsed::Macro(expr) => {
                    macros += 1;
                    let rendered = match self.evaluate(&expr)? {
                        Value::Nothing => None,
                        Value::One(value) => Some(value),
                        Value::Many(values) => Some(values.join(",")),
                    };
                    if rendered.is_some() {
                        produced += 1;
                    }
                    let rendered = rendered.as_deref().unwrap_or("");
                    match quoting {
                        Quoting::None => out.push_str(rendered),
                        Quoting::Shell => out.push_str(&shell_quote(rendered)),
                    }
                }
            }
        }
        // Coopr leaves a string whose macros all yielded nothing as it was.
        if quoting == Quoting::None && macros > 0 && produced == 0 {
            return Ok(text.to_owned());
        }
        Ok(out)
    }

    fn evaluate(&mut self, expr: &Expr<'_>) -> Result<Value, MacroProblem> {
        let mut value = self.base_value(expr)?;
        if let Some(index) = expr.index {
            value = match value {
                Value::Many(mut values) => {
                    if index >= values.len() {
                        return Err(MacroProblem::IndexOutOfRange {
                            name: expr.name.to_owned(),
                            index,
                            len: values.len(),
                        });
                    }
                    Value::One(values.swap_remove(index))
                }
                other => other,
            };
        }
        if let Some(format) = expr.map {
            value = match value {
                Value::Nothing => Value::Nothing,
                Value::One(one) => Value::One(apply_format(format, &one)),
                Value::Many(many) => {
                    Value::Many(many.iter().map(|one| apply_format(format, one)).collect())
                }
            };
        }
        if let Some(separator) = expr.join {
            value = match value {
                Value::Many(many) => Value::One(many.join(separator)),
                other => other,
            };
        }
        Ok(value)
    }

    /// Nodes carrying `service`, by node number.
    fn carrying(&mut self, service: &str) -> &[&'a MacroNode] {
        let context = self.context;
        self.carrying.entry(service.to_owned()).or_insert_with(|| {
            let mut nodes: Vec<&MacroNode> = context
                .nodes
                .iter()
                .filter(|node| node.services.contains(service))
                .collect();
            nodes.sort_by_key(|node| node.number);
            nodes
        })
    }

    fn base_value(&mut self, expr: &Expr<'_>) -> Result<Value, MacroProblem> {
        let name = expr.name;
        let context = self.context;
        Ok(match expr.reference {
            Reference::Owner => Value::One(context.owner.clone()),
            Reference::SelfHost => Value::One(this_node(context, name)?.host.clone()),
            Reference::SelfIp { kind } => {
                Value::One(address(this_node(context, name)?, kind, name)?)
            }
            Reference::ServiceHosts { service } => list(
                self.carrying(service)
                    .iter()
                    .map(|node| Ok(node.host.clone())),
            )?,
            Reference::ServiceIps { kind, service } => list(
                self.carrying(service)
                    .iter()
                    .map(|node| address(node, kind, name)),
            )?,
            Reference::ServiceCount { service } => {
                Value::One(self.carrying(service).len().to_string())
            }
            Reference::SelfInstance { service } => {
                let this = this_node(context, name)?;
                self.carrying(service)
                    .iter()
                    .position(|node| node.number == this.number)
                    .map_or(Value::Nothing, |rank| Value::One((rank + 1).to_string()))
            }
            Reference::SelfServiceHost { service } => {
                Value::One(this_carrying(context, service, name)?.host.clone())
            }
            Reference::SelfServiceIp { kind, service } => {
                Value::One(address(this_carrying(context, service, name)?, kind, name)?)
            }
            // An optional parameter left unset yields nothing, as a service on no node.
            Reference::Param { name } => context
                .parameters
                .get(name)
                .map_or(Value::Nothing, |value| {
                    Value::One(crate::catalog::parameters::value_text(value))
                }),
        })
    }
}

/// `$` is the value, `$$` a literal `$`.
fn apply_format(format: &str, value: &str) -> String {
    let mut out = String::with_capacity(format.len() + value.len());
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '$' {
            out.push(c);
        } else if chars.peek() == Some(&'$') {
            chars.next();
            out.push('$');
        } else {
            out.push_str(value);
        }
    }
    out
}

fn list(values: impl Iterator<Item = Result<String, MacroProblem>>) -> Result<Value, MacroProblem> {
    let values = values.collect::<Result<Vec<_>, _>>()?;
    Ok(if values.is_empty() {
        Value::Nothing
    } else {
        Value::Many(values)
    })
}

fn this_node<'a>(context: &'a MacroContext, name: &str) -> Result<&'a MacroNode, MacroProblem> {
    context
        .this_node
        .and_then(|number| context.nodes.iter().find(|node| node.number == number))
        .ok_or_else(|| MacroProblem::NoThisNode {
            name: name.to_owned(),
        })
}

fn this_carrying<'a>(
    context: &'a MacroContext,
    service: &str,
    name: &str,
) -> Result<&'a MacroNode, MacroProblem> {
    let this = this_node(context, name)?;
    if this.services.contains(service) {
        Ok(this)
    } else {
        Err(MacroProblem::NotOnThisNode {
            name: name.to_owned(),
            service: service.to_owned(),
        })
    }
}

fn address(node: &MacroNode, kind: Option<&str>, name: &str) -> Result<String, MacroProblem> {
    let kind = kind.unwrap_or(DEFAULT_ADDRESS_TYPE);
    node.ips
        .get(kind)
        .cloned()
        .ok_or_else(|| MacroProblem::MissingAddress {
            name: name.to_owned(),
            node: node.number,
            kind: kind.to_owned(),
        })
}
