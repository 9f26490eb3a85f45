//! Validated names for catalog entities and clusters.
//!
//! Coopr names are 1–255 characters of `[A-Za-z0-9_.-]`. Each kind gets its own
//! newtype so a hardware type name can never be passed where a service name is
//! expected, and so every name in the system has been checked once, at the edge.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

/// Why a string is not a valid entity name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("name is empty")]
    Empty,
    #[error("name is {0} characters long; at most 255 are allowed")]
    TooLong(usize),
    #[error("name {name:?} contains {bad:?}; only letters, digits, '_', '.' and '-' are allowed")]
    BadCharacter { name: String, bad: char },
}

/// Checks Coopr's name rule: 1–255 characters of `[A-Za-z0-9_.-]`.
pub fn check_name(raw: &str) -> Result<(), NameError> {
    if raw.is_empty() {
        return Err(NameError::Empty);
    }
    let len = raw.chars().count();
    if len > 255 {
        return Err(NameError::TooLong(len));
    }
    if let Some(bad) = raw
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
    {
        return Err(NameError::BadCharacter {
            name: raw.to_owned(),
            bad,
        });
    }
    Ok(())
}

macro_rules! entity_name {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// Parses and validates a name.
            pub fn parse(raw: impl Into<String>) -> Result<Self, NameError> {
                let raw = raw.into();
                check_name(&raw)?;
                Ok(Self(raw))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let raw = String::deserialize(deserializer)?;
                Self::parse(raw).map_err(serde::de::Error::custom)
            }
        }

        impl std::str::FromStr for $name {
            type Err = NameError;
            fn from_str(raw: &str) -> Result<Self, Self::Err> {
                Self::parse(raw)
            }
        }
    };
}

entity_name!(
    /// A service, or an alias that services `provide`.
    ServiceName
);
entity_name!(
    /// A hardware type (`small`, `large`…).
    HardwareTypeName
);
entity_name!(
    /// An image type (`debian12`…).
    ImageTypeName
);
entity_name!(
    /// A provider instance (`local`, `aws-us-east-1`…).
    ProviderName
);
entity_name!(
    /// A cluster template or partial template.
    TemplateName
);
entity_name!(
    /// A cluster, chosen by its owner.
    ClusterName
);
entity_name!(
    /// A group of a tenant's users (`data-team`), which templates may be limited to
    /// and approval rules may name as approvers.
    GroupName
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_coopr_names() {
        for ok in ["hadoop-hdfs-namenode", "base", "a.b_c-1", "X"] {
            assert_eq!(ServiceName::parse(ok).unwrap().as_str(), ok);
        }
    }

    #[test]
    fn rejects_bad_names_with_the_reason() {
        assert_eq!(ServiceName::parse(""), Err(NameError::Empty));
        assert_eq!(
            ServiceName::parse("a b"),
            Err(NameError::BadCharacter {
                name: "a b".into(),
                bad: ' '
            })
        );
        assert_eq!(
            ServiceName::parse("x".repeat(256)),
            Err(NameError::TooLong(256))
        );
    }

    #[test]
    fn deserialization_validates() {
        let err = serde_json::from_str::<ServiceName>("\"no/slash\"").unwrap_err();
        assert!(err.to_string().contains("'/'"), "{err}");
    }
}
