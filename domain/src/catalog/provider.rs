//! Providers (docs/coopr-format.md §2.1): a named instance of a provider plugin plus its
//! admin settings.

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use super::common::{EntityMeta, Extra, Origin};
use crate::names::ProviderName;

/// Nodes as processes of this host, each its own `sshd` on a loopback address.
pub const LOCAL_PROVIDER: &str = "local";
/// Hosts a tenant's admins registered, lent out as nodes.
pub const SSH_POOL_PROVIDER: &str = "ssh-pool";
/// Nodes as Docker containers.
pub const DOCKER_PROVIDER: &str = "docker";
/// Nodes as EC2 instances (Amazon's, or a cloud speaking its API).
pub const EC2_PROVIDER: &str = "ec2";
/// Nodes made by an operator-installed plugin program.
pub const EXEC_PROVIDER: &str = "exec";

/// Provider types Corral can drive today; others import fine but only warn.
pub const SUPPORTED_PROVIDER_TYPES: [&str; 5] = [
    LOCAL_PROVIDER,
    SSH_POOL_PROVIDER,
    DOCKER_PROVIDER,
    EC2_PROVIDER,
    EXEC_PROVIDER,
];

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
