//! Typed template parameters: what a cluster template lets its user choose (a
//! version, a shard count, a feature switch), each with a type, bounds and a default.
//!
//! A template declares them under `parameters`, keyed by name:
//! `{"shards": {"type": "integer", "minimum": 1, "maximum": 5, "default": 1}}`.
//! [`decode`] reads and checks the declarations when a template is imported (a bad
//! one is refused naming the parameter); [`validate`] checks what a user gave at
//! create time against them and returns the values the cluster keeps, or every bad
//! field at once. Values given as text (a form field, `--param NAME=VALUE`) are read
//! as the parameter's type, so the CLI, the API, environment files and the portal
//! all end up with the same typed values. [`revalue`] is `reconfigure`'s check:
//! only parameters marked `changeable` may take a new value.
//!
//! The values live in the cluster config under [`CONFIG_KEY`], where steps see them
//! (`CORRAL_CONFIG_JSON`) and the `%param.NAME%` macro reads them.

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::{Map, Number, Value};

/// The cluster config key holding the parameter values, by parameter name.
pub const CONFIG_KEY: &str = "parameters";

/// Longest parameter name, in bytes.
pub const MAX_NAME_BYTES: usize = 64;

/// Longest pattern a parameter may declare, in bytes, and how much memory its
/// compiled form may take: patterns come from catalog uploads.
const MAX_PATTERN_BYTES: usize = 512;
const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// A template's parameters by name, in declaration order (the form shows them so).
pub type Parameters = IndexMap<String, Parameter>;

/// What kind of value a parameter takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ParameterType {
    String,
    Integer,
    Number,
    Boolean,
    /// One of the parameter's `choices`.
    Choice,
}

impl ParameterType {
    pub const ALL: [ParameterType; 5] = [
        ParameterType::String,
        ParameterType::Integer,
        ParameterType::Number,
        ParameterType::Boolean,
        ParameterType::Choice,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ParameterType::String => "string",
            ParameterType::Integer => "integer",
            ParameterType::Number => "number",
            ParameterType::Boolean => "boolean",
            ParameterType::Choice => "choice",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == text)
    }

    fn is_numeric(self) -> bool {
        matches!(self, ParameterType::Integer | ParameterType::Number)
    }
}

/// One declared parameter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Parameter {
    #[serde(rename = "type")]
    pub kind: ParameterType,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
    /// Bounds of an integer or number parameter, inclusive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum: Option<Number>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maximum: Option<Number>,
    /// A regular expression a string parameter's whole value must match.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// The values a choice parameter may take.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    /// Whether `reconfigure` may give it a new value after the cluster is made.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub changeable: bool,
}

impl Parameter {
    pub fn new(kind: ParameterType) -> Self {
        Self {
            kind,
            label: None,
            description: None,
            default: None,
            required: false,
            minimum: None,
            maximum: None,
            pattern: None,
            choices: Vec::new(),
            changeable: false,
        }
    }

    /// What the form shows as the field's name: the label, else the name.
    pub fn label_or<'a>(&'a self, name: &'a str) -> &'a str {
        self.label.as_deref().unwrap_or(name)
    }

    /// Reads `given` as this parameter's type and checks it; `Ok(None)` when nothing
    /// was given (absent, null or empty text).
    pub fn check_value(&self, given: &Value) -> Result<Option<Value>, String> {
        let Some(value) = self.typed(given)? else {
            return Ok(None);
        };
        if let Some(number) = value.as_f64() {
            if let Some(minimum) = &self.minimum {
                if minimum.as_f64().is_some_and(|minimum| number < minimum) {
                    return Err(format!("{value} is below the minimum {minimum}"));
                }
            }
            if let Some(maximum) = &self.maximum {
                if maximum.as_f64().is_some_and(|maximum| number > maximum) {
                    return Err(format!("{value} is above the maximum {maximum}"));
                }
            }
        }
        if let (Some(pattern), Value::String(text)) = (&self.pattern, &value) {
            if !compile(pattern)?.is_match(text) {
                return Err(format!("{text:?} does not match the pattern {pattern}"));
            }
        }
        if self.kind == ParameterType::Choice {
            let text = value.as_str().unwrap_or_default();
            if !self.choices.iter().any(|choice| choice == text) {
                return Err(format!(
                    "{text:?} is not one of the choices ({})",
                    self.choices.join(", ")
                ));
            }
        }
        Ok(Some(value))
    }

    /// `given` as a value of the parameter's type (text is read as that type).
    fn typed(&self, given: &Value) -> Result<Option<Value>, String> {
        let given = match given {
            Value::Null => return Ok(None),
            Value::String(text) if text.trim().is_empty() => return Ok(None),
            other => other,
        };
        let text = match given {
            Value::String(text) => Some(text.trim()),
            _ => None,
        };
        match self.kind {
            ParameterType::String | ParameterType::Choice => match given {
                Value::String(text) => Ok(Some(Value::String(text.clone()))),
                Value::Number(number) => Ok(Some(Value::String(number.to_string()))),
                Value::Bool(flag) => Ok(Some(Value::String(flag.to_string()))),
                _ => Err("expected text".to_owned()),
            },
            ParameterType::Integer => match (given, text) {
                (Value::Number(number), _) if number.is_i64() || number.is_u64() => {
                    number.as_i64().map(Value::from).map(Some).ok_or_else(|| {
                        format!("{number} is too large for a whole number parameter")
                    })
                }
                (_, Some(text)) => text
                    .parse::<i64>()
                    .map(|number| Some(Value::from(number)))
                    .map_err(|_| format!("{text:?} is not a whole number")),
                (other, None) => Err(format!("{other} is not a whole number")),
            },
            ParameterType::Number => match (given, text) {
                (Value::Number(number), _) => Ok(Some(Value::Number(number.clone()))),
                (_, Some(text)) => parse_number(text)
                    .map(|number| Some(Value::Number(number)))
                    .ok_or_else(|| format!("{text:?} is not a number")),
                (other, None) => Err(format!("{other} is not a number")),
            },
            ParameterType::Boolean => match (given, text) {
                (Value::Bool(flag), _) => Ok(Some(Value::Bool(*flag))),
                (_, Some(text)) => match text.to_ascii_lowercase().as_str() {
                    "true" | "yes" | "on" | "1" => Ok(Some(Value::Bool(true))),
                    "false" | "no" | "off" | "0" => Ok(Some(Value::Bool(false))),
                    _ => Err(format!("{text:?} is not true or false")),
                },
                (other, None) => Err(format!("{other} is not true or false")),
            },
        }
    }
}

/// A whole number stays one (`3`, not `3.0`), so a value read from text equals the
/// same value given as JSON.
fn parse_number(text: &str) -> Option<Number> {
    if let Ok(whole) = text.parse::<i64>() {
        return Some(Number::from(whole));
    }
    text.parse::<f64>().ok().and_then(Number::from_f64)
}

/// A pattern compiled to match the whole value, as an HTML `pattern` attribute does.
fn compile(pattern: &str) -> Result<regex::Regex, String> {
    if pattern.len() > MAX_PATTERN_BYTES {
        return Err(format!(
            "the pattern is {} bytes long; at most {MAX_PATTERN_BYTES} are allowed",
            pattern.len()
        ));
    }
    regex::RegexBuilder::new(&format!("^(?:{pattern})$"))
        .size_limit(PATTERN_SIZE_LIMIT)
        .build()
        .map_err(|error| format!("the pattern {pattern:?} does not compile: {error}"))
}

/// A problem with one parameter: its name and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("parameter {parameter}: {problem}")]
pub struct FieldError {
    pub parameter: String,
    pub problem: String,
}

impl FieldError {
    fn new(parameter: &str, problem: impl Into<String>) -> Self {
        Self {
            parameter: parameter.to_owned(),
            problem: problem.into(),
        }
    }
}

/// Reads a template's `parameters` object, checking every declaration: a known
/// type, keys that belong to it, bounds in order, a pattern that compiles, choices
/// for a choice, and a default that passes its own checks. Every problem names its
/// parameter.
pub fn decode(value: Value) -> Result<Parameters, Vec<FieldError>> {
    let Value::Object(entries) = value else {
        return Err(vec![FieldError::new(
            "",
            "parameters must be an object of parameters by name",
        )]);
    };
    let mut parameters = Parameters::new();
    let mut errors = Vec::new();
    for (name, declaration) in entries {
        if let Err(problem) = check_name(&name) {
            errors.push(FieldError::new(&name, problem));
            continue;
        }
        match decode_one(declaration) {
            Ok(parameter) => {
                parameters.insert(name, parameter);
            }
            Err(problems) => errors.extend(
                problems
                    .into_iter()
                    .map(|problem| FieldError::new(&name, problem)),
            ),
        }
    }
    if errors.is_empty() {
        Ok(parameters)
    } else {
        Err(errors)
    }
}

/// Names appear in macros (`%param.NAME%`) and form fields, so they keep to the
/// characters both take.
fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_NAME_BYTES {
        return Err(format!(
            "a parameter name has 1 to {MAX_NAME_BYTES} characters"
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
    {
        return Err("a parameter name may hold only letters, digits, '_' and '-'".to_owned());
    }
    Ok(())
}

fn decode_one(declaration: Value) -> Result<Parameter, Vec<String>> {
    let Value::Object(mut fields) = declaration else {
        return Err(vec![
            "a parameter is an object such as {\"type\": \"string\"}".to_owned(),
        ]);
    };
    let mut problems = Vec::new();
    let kind = match fields.shift_remove("type") {
        None => {
            problems.push("type is missing".to_owned());
            None
        }
        Some(Value::String(text)) => {
            let kind = ParameterType::parse(&text);
            if kind.is_none() {
                problems.push(format!("unknown type {text:?}; expected {}", type_list()));
            }
            kind
        }
        Some(other) => {
            problems.push(format!("type must be text, not {other}"));
            None
        }
    };
    let mut parameter = Parameter::new(kind.unwrap_or(ParameterType::String));
    parameter.label = text_field(&mut fields, "label", &mut problems);
    parameter.description = text_field(&mut fields, "description", &mut problems);
    parameter.pattern = text_field(&mut fields, "pattern", &mut problems);
    parameter.required = flag_field(&mut fields, "required", &mut problems);
    parameter.changeable = flag_field(&mut fields, "changeable", &mut problems);
    parameter.minimum = number_field(&mut fields, "minimum", &mut problems);
    parameter.maximum = number_field(&mut fields, "maximum", &mut problems);
    parameter.default = fields.shift_remove("default").filter(|v| !v.is_null());
    match fields.shift_remove("choices") {
        None => {}
        Some(Value::Array(items)) => {
            for item in items {
                match item {
                    Value::String(text) => parameter.choices.push(text),
                    Value::Number(number) => parameter.choices.push(number.to_string()),
                    other => problems.push(format!("choices must be text, not {other}")),
                }
            }
        }
        Some(other) => problems.push(format!("choices must be a list, not {other}")),
    }
    for unknown in fields.keys() {
        problems.push(format!(
            "unknown key {unknown:?}; a parameter has type, label, description, default, \
             required, minimum, maximum, pattern, choices and changeable"
        ));
    }
    let Some(kind) = kind else {
        return Err(problems);
    };
    check_declaration(kind, &parameter, &mut problems);
    if problems.is_empty() {
        if let Some(default) = &parameter.default {
            match parameter.check_value(default) {
                Ok(typed) => parameter.default = typed,
                Err(problem) => problems.push(format!("the default is refused: {problem}")),
            }
        }
    }
    if problems.is_empty() {
        Ok(parameter)
    } else {
        Err(problems)
    }
}

/// Keys that only make sense for some types, bounds in order, a compiling pattern.
fn check_declaration(kind: ParameterType, parameter: &Parameter, problems: &mut Vec<String>) {
    let name = kind.as_str();
    if !kind.is_numeric() && (parameter.minimum.is_some() || parameter.maximum.is_some()) {
        problems.push(format!(
            "minimum and maximum apply to integer and number parameters, not {name}"
        ));
    }
    if kind == ParameterType::Integer {
        for (key, bound) in [
            ("minimum", &parameter.minimum),
            ("maximum", &parameter.maximum),
        ] {
            if bound.as_ref().is_some_and(|bound| !bound.is_i64()) {
                problems.push(format!(
                    "{key} of an integer parameter must be a whole number"
                ));
            }
        }
    }
    if let (Some(minimum), Some(maximum)) = (
        parameter.minimum.as_ref().and_then(Number::as_f64),
        parameter.maximum.as_ref().and_then(Number::as_f64),
    ) {
        if minimum > maximum {
            problems.push(format!("minimum {minimum} is above maximum {maximum}"));
        }
    }
    if let Some(pattern) = &parameter.pattern {
        if kind != ParameterType::String {
            problems.push(format!("pattern applies to string parameters, not {name}"));
        } else if let Err(problem) = compile(pattern) {
            problems.push(problem);
        }
    }
    if kind == ParameterType::Choice {
        if parameter.choices.is_empty() {
            problems.push("a choice parameter needs a non-empty list of choices".to_owned());
        }
    } else if !parameter.choices.is_empty() {
        problems.push(format!("choices apply to choice parameters, not {name}"));
    }
}

fn type_list() -> String {
    ParameterType::ALL
        .iter()
        .map(|kind| kind.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn text_field(
    fields: &mut Map<String, Value>,
    key: &str,
    problems: &mut Vec<String>,
) -> Option<String> {
    match fields.shift_remove(key)? {
        Value::String(text) => Some(text),
        Value::Null => None,
        other => {
            problems.push(format!("{key} must be text, not {other}"));
            None
        }
    }
}

fn flag_field(fields: &mut Map<String, Value>, key: &str, problems: &mut Vec<String>) -> bool {
    match fields.shift_remove(key) {
        None | Some(Value::Null) => false,
        Some(Value::Bool(flag)) => flag,
        Some(other) => {
            problems.push(format!("{key} must be true or false, not {other}"));
            false
        }
    }
}

fn number_field(
    fields: &mut Map<String, Value>,
    key: &str,
    problems: &mut Vec<String>,
) -> Option<Number> {
    match fields.shift_remove(key)? {
        Value::Number(number) => Some(number),
        Value::Null => None,
        other => {
            problems.push(format!("{key} must be a number, not {other}"));
            None
        }
    }
}

/// Checks what a user gave against the declared parameters. Returns every
/// parameter's value (the given one, else the default; an optional parameter with
/// neither is left out), or every bad field: a value of the wrong type, out of
/// bounds, not matching, not a choice; a required parameter with no value; a name
/// the template does not declare.
pub fn validate(
    parameters: &Parameters,
    given: &Map<String, Value>,
) -> Result<Map<String, Value>, Vec<FieldError>> {
    let mut errors: Vec<FieldError> = given
        .keys()
        .filter(|name| !parameters.contains_key(name.as_str()))
        .map(|name| FieldError::new(name, "the template has no such parameter"))
        .collect();
    let mut values = Map::new();
    for (name, parameter) in parameters {
        let checked = match given.get(name) {
            Some(value) => parameter.check_value(value),
            None => Ok(None),
        };
        match checked {
            Ok(Some(value)) => {
                values.insert(name.clone(), value);
            }
            Ok(None) => match &parameter.default {
                Some(default) => {
                    values.insert(name.clone(), default.clone());
                }
                None if parameter.required => {
                    errors.push(FieldError::new(name, "a value is required"));
                }
                None => {}
            },
            Err(problem) => errors.push(FieldError::new(name, problem)),
        }
    }
    if errors.is_empty() {
        Ok(values)
    } else {
        Err(errors)
    }
}

/// `reconfigure`'s check: the values after applying `changes` to `current`, where
/// only `changeable` parameters may take a value other than their current one. A
/// parameter not in `changes` keeps its value.
pub fn revalue(
    parameters: &Parameters,
    current: &Map<String, Value>,
    changes: &Map<String, Value>,
) -> Result<Map<String, Value>, Vec<FieldError>> {
    let mut merged = current.clone();
    for (name, value) in changes {
        merged.insert(name.clone(), value.clone());
    }
    let values = validate(parameters, &merged)?;
    let errors: Vec<FieldError> = changes
        .keys()
        .filter_map(|name| {
            let parameter = parameters.get(name)?;
            let changed = values.get(name) != current.get(name);
            (changed && !parameter.changeable).then(|| {
                FieldError::new(
                    name,
                    "cannot be changed after the cluster is made (it is not changeable)",
                )
            })
        })
        .collect();
    if errors.is_empty() {
        Ok(values)
    } else {
        Err(errors)
    }
}

/// The parameter values held in a cluster config (none if it holds none).
pub fn values_in_config(config: &Map<String, Value>) -> Map<String, Value> {
    match config.get(CONFIG_KEY) {
        Some(Value::Object(values)) => values.clone(),
        _ => Map::new(),
    }
}

/// A value as text, as macros and form fields show it.
pub fn value_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests;
