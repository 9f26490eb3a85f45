//! A tenant's credentials for one of its providers: a flat JSON object of strings
//! (`{"access_key_id": "...", "secret_access_key": "..."}` for `ec2`), held so that it
//! cannot be printed by accident. Stored sealed (see [`crate::provider_credentials`]),
//! opened only by the provider that signs requests with it.

use std::collections::BTreeMap;

use secrecy::{ExposeSecret, SecretString};

/// Most fields one credentials object may hold.
pub const MAX_CREDENTIAL_FIELDS: usize = 32;
/// Longest field name.
pub const MAX_CREDENTIAL_NAME: usize = 64;
/// Longest credentials object, as JSON (a service account's key file fits).
pub const MAX_CREDENTIALS_BYTES: usize = 16 * 1024;

/// Why a credentials object was refused. The message never holds a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialsError {
    #[error("credentials must be a JSON object of strings, e.g. {{\"access_key_id\": \"...\"}}")]
    NotAnObject,
    #[error("credentials must hold at least one field")]
    Empty,
    #[error("credentials may hold at most {MAX_CREDENTIAL_FIELDS} fields")]
    TooManyFields,
    #[error("credentials may be at most {MAX_CREDENTIALS_BYTES} bytes of JSON")]
    TooLong,
    #[error(
        "credential field name {name:?} is not allowed: names are 1 to {MAX_CREDENTIAL_NAME} \
         letters, digits, `_` or `-`"
    )]
    BadName { name: String },
    #[error("credential field {name:?} must be a string (or a number or boolean)")]
    NotAString { name: String },
    #[error("credential field {name:?} is empty")]
    EmptyValue { name: String },
}

/// Field names and their secret values. `Debug` shows the names only.
#[derive(Clone)]
pub struct Credentials {
    fields: BTreeMap<String, SecretString>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("fields", &self.field_names())
            .finish_non_exhaustive()
    }
}

impl Credentials {
    /// Checks and takes a JSON object as an admin gave it.
    pub fn from_json_text(text: &str) -> Result<Self, CredentialsError> {
        if text.len() > MAX_CREDENTIALS_BYTES {
            return Err(CredentialsError::TooLong);
        }
        // The parse error is not shown: its message may quote the secret.
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|_| CredentialsError::NotAnObject)?;
        Self::from_json(value)
    }

    pub fn from_json(value: serde_json::Value) -> Result<Self, CredentialsError> {
        let serde_json::Value::Object(object) = value else {
            return Err(CredentialsError::NotAnObject);
        };
        if object.is_empty() {
            return Err(CredentialsError::Empty);
        }
        if object.len() > MAX_CREDENTIAL_FIELDS {
            return Err(CredentialsError::TooManyFields);
        }
        let mut fields = BTreeMap::new();
        for (name, value) in object {
            let name_ok = !name.is_empty()
                && name.len() <= MAX_CREDENTIAL_NAME
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !name_ok {
                return Err(CredentialsError::BadName { name });
            }
            let text = match value {
                serde_json::Value::String(text) => text,
                serde_json::Value::Number(number) => number.to_string(),
                serde_json::Value::Bool(flag) => flag.to_string(),
                _ => return Err(CredentialsError::NotAString { name }),
            };
            if text.trim().is_empty() {
                return Err(CredentialsError::EmptyValue { name });
            }
            fields.insert(name, SecretString::from(text));
        }
        Ok(Self { fields })
    }

    /// The field names (not secret), sorted.
    pub fn field_names(&self) -> Vec<String> {
        self.fields.keys().cloned().collect()
    }

    /// One field's value, for the code that signs or authenticates with it.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(|value| value.expose_secret())
    }

    /// Every field's value, for what must blot them out of text that is shown
    /// (the engine's `Scrubber`: errors, output, reports, the audit log).
    pub fn values(&self) -> impl Iterator<Item = &str> {
        self.fields.values().map(|value| value.expose_secret())
    }

    /// The whole object as JSON text: what is sealed for the store, or handed to a
    /// provider plugin on its stdin. Never log or return it.
    pub fn expose_json(&self) -> String {
        let object: serde_json::Map<String, serde_json::Value> = self
            .fields
            .iter()
            .map(|(name, value)| {
                (
                    name.clone(),
                    serde_json::Value::String(value.expose_secret().to_owned()),
                )
            })
            .collect();
        serde_json::Value::Object(object).to_string()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn credentials_are_a_flat_object_and_never_print_their_values() {
        let credentials = Credentials::from_json_text(
            r#"{"access_key_id": "AKIA1", "secret_access_key": "s3cr3t", "port": 443}"#,
        )
        .unwrap();
        assert_eq!(
            credentials.field_names(),
            ["access_key_id", "port", "secret_access_key"]
        );
        assert_eq!(credentials.field("secret_access_key"), Some("s3cr3t"));
        assert_eq!(credentials.field("port"), Some("443"));
        let shown = format!("{credentials:?}");
        assert!(
            !shown.contains("s3cr3t") && shown.contains("secret_access_key"),
            "{shown}"
        );
        assert_eq!(
            credentials.values().collect::<Vec<_>>(),
            ["AKIA1", "443", "s3cr3t"]
        );
        let back = Credentials::from_json_text(&credentials.expose_json()).unwrap();
        assert_eq!(back.field("access_key_id"), Some("AKIA1"));
    }

    #[test]
    fn bad_credentials_are_refused_without_quoting_a_value() {
        let cases = [
            ("[1]", CredentialsError::NotAnObject),
            ("{\"a\": \"s3cr3t", CredentialsError::NotAnObject),
            ("{}", CredentialsError::Empty),
            (
                "{\"a b\": \"s3cr3t\"}",
                CredentialsError::BadName { name: "a b".into() },
            ),
            (
                "{\"a\": {\"b\": \"s3cr3t\"}}",
                CredentialsError::NotAString { name: "a".into() },
            ),
            (
                "{\"a\": \"  \"}",
                CredentialsError::EmptyValue { name: "a".into() },
            ),
        ];
        for (text, expected) in cases {
            let error = Credentials::from_json_text(text).unwrap_err();
            assert_eq!(error, expected, "{text}");
            assert!(!error.to_string().contains("s3cr3t"));
        }
        let long = format!("{{\"a\": \"{}\"}}", "x".repeat(MAX_CREDENTIALS_BYTES));
        assert_eq!(
            Credentials::from_json_text(&long).unwrap_err(),
            CredentialsError::TooLong
        );
    }
}
