//! What a job does to its cluster, as one enum for jobs, change requests, the CLI and
//! the pages.
//!
//! On the wire an operation is the same kebab-case word a change request is tagged with
//! (`"add-services"`). Jobs used to show the spaced words the jobs table stores and hook
//! bodies carry (`"add services"`); those are still read (serde aliases, [`FromStr`],
//! the `sqlx` decode) and are what [`Operation::label`] gives, so the table and hook
//! bodies keep them.

use std::fmt;
use std::str::FromStr;

use crate::states::UnknownValue;

/// A job's operation: creating or deleting a cluster, or one of the day-2 changes a
/// [`crate::ClusterChangeRequest`] asks for.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Operation {
    /// Not a change: `corral cluster create`.
    #[cfg_attr(feature = "clap", value(skip))]
    Create,
    /// Not a change: `corral cluster delete`.
    #[cfg_attr(feature = "clap", value(skip))]
    Delete,
    #[serde(alias = "add services")]
    AddServices,
    #[serde(alias = "remove services")]
    RemoveServices,
    #[serde(alias = "add nodes")]
    AddNodes,
    #[serde(alias = "remove nodes")]
    RemoveNodes,
    Reconfigure,
    Start,
    Stop,
    Restart,
    Rollback,
    /// Move the cluster to the catalog's current definitions.
    Upgrade,
    /// Give named nodes successors with the same services, then delete them.
    #[serde(alias = "replace nodes")]
    ReplaceNodes,
    /// Put the current users' SSH keys on every node (see `corral user keys`).
    #[serde(alias = "sync keys")]
    SyncKeys,
}

impl Operation {
    pub const ALL: &'static [Operation] = &[
        Operation::Create,
        Operation::Delete,
        Operation::AddServices,
        Operation::RemoveServices,
        Operation::AddNodes,
        Operation::RemoveNodes,
        Operation::Reconfigure,
        Operation::Start,
        Operation::Stop,
        Operation::Restart,
        Operation::Rollback,
        Operation::Upgrade,
        Operation::ReplaceNodes,
        Operation::SyncKeys,
    ];

    /// The wire word: the change request's tag, the JSON of a job's operation.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "create",
            Operation::Delete => "delete",
            Operation::AddServices => "add-services",
            Operation::RemoveServices => "remove-services",
            Operation::AddNodes => "add-nodes",
            Operation::RemoveNodes => "remove-nodes",
            Operation::Reconfigure => "reconfigure",
            Operation::Start => "start",
            Operation::Stop => "stop",
            Operation::Restart => "restart",
            Operation::Rollback => "rollback",
            Operation::Upgrade => "upgrade",
            Operation::ReplaceNodes => "replace-nodes",
            Operation::SyncKeys => "sync-keys",
        }
    }

    /// As people read it (`add services`). Also the word the jobs table stores and
    /// hook bodies send, as they did before this enum: changing it changes both.
    pub fn label(self) -> &'static str {
        match self {
            Operation::AddServices => "add services",
            Operation::RemoveServices => "remove services",
            Operation::AddNodes => "add nodes",
            Operation::RemoveNodes => "remove nodes",
            Operation::ReplaceNodes => "replace nodes",
            Operation::SyncKeys => "sync keys",
            // One word: the same either way.
            Operation::Create
            | Operation::Delete
            | Operation::Reconfigure
            | Operation::Start
            | Operation::Stop
            | Operation::Restart
            | Operation::Rollback
            | Operation::Upgrade => self.as_str(),
        }
    }
}

impl FromStr for Operation {
    type Err = UnknownValue;

    /// The wire word or the label (older jobs' rows and API answers).
    fn from_str(raw: &str) -> Result<Self, UnknownValue> {
        Operation::ALL
            .iter()
            .copied()
            .find(|operation| operation.as_str() == raw || operation.label() == raw)
            .ok_or_else(|| UnknownValue {
                what: "operation",
                value: raw.to_owned(),
            })
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Serde for an operation written as its [`Operation::label`] (`"add nodes"`): hook
/// bodies carry the spaced words they always did. Either spelling reads back.
/// Use with `#[serde(with = "crate::operation::labelled")]`.
pub mod labelled {
    use super::Operation;

    pub fn serialize<S: serde::Serializer>(
        operation: &Operation,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(operation.label())
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Operation, D::Error> {
        let raw = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(deserializer)?;
        raw.parse().map_err(serde::de::Error::custom)
    }
}

// The jobs table's operation column reads as the enum (see `states`'s word enums).
#[cfg(feature = "sqlx")]
impl sqlx::Type<sqlx::Any> for Operation {
    fn type_info() -> sqlx::any::AnyTypeInfo {
        <&str as sqlx::Type<sqlx::Any>>::type_info()
    }

    fn compatible(ty: &sqlx::any::AnyTypeInfo) -> bool {
        <&str as sqlx::Type<sqlx::Any>>::compatible(ty)
    }
}

#[cfg(feature = "sqlx")]
impl<'r> sqlx::Decode<'r, sqlx::Any> for Operation {
    fn decode(value: sqlx::any::AnyValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
        Ok(<&str as sqlx::Decode<'r, sqlx::Any>>::decode(value)?.parse()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant with its wire word and label, written out so a renamed variant or
    /// a changed word fails here rather than on a client.
    const TABLE: &[(Operation, &str, &str)] = &[
        (Operation::Create, "create", "create"),
        (Operation::Delete, "delete", "delete"),
        (Operation::AddServices, "add-services", "add services"),
        (
            Operation::RemoveServices,
            "remove-services",
            "remove services",
        ),
        (Operation::AddNodes, "add-nodes", "add nodes"),
        (Operation::RemoveNodes, "remove-nodes", "remove nodes"),
        (Operation::Reconfigure, "reconfigure", "reconfigure"),
        (Operation::Start, "start", "start"),
        (Operation::Stop, "stop", "stop"),
        (Operation::Restart, "restart", "restart"),
        (Operation::Rollback, "rollback", "rollback"),
        (Operation::Upgrade, "upgrade", "upgrade"),
        (Operation::ReplaceNodes, "replace-nodes", "replace nodes"),
        (Operation::SyncKeys, "sync-keys", "sync keys"),
    ];

    #[test]
    fn every_operation_has_its_wire_word_and_label() {
        assert_eq!(TABLE.len(), Operation::ALL.len());
        for (&(operation, wire, label), listed) in TABLE.iter().zip(Operation::ALL) {
            assert_eq!(
                operation, *listed,
                "ALL lists {listed:?} where {operation:?} is due"
            );
            assert_eq!(operation.as_str(), wire);
            assert_eq!(operation.to_string(), wire);
            assert_eq!(operation.label(), label);
            let json = serde_json::to_string(&operation).expect("serialises");
            assert_eq!(json, format!("\"{wire}\""));
            // Both spellings read back: the wire word and the older label.
            for spelling in [wire, label] {
                let read: Operation =
                    serde_json::from_str(&format!("\"{spelling}\"")).expect("deserialises");
                assert_eq!(read, operation, "{spelling:?}");
                assert_eq!(spelling.parse::<Operation>(), Ok(operation));
            }
        }
    }

    #[test]
    fn other_words_are_refused() {
        for raw in [
            "",
            "add_services",
            "Add services",
            "update",
            "add  services",
        ] {
            assert!(raw.parse::<Operation>().is_err(), "{raw:?}");
            assert!(serde_json::from_str::<Operation>(&format!("\"{raw}\"")).is_err());
        }
    }
}
