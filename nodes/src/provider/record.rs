//! The data a provider takes in and hands back: plain, serialisable, stored by the engine.

use std::path::PathBuf;

use domain::names::{HardwareTypeName, ImageTypeName};
use serde::{Deserialize, Serialize};

use crate::ssh::{ClientKey, HostKey, SshTarget};

/// What to make. `id` is the node's stable key: creating the same id twice yields one node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeSpec {
    pub id: String,
    /// The tenant whose cluster the node is for: `ssh-pool` lends only that tenant's hosts.
    #[serde(default)]
    pub tenant_id: Option<String>,
    /// The cluster the node belongs to: `docker` puts a cluster's nodes on one network.
    #[serde(default)]
    pub cluster_id: Option<String>,
    /// The image type's `image` for this provider, where it names one (`docker`: an image
    /// of the local engine; without one, Corral's own node image).
    #[serde(default)]
    pub image: Option<String>,
    /// The hardware type's `flavor` for this provider, where it names one (`ec2`: the
    /// instance type).
    #[serde(default)]
    pub flavor: Option<String>,
    /// The image type's `sshuser` for this provider: the login user of images that have
    /// their own (a cloud image's `admin`, `ubuntu`…).
    #[serde(default)]
    pub ssh_user: Option<String>,
    /// The catalog provider the node is made through.
    #[serde(default)]
    pub provider: ProviderSettings,
    #[serde(default)]
    pub hardwaretype: Option<HardwareTypeName>,
    #[serde(default)]
    pub imagetype: Option<ImageTypeName>,
    /// Limits derived from the hardware type; providers apply what they can.
    #[serde(default)]
    pub limits: ResourceLimits,
    /// The user whose job makes the node (not necessarily the cluster's owner):
    /// providers that allow users' own credentials (`user_credentials`) make the node
    /// with theirs when they set some. One user's credentials are never spent on
    /// another's request.
    #[serde(default)]
    pub requested_by: Option<String>,
    /// The tenant's SSH user certificate authority (public key line), for providers
    /// that prepare their nodes' sshd (`local`, `docker`) to trust its certificates
    /// for the cluster's principal. Never put on hosts an admin registered (`ssh-pool`).
    #[serde(default)]
    pub trusted_user_ca: Option<String>,
}

impl NodeSpec {
    /// The spec of a node of a cluster of `tenant_id`.
    pub fn for_tenant(id: impl Into<String>, tenant_id: impl Into<String>) -> Self {
        Self {
            tenant_id: Some(tenant_id.into()),
            ..Self::new(id)
        }
    }

    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            tenant_id: None,
            cluster_id: None,
            image: None,
            flavor: None,
            ssh_user: None,
            provider: ProviderSettings::default(),
            hardwaretype: None,
            imagetype: None,
            limits: ResourceLimits::default(),
            requested_by: None,
            trusted_user_ca: None,
        }
    }
}

/// A catalog provider as its type's plugin sees it: its name and the settings its
/// admins gave (`provisioner`: a region, an endpoint, a plugin's name). Nothing secret:
/// credentials are kept apart, per tenant (see [`super::Credentials`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderSettings {
    /// The catalog provider's name (`aws1`): what image and hardware types map by and
    /// credentials are kept under.
    pub name: String,
    #[serde(default)]
    pub settings: serde_json::Map<String, serde_json::Value>,
}

/// `name`'s settings in `catalog` (none when the catalog has no such provider: the
/// `local` provider of catalogs from before providers were named).
pub fn provider_settings(catalog: &domain::catalog::Catalog, name: &str) -> ProviderSettings {
    ProviderSettings {
        name: name.to_owned(),
        settings: catalog
            .provider(name)
            .map(|provider| {
                provider
                    .provisioner
                    .iter()
                    .map(|(key, value)| (key.clone(), value.clone()))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

impl ProviderSettings {
    /// The first of `keys` that holds a non-empty string (Coopr's catalogs spell some
    /// settings their own way: `aws_region` for `region`).
    pub fn setting(&self, keys: &[&str]) -> Option<&str> {
        keys.iter().find_map(|key| {
            self.settings
                .get(*key)
                .and_then(serde_json::Value::as_str)
                .map(str::trim)
                .filter(|value| !value.is_empty())
        })
    }

    /// Whether the provider's admins let users bring their own credentials
    /// (`"user_credentials": true`; the string `"true"` too, as Coopr's catalogs spell
    /// flags that way).
    pub fn allows_user_credentials(&self) -> bool {
        match self.settings.get(USER_CREDENTIALS_SETTING) {
            Some(serde_json::Value::Bool(flag)) => *flag,
            Some(serde_json::Value::String(text)) => text.trim().eq_ignore_ascii_case("true"),
            _ => false,
        }
    }
}

/// The provisioner setting by which a provider allows users' own credentials.
pub const USER_CREDENTIALS_SETTING: &str = "user_credentials";

pub use domain::node_limits::ResourceLimits;

/// A made node: how to reach it, which host key to expect, and the provider's own state
/// (for `local`: its directory and sshd pid, see [`super::LocalNodeState`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeRecord {
    pub id: String,
    pub provider: String,
    pub host: String,
    pub port: u16,
    pub user: String,
    /// Pinned at creation; every connection must present exactly this key.
    pub host_key: HostKey,
    pub client_key_path: PathBuf,
    #[serde(default)]
    pub provider_state: serde_json::Value,
    /// The node's address as the cluster's other nodes (and its links) reach it, where it
    /// is not `host`: a container is reached over SSH on a port published on 127.0.0.1,
    /// while its services listen on its address in the cluster's network.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
}

impl NodeRecord {
    /// What macros (`%ip.service.web[0]%`) and links give as the node's address.
    pub fn address(&self) -> &str {
        self.address.as_deref().unwrap_or(&self.host)
    }

    /// The provider's own state, for provider type `providertype`: a record of another
    /// provider, or a state that does not read as `T`, is an error naming the node.
    pub fn state_as<T: serde::de::DeserializeOwned>(
        &self,
        providertype: &str,
    ) -> Result<T, super::ProviderError> {
        if self.provider != providertype {
            return Err(super::ProviderError::WrongProvider {
                node: self.id.clone(),
                expected: providertype.to_owned(),
                found: self.provider.clone(),
            });
        }
        serde_json::from_value(self.provider_state.clone()).map_err(|error| {
            super::ProviderError::BadRecord {
                node: self.id.clone(),
                reason: format!("provider_state: {error}"),
            }
        })
    }

    /// Everything [`crate::ssh::SessionPool`] needs to reach the node.
    pub fn ssh_target(&self) -> SshTarget {
        SshTarget {
            node: self.id.clone(),
            host: self.host.clone(),
            port: self.port,
            user: self.user.clone(),
            host_key: self.host_key.clone(),
            client_key: ClientKey::at(&self.client_key_path),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn users_own_credentials_are_allowed_only_by_a_true_setting() {
        let with = |value: serde_json::Value| {
            let mut settings = serde_json::Map::new();
            settings.insert(USER_CREDENTIALS_SETTING.to_owned(), value);
            ProviderSettings {
                name: "aws1".to_owned(),
                settings,
            }
        };
        assert!(with(serde_json::json!(true)).allows_user_credentials());
        assert!(with(serde_json::json!("true")).allows_user_credentials());
        for refused in [
            serde_json::json!(false),
            serde_json::json!("yes"),
            serde_json::json!(1),
        ] {
            assert!(
                !with(refused.clone()).allows_user_credentials(),
                "{refused}"
            );
        }
        assert!(!ProviderSettings::default().allows_user_credentials());
    }

    #[test]
    fn a_spec_stored_before_requesters_has_none() {
        let spec: NodeSpec = serde_json::from_str(r#"{"id": "c1-1"}"#).unwrap();
        assert_eq!(spec.requested_by, None);
        assert_eq!(spec, NodeSpec::new("c1-1"));
    }
}
