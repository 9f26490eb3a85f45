//! `ec2`: every node is an Amazon EC2 instance (or one of an EC2-compatible cloud's).
//!
//! What a node gets, and why:
//! - Per cluster, one key pair `corral-<cluster>` (an Ed25519 key Corral makes; the
//!   private half stays in a 0600 file of the provider's key directory, EC2 only gets
//!   the public half) and one security group `corral-<cluster>` (SSH from the `ssh_cidr`
//!   setting, everything from the group itself so the cluster's nodes reach each other).
//!   Both are looked up by name first and made only when missing, and both go with the
//!   cluster's last node.
//! - `RunInstances` with a client token derived from the tenant and node id: a retried
//!   or crashed create gets the same instance back from EC2, never a second one. Before
//!   that, an instance tagged with the node's id is looked up and reused (EC2-compatible
//!   clouds and emulators do not all honour client tokens).
//! - Tags `corral.cluster`, `corral.node`, `corral.tenant` and `Name` on what is made.
//! - A host key pinned from the instance's console output (cloud-init prints its keys
//!   between `-----BEGIN SSH HOST KEY KEYS-----` markers). Where the console says
//!   nothing in time, the key the instance presents on the first connection is recorded
//!   and the record says so (`host_key_source: first-use`): trust on first use, logged.
//!
//! Settings (the catalog provider's `provisioner`): `region` (or `aws_region`, required),
//! `endpoint` (else `https://ec2.<region>.amazonaws.com`), `ssh_cidr` (`0.0.0.0/0`),
//! `connect` (`public-ip`, `private-ip` or `none`: nodes Corral never connects to, for
//! checking an account or running against an emulator) and `instance_type` (for hardware
//! types that name no flavor). Credentials are the tenant's, kept sealed in the store.
//!
//! This file is the [`NodeProvider`] gluing the parts, one a concern: `settings` (read
//! and checked), `client` (whose credentials sign), `key_pairs`, `security_groups`,
//! `instances` (found or launched, waited for, stopped, started, terminated) and
//! `host_keys` (console or first use); `api` speaks EC2's Query API, `errors` turns its
//! codes into words.

mod api;
mod client;
mod errors;
mod host_keys;
mod instances;
mod key_pairs;
mod security_groups;
mod settings;

use std::path::Path;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

pub use api::{first_text, ApiError, Params, QueryClient, EC2_VERSION, IAM_VERSION};
pub use key_pairs::key_name;
pub use security_groups::group_name;
pub use settings::default_endpoint;
pub use settings::Connect;

use self::api::InstanceState;
use self::errors::rejected;
use self::instances::{Goal, Launch};
use self::settings::Settings;
use super::client_keys::ClientKeys;
use super::{
    NodePresence, NodeProvider, NodeRecord, NodeSpec, ProviderError, ProviderSettings, Suspended,
};
use crate::ssh::{SessionPool, SshTarget};
use store::Store;

/// The provider type's name in catalogs (`"providertype": "ec2"`).
pub use domain::catalog::EC2_PROVIDER;

const TAG_CLUSTER: &str = "corral.cluster";
const TAG_NODE: &str = "corral.node";
const TAG_TENANT: &str = "corral.tenant";
const SSH_PORT: u16 = 22;
const DEFAULT_USER: &str = "admin";

/// The longest pause between two looks at an instance's state or its console.
const MAX_POLL: Duration = Duration::from_secs(5);

/// Where a node's pinned host key came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostKeySource {
    /// The instance's console output, written by cloud-init at first boot.
    Console,
    /// The first connection (trust on first use): the console had no keys in time.
    FirstUse,
    /// Not known: the provider never connects (`connect`: `none`). The record holds a
    /// key nobody has the private half of, so any connection would be refused.
    Unknown,
}

/// What an ec2 node's record keeps beyond how to reach it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ec2NodeState {
    pub instance_id: String,
    pub region: String,
    pub endpoint: String,
    /// The catalog provider (`aws1`) whose credentials delete and adopt use.
    pub provider: String,
    pub tenant_id: String,
    pub cluster_id: String,
    pub key_name: String,
    pub security_group_id: String,
    #[serde(default)]
    pub connect: Connect,
    pub host_key_source: HostKeySource,
    /// The user whose own credentials made the node (the requester of the job that
    /// made it, where the provider allows `user_credentials`), so delete and adopt sign
    /// as they did;
    /// `None`: the tenant's.
    #[serde(default)]
    pub credentials_user: Option<String>,
}

/// Makes nodes as EC2 instances, signing with each tenant's credentials from the store.
#[derive(Clone)]
pub struct Ec2Provider {
    store: Store,
    /// Each cluster's key pair (named as [`key_name`] says), stored and copied here.
    keys: ClientKeys,
    http: reqwest::Client,
    /// The endpoints other than AWS's own that catalogs may name (see [`Settings::read`]).
    allowed_endpoints: Vec<String>,
}

impl Ec2Provider {
    /// A provider keeping its clusters' private keys in `store`, copied to `key_dir`
    /// (made 0700) when it connects.
    pub fn new(store: Store, key_dir: &Path) -> Result<Self, ProviderError> {
        let keys = ClientKeys::new(store.clone(), key_dir, EC2_PROVIDER)?;
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(60))
            // A signed API call has one answer; a redirect would send it elsewhere.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|error| ProviderError::Ec2Settings {
                provider: EC2_PROVIDER.to_owned(),
                detail: format!("no HTTP client: {error}"),
            })?;
        Ok(Self {
            store,
            keys,
            http,
            allowed_endpoints: Vec::new(),
        })
    }

    /// This provider, letting catalogs name `endpoints` (EC2-compatible clouds, or an
    /// emulator in tests) besides AWS's own regional endpoints.
    pub fn with_allowed_endpoints(mut self, endpoints: Vec<String>) -> Self {
        self.allowed_endpoints = endpoints;
        self
    }

    /// Whether Corral may connect to the node (its provider's `connect` is not `none`).
    /// Records of other providers are reachable.
    pub fn reachable(record: &NodeRecord) -> bool {
        record.provider != EC2_PROVIDER
            || state_of(record).map_or(true, |state| state.connect != Connect::None)
    }

    /// The cluster's security group, key pair and private key, once no instance of the
    /// cluster is left (`node`'s delete asks).
    async fn delete_cluster_leftovers(
        &self,
        client: &QueryClient,
        node: &str,
        state: &Ec2NodeState,
    ) -> Result<(), ProviderError> {
        let provider = state.provider.as_str();
        let cluster = state.cluster_id.as_str();
        if !instances::cluster_instances(client, node, provider, cluster)
            .await?
            .is_empty()
        {
            return Ok(());
        }
        let mut groups = security_groups::cluster_groups(client, node, provider, cluster).await?;
        if !groups.contains(&state.security_group_id) {
            groups.push(state.security_group_id.clone());
        }
        security_groups::delete(client, node, provider, &groups).await?;
        key_pairs::delete(&self.keys, client, node, provider, &state.key_name).await
    }
}

#[async_trait]
impl NodeProvider for Ec2Provider {
    fn name(&self) -> &'static str {
        EC2_PROVIDER
    }

    async fn create(&self, spec: &NodeSpec) -> Result<NodeRecord, ProviderError> {
        let node = spec.id.as_str();
        check_name(node)?;
        let settings = Settings::read(&spec.provider, &self.allowed_endpoints)?;
        let provider = settings.provider.as_str();
        let tenant = spec
            .tenant_id
            .as_deref()
            .ok_or_else(|| ProviderError::Ec2Settings {
                provider: provider.to_owned(),
                detail: format!("node {node} has no tenant, and EC2 credentials are a tenant's"),
            })?;
        let cluster = spec.cluster_id.as_deref().unwrap_or(node);
        check_name(cluster)?;
        let imagetype = spec
            .imagetype
            .as_ref()
            .map_or_else(|| "(none)".to_owned(), ToString::to_string);
        let image = spec
            .image
            .clone()
            .ok_or_else(|| ProviderError::Ec2Settings {
                provider: provider.to_owned(),
                detail: format!(
                    "image type {imagetype} names no image (AMI) for it: set its \
                 providermap.{provider}.image"
                ),
            })?;
        let instance_type = spec
            .flavor
            .clone()
            .or_else(|| settings.instance_type.clone())
            .ok_or_else(|| ProviderError::Ec2Settings {
                provider: provider.to_owned(),
                detail: format!(
                    "hardware type {} names no flavor (instance type) for it, and it has no \
                     `instance_type` setting",
                    spec.hardwaretype
                        .as_ref()
                        .map_or_else(|| "(none)".to_owned(), ToString::to_string)
                ),
            })?;
        let whose = (
            spec.requested_by.as_deref(),
            spec.provider.allows_user_credentials(),
        );
        let (client, source) = self
            .client(
                tenant,
                provider,
                whose,
                &settings.region,
                &settings.endpoint,
            )
            .await?;
        let tags = [
            (TAG_CLUSTER, cluster),
            (TAG_NODE, node),
            (TAG_TENANT, tenant),
        ];

        let (key_name, client_key_path) =
            key_pairs::ensure(&self.keys, &client, node, provider, cluster, &tags).await?;
        let group_id = security_groups::ensure(&client, node, &settings, cluster, &tags).await?;
        let launch = Launch {
            spec,
            settings: &settings,
            tenant,
            image: &image,
            imagetype: &imagetype,
            instance_type: &instance_type,
            key_name: &key_name,
            group_id: &group_id,
            tags: &tags,
        };
        let instance_id = instances::ensure(&client, &launch).await?;
        let instance =
            instances::wait_for(&client, node, provider, &instance_id, Goal::Run).await?;
        let (host, address) = instances::addresses(&instance, settings.connect, node, provider)?;
        let (host_key, host_key_source) = host_keys::host_key(
            &client,
            node,
            provider,
            &instance_id,
            &host,
            settings.connect,
        )
        .await?;
        Ok(NodeRecord {
            id: node.to_owned(),
            provider: EC2_PROVIDER.to_owned(),
            host,
            port: SSH_PORT,
            user: spec
                .ssh_user
                .clone()
                .unwrap_or_else(|| DEFAULT_USER.to_owned()),
            host_key,
            client_key_path,
            provider_state: serde_json::to_value(Ec2NodeState {
                instance_id,
                region: settings.region.clone(),
                endpoint: settings.endpoint.clone(),
                provider: provider.to_owned(),
                tenant_id: tenant.to_owned(),
                cluster_id: cluster.to_owned(),
                key_name,
                security_group_id: group_id,
                connect: settings.connect,
                host_key_source,
                credentials_user: source.user().map(str::to_owned),
            })
            .unwrap_or_default(),
            address,
        })
    }

    async fn confirm(
        &self,
        record: &NodeRecord,
        pool: &SessionPool,
        timeout: Duration,
    ) -> Result<(), ProviderError> {
        if !Self::reachable(record) {
            let provider = state_of(record)
                .map(|state| state.provider)
                .unwrap_or_default();
            return Err(ProviderError::NotConnected {
                node: record.id.clone(),
                provider,
            });
        }
        super::wait_for_ssh(&self.ssh_target(record).await?, pool, timeout).await
    }

    async fn delete(&self, record: &NodeRecord) -> Result<(), ProviderError> {
        let (state, client) = self.client_for(record).await?;
        let node = record.id.as_str();
        instances::terminate(&client, node, &state.provider, &state.instance_id).await?;
        self.delete_cluster_leftovers(&client, node, &state).await
    }

    /// Finds the node's instance (by the record's id, else by the node's tag: the record
    /// may name an instance of a create that was retried), starts it if it is stopped,
    /// waits until it runs and reads its addresses (a started instance may have another
    /// public address).
    async fn adopt(&self, record: &NodeRecord) -> Result<NodeRecord, ProviderError> {
        let (mut state, client) = self.client_for(record).await?;
        let node = record.id.as_str();
        let provider = state.provider.clone();
        let provider = provider.as_str();
        let instance = match instances::instance(&client, node, provider, &state.instance_id)
            .await?
            .filter(|instance| !instance.state().is_gone())
        {
            Some(instance) => instance,
            None => instances::node_instances(&client, node, provider)
                .await?
                .into_iter()
                .find(|instance| !instance.state().is_gone())
                .ok_or_else(|| ProviderError::InstanceGone {
                    node: node.to_owned(),
                    instance: state.instance_id.clone(),
                })?,
        };
        state.instance_id = instance.instance_id.clone();
        let instance = match instance.state() {
            InstanceState::Running => instance,
            InstanceState::Stopping | InstanceState::Stopped => {
                instances::start(&client, node, provider, &state.instance_id).await?
            }
            _ => {
                instances::wait_for(&client, node, provider, &state.instance_id, Goal::Run).await?
            }
        };
        let (host, address) = instances::addresses(&instance, state.connect, node, provider)?;
        Ok(NodeRecord {
            host,
            address,
            provider_state: serde_json::to_value(&state).unwrap_or_default(),
            ..record.clone()
        })
    }

    /// Gone when the node's instance is terminated (or terminating), stopped, or no
    /// longer known to the endpoint.
    async fn presence(&self, record: &NodeRecord) -> Result<NodePresence, ProviderError> {
        let (state, client) = self.client_for(record).await?;
        let found =
            instances::instance(&client, &record.id, &state.provider, &state.instance_id).await?;
        Ok(match found.map(|instance| instance.state()) {
            Some(InstanceState::Pending | InstanceState::Running) => NodePresence::Present,
            Some(InstanceState::Other(_)) => NodePresence::Unknown,
            Some(_) | None => NodePresence::Gone,
        })
    }

    /// Stops the node's instance (StopInstances) and waits until it is stopped; its
    /// volumes and its address in the VPC stay, [`NodeProvider::resume`] starts it again.
    /// Stopping a stopped instance succeeds; one that is gone is an error.
    async fn suspend(&self, record: &NodeRecord) -> Result<Suspended, ProviderError> {
        let (state, client) = self.client_for(record).await?;
        let node = record.id.as_str();
        let provider = state.provider.as_str();
        let gone = || ProviderError::InstanceGone {
            node: node.to_owned(),
            instance: state.instance_id.clone(),
        };
        match instances::instance(&client, node, provider, &state.instance_id).await? {
            None => return Err(gone()),
            Some(instance) if instance.state().is_gone() => return Err(gone()),
            Some(instance) if instance.state() == InstanceState::Stopped => {
                return Ok(Suspended::Stopped)
            }
            Some(_) => {}
        }
        instances::stop(&client, node, provider, &state.instance_id).await?;
        Ok(Suspended::Stopped)
    }

    /// Adopting starts a stopped instance and reads its (maybe new) public address.
    async fn resume(&self, record: &NodeRecord) -> Result<NodeRecord, ProviderError> {
        self.adopt(record).await
    }

    async fn check(
        &self,
        tenant_id: &str,
        provider: &ProviderSettings,
    ) -> Result<String, ProviderError> {
        let settings = Settings::read(provider, &self.allowed_endpoints)?;
        // The check is an admin's: it signs with the tenant's credentials.
        let (client, _) = self
            .client(
                tenant_id,
                &settings.provider,
                (None, false),
                &settings.region,
                &settings.endpoint,
            )
            .await?;
        let regions: api::DescribeRegions = client
            .call_as("DescribeRegions", Params::new().as_slice())
            .await
            .map_err(|error| {
                rejected(&settings.provider, &error).unwrap_or_else(|| ProviderError::Ec2Check {
                    provider: settings.provider.clone(),
                    endpoint: settings.endpoint.clone(),
                    region: settings.region.clone(),
                    detail: error.to_string(),
                })
            })?;
        let listed = regions
            .region_info
            .items
            .iter()
            .any(|region| region.region_name == settings.region);
        Ok(format!(
            "EC2 at {} accepted the credentials of provider {} (region {}{})",
            settings.endpoint,
            settings.provider,
            settings.region,
            if listed {
                ""
            } else {
                ", though it does not list that region"
            }
        ))
    }

    fn connects(&self, record: &NodeRecord) -> bool {
        Self::reachable(record)
    }

    /// How this process reaches `record`'s node (with its copy of the cluster's key).
    async fn ssh_target(&self, record: &NodeRecord) -> Result<SshTarget, ProviderError> {
        let state = state_of(record)?;
        self.keys.target(record, &state.key_name).await
    }

    fn creation_note(&self, record: &NodeRecord) -> Option<String> {
        let state = state_of(record).ok()?;
        (state.host_key_source == HostKeySource::FirstUse).then(|| {
            format!(
                "node {}: instance {} printed no host keys to its console, so its host key \
                 {} was trusted on first use (the key sshd presented at the first \
                 connection) and is pinned from now on; compare it with the instance's \
                 own key if you can\n",
                record.id,
                state.instance_id,
                record.host_key.fingerprint()
            )
        })
    }
}

/// Node and cluster ids become key, group and file names.
fn check_name(name: &str) -> Result<(), ProviderError> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if name.is_empty() || name.len() > 200 || !name.chars().all(allowed) || name.starts_with('.') {
        return Err(ProviderError::InvalidNodeId {
            id: name.to_owned(),
            reason: "ec2 node and cluster ids need 1 to 200 letters, digits, '-', '_' or '.'",
        });
    }
    Ok(())
}

fn state_of(record: &NodeRecord) -> Result<Ec2NodeState, ProviderError> {
    record.state_as(EC2_PROVIDER)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::path::PathBuf;

    use super::*;
    use crate::ssh::{ClientKeyPair, HostKey};

    #[tokio::test]
    async fn a_host_key_trusted_on_first_use_is_told_to_the_user() {
        let key =
            HostKey::from_openssh(&ClientKeyPair::generate("x").unwrap().public_openssh).unwrap();
        let state = |source| Ec2NodeState {
            instance_id: "i-0abc".into(),
            region: "us-east-1".into(),
            endpoint: "https://ec2.us-east-1.amazonaws.com".into(),
            provider: "aws1".into(),
            tenant_id: "t".into(),
            cluster_id: "c".into(),
            key_name: "corral-c".into(),
            security_group_id: "sg-1".into(),
            connect: Connect::PublicIp,
            host_key_source: source,
            credentials_user: None,
        };
        let record = |source| NodeRecord {
            id: "c-1".into(),
            provider: EC2_PROVIDER.into(),
            host: "203.0.113.7".into(),
            port: 22,
            user: "admin".into(),
            host_key: key.clone(),
            client_key_path: PathBuf::from("/nonexistent"),
            provider_state: serde_json::to_value(state(source)).unwrap(),
            address: None,
        };
        let dir = tempfile::tempdir().unwrap();
        let db = crate::testing::TestDatabase::sqlite();
        let store = store::Store::open(&db.url).await.unwrap();
        let provider = Ec2Provider::new(store, dir.path()).unwrap();
        let note =
            super::super::NodeProvider::creation_note(&provider, &record(HostKeySource::FirstUse))
                .unwrap();
        assert!(
            note.contains("trusted on first use") && note.contains(&key.fingerprint()),
            "{note}"
        );
        assert!(super::super::NodeProvider::creation_note(
            &provider,
            &record(HostKeySource::Console)
        )
        .is_none());
    }
}
