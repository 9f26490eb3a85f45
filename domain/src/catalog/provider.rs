//! Providers (docs/coopr-format.md §2.1): a named instance of a provider plugin plus its
//! admin settings.

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use super::common::{EntityMeta, Extra, Origin};
use crate::names::ProviderName;

/// Provider types Corral can drive today; others import fine but only warn.
pub const SUPPORTED_PROVIDER_TYPES: [&str; 5] = ["local", "ssh-pool", "docker", "ec2", "exec"];

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Provider {
    pub name: ProviderName,
    #[serde(flatten)]
    pub meta: EntityMeta,
    /// The plugin that creates, confirms and deletes nodes (`local`, `ssh-pool`…).
    pub providertype: String,
    /// Free-form admin-level plugin settings.
    pub provisioner: IndexMap<String, Value>,
    #[serde(flatten)]
    pub extra: Extra,
    #[serde(skip)]
    pub origin: Origin,
}

impl Provider {
    pub fn new(name: ProviderName, providertype: impl Into<String>) -> Self {
        Self {
            name,
            meta: EntityMeta::default(),
            providertype: providertype.into(),
            provisioner: IndexMap::new(),
            extra: Extra::new(),
            origin: Origin::none(),
        }
    }

    pub fn is_supported_type(&self) -> bool {
        SUPPORTED_PROVIDER_TYPES.contains(&self.providertype.as_str())
    }
}
