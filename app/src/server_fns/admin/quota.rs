//! Reading quota fields (blank = no limit) and putting a service's message next
//! to a form field (server side only).

use crate::error::{FieldProblem, UiError};

pub fn limit(field: &str, raw: &str) -> Result<Option<i64>, UiError> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(None);
    }
    match raw.parse::<i64>() {
        Ok(value) if value >= 0 => Ok(Some(value)),
        _ => Err(UiError::field(
            field,
            "enter a whole number (0 or more), or leave it blank for no limit",
        )),
    }
}

/// A field-less validation message, shown next to `field`.
pub fn on_field(error: UiError, field: &str) -> UiError {
    match error {
        UiError::Invalid { message, problems } if problems.is_empty() => UiError::Invalid {
            problems: vec![FieldProblem {
                field: field.to_owned(),
                message: message.clone(),
            }],
            message,
        },
        other => other,
    }
}
