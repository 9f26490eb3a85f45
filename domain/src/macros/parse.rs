//! The macro grammar (docs/coopr-format.md §6): splitting a string into literal text and
//! `%…%` expressions, and parsing one expression.
//!
//! ```text
//! expr  := "join(" inner "," literal ")" | inner
//! inner := "map(" basic "," literal ")" | basic
//! basic := name [ "[" digits "]" ]          name of [A-Za-z0-9_.-]
//! literal := '…' | "…"                      no escapes, no spaces around commas
//! ```

use super::MacroProblem;

/// A piece of a string: literal text or a macro expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    Text(&'a str),
    /// `%%`: a literal `%`.
    Percent,
    /// The text between a pair of `%`, without them.
    Macro(&'a str),
}

/// Splits `text` into pieces. A `%` with no partner later in the string is text.
pub(crate) fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('%') {
        if open > 0 {
            out.push(Piece::Text(&rest[..open]));
        }
        let after_open = &rest[open + 1..];
        if let Some(stripped) = after_open.strip_prefix('%') {
            out.push(Piece::Percent);
            rest = stripped;
            continue;
        }
        match after_open.find('%') {
            Some(close) => {
                out.push(Piece::Macro(&after_open[..close]));
                rest = &after_open[close + 1..];
            }
            None => {
                out.push(Piece::Text(&rest[open..]));
                rest = "";
            }
        }
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest));
    }
    out
}

/// A parsed expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Expr<'a> {
    pub reference: Reference<'a>,
    /// The name as written, for error messages.
    pub name: &'a str,
    pub index: Option<usize>,
    pub map: Option<&'a str>,
    pub join: Option<&'a str>,
}

/// What a macro name refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reference<'a> {
    /// `cluster.owner`
    Owner,
    /// `host.self`
    SelfHost,
    /// `ip.self`, `ip.<type>.self`
    SelfIp { kind: Option<&'a str> },
    /// `host.service.S`
    ServiceHosts { service: &'a str },
    /// `ip.service.S`, `ip.<type>.service.S`
    ServiceIps {
        kind: Option<&'a str>,
        service: &'a str,
    },
    /// `num.service.S`
    ServiceCount { service: &'a str },
    /// `instance.self.service.S`
    SelfInstance { service: &'a str },
    /// `host.self.service.S`
    SelfServiceHost { service: &'a str },
    /// `ip.self.service.S`, `ip.<type>.self.service.S`
    SelfServiceIp {
        kind: Option<&'a str>,
        service: &'a str,
    },
    /// `param.NAME`: a template parameter's value (Corral's extension).
    Param { name: &'a str },
}

impl Reference<'_> {
    /// Whether the macro names a list of nodes (and so may be indexed).
    pub fn is_list(self) -> bool {
        matches!(
            self,
            Reference::ServiceHosts { .. } | Reference::ServiceIps { .. }
        )
    }
}

/// Parses the text between a pair of `%`.
pub(crate) fn parse(expr: &str) -> Result<Expr<'_>, MacroProblem> {
    let mut cursor = Cursor { rest: expr };
    let parsed = cursor.expr()?;
    if !cursor.rest.is_empty() {
        return Err(syntax(expr, "unexpected text after the expression"));
    }
    Ok(parsed)
}

fn syntax(expr: &str, reason: &'static str) -> MacroProblem {
    MacroProblem::Syntax {
        expr: expr.to_owned(),
        reason,
    }
}

struct Cursor<'a> {
    rest: &'a str,
}

impl<'a> Cursor<'a> {
    fn eat(&mut self, token: &str) -> bool {
        match self.rest.strip_prefix(token) {
            Some(rest) => {
                self.rest = rest;
                true
            }
            None => false,
        }
    }

    fn expect(
        &mut self,
        whole: &str,
        token: &str,
        reason: &'static str,
    ) -> Result<(), MacroProblem> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(syntax(whole, reason))
        }
    }

    fn expr(&mut self) -> Result<Expr<'a>, MacroProblem> {
        let whole = self.rest;
        if self.eat("join(") {
            let mut inner = self.inner(whole)?;
            self.expect(whole, ",", "join needs a separator: join(list,'sep')")?;
            inner.join = Some(self.literal(whole)?);
            self.expect(whole, ")", "join(...) is not closed")?;
            Ok(inner)
        } else {
            self.inner(whole)
        }
    }

    fn inner(&mut self, whole: &'a str) -> Result<Expr<'a>, MacroProblem> {
        if self.eat("map(") {
            let mut basic = self.basic(whole)?;
            self.expect(whole, ",", "map needs a format: map(list,'fmt')")?;
            basic.map = Some(self.literal(whole)?);
            self.expect(whole, ")", "map(...) is not closed")?;
            Ok(basic)
        } else {
            self.basic(whole)
        }
    }

    fn basic(&mut self, whole: &'a str) -> Result<Expr<'a>, MacroProblem> {
        let end = self
            .rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
            .unwrap_or(self.rest.len());
        let name = &self.rest[..end];
        if name.is_empty() {
            return Err(syntax(whole, "expected a macro name"));
        }
        self.rest = &self.rest[end..];
        let index = if self.eat("[") {
            let digits_end = self
                .rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(self.rest.len());
            let digits = &self.rest[..digits_end];
            let index = digits
                .parse::<usize>()
                .map_err(|_| syntax(whole, "an index is [digits]"))?;
            self.rest = &self.rest[digits_end..];
            self.expect(whole, "]", "an index is [digits]")?;
            Some(index)
        } else {
            None
        };
        let reference = reference(name).ok_or_else(|| MacroProblem::Unknown {
            name: name.to_owned(),
        })?;
        if index.is_some() && !reference.is_list() {
            return Err(MacroProblem::IndexOnScalar {
                name: name.to_owned(),
            });
        }
        Ok(Expr {
            reference,
            name,
            index,
            map: None,
            join: None,
        })
    }

    fn literal(&mut self, whole: &'a str) -> Result<&'a str, MacroProblem> {
        let quote = match self.rest.chars().next() {
            Some(quote @ ('\'' | '"')) => quote,
            _ => return Err(syntax(whole, "expected a quoted literal")),
        };
        let body = &self.rest[1..];
        let close = body
            .find(quote)
            .ok_or_else(|| syntax(whole, "a quoted literal is not closed"))?;
        self.rest = &body[close + 1..];
        Ok(&body[..close])
    }
}

/// Maps a macro name to what it refers to; `None` for an unknown macro.
fn reference(name: &str) -> Option<Reference<'_>> {
    let (head, tail) = name.split_once('.')?;
    match head {
        "cluster" => (tail == "owner").then_some(Reference::Owner),
        "host" => match tail {
            "self" => Some(Reference::SelfHost),
            _ => {
                if let Some(service) = service_after(tail, "service.") {
                    Some(Reference::ServiceHosts { service })
                } else {
                    service_after(tail, "self.service.")
                        .map(|service| Reference::SelfServiceHost { service })
                }
            }
        },
        "num" => service_after(tail, "service.").map(|service| Reference::ServiceCount { service }),
        "instance" => {
            service_after(tail, "self.service.").map(|service| Reference::SelfInstance { service })
        }
        "ip" => ip_reference(tail),
        "param" => {
            (!tail.is_empty() && !tail.contains('.')).then_some(Reference::Param { name: tail })
        }
        _ => None,
    }
}

/// `[<type>.]self`, `[<type>.]service.S` or `[<type>.]self.service.S`.
fn ip_reference(tail: &str) -> Option<Reference<'_>> {
    if let Some(found) = ip_target(tail, None) {
        return Some(found);
    }
    let (kind, rest) = tail.split_once('.')?;
    if kind.is_empty() || kind == "self" || kind == "service" {
        return None;
    }
    ip_target(rest, Some(kind))
}

fn ip_target<'a>(rest: &'a str, kind: Option<&'a str>) -> Option<Reference<'a>> {
    if rest == "self" {
        Some(Reference::SelfIp { kind })
    } else if let Some(service) = service_after(rest, "service.") {
        Some(Reference::ServiceIps { kind, service })
    } else {
        service_after(rest, "self.service.")
            .map(|service| Reference::SelfServiceIp { kind, service })
    }
}

/// The service name after `prefix`, if present and non-empty.
fn service_after<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    text.strip_prefix(prefix)
        .filter(|service| !service.is_empty() && !service.starts_with('.'))
}
