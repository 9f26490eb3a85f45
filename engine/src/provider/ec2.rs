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

mod api;
mod errors;

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use serde::{Deserialize, Serialize};

pub use api::{first_text, ApiError, Params, QueryClient, EC2_VERSION, IAM_VERSION};

use self::api::{Instance, InstanceState, LIVE_STATES};
use self::errors::{ec2_error, rejected};
use super::client_keys::ClientKeys;
use super::CredentialBinding;
use super::{NodeRecord, NodeSpec, ProviderError, ProviderFuture, ProviderSettings, Suspended};
use crate::ssh::{ClientKeyPair, HostKey, SessionPool, SshTarget};
use crate::store::provider_credentials::{CredentialsSource, OpenedCredentials};
use crate::store::Store;

/// The provider type's name in catalogs (`"providertype": "ec2"`).
pub const EC2_PROVIDER: &str = "ec2";

const TAG_CLUSTER: &str = "corral.cluster";
const TAG_NODE: &str = "corral.node";
const TAG_TENANT: &str = "corral.tenant";
const SSH_PORT: u16 = 22;
const DEFAULT_USER: &str = "admin";
const DEFAULT_SSH_CIDR: &str = "0.0.0.0/0";
const HOST_KEYS_BEGIN: &str = "-----BEGIN SSH HOST KEY KEYS-----";
const HOST_KEYS_END: &str = "-----END SSH HOST KEY KEYS-----";

/// How long an instance may take to run, to stop, or to be terminated.
const STATE_WAIT: Duration = Duration::from_secs(600);
/// How long the console is read for the host keys before the first connection decides.
const CONSOLE_WAIT: Duration = Duration::from_secs(240);
/// How long sshd may take to answer that first connection.
const FIRST_USE_WAIT: Duration = Duration::from_secs(300);
const FIRST_POLL: Duration = Duration::from_millis(200);
const MAX_POLL: Duration = Duration::from_secs(5);
/// Deleting a group its instances still hold fails until EC2 lets go of them.
const GROUP_DELETE_ATTEMPTS: u32 = 6;

/// How Corral reaches a provider's instances.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Connect {
    /// Over the instance's public address.
    #[default]
    PublicIp,
    /// Over its address in the VPC (Corral runs inside it, or is routed into it).
    PrivateIp,
    /// Never: instances are made and deleted, nothing runs on them.
    None,
}

impl Connect {
    fn parse(provider: &str, text: Option<&str>) -> Result<Self, ProviderError> {
        match text {
            None | Some("public-ip") => Ok(Self::PublicIp),
            Some("private-ip") => Ok(Self::PrivateIp),
            Some("none") => Ok(Self::None),
            Some(other) => Err(ProviderError::Ec2Settings {
                provider: provider.to_owned(),
                detail: format!(
                    "setting `connect` is {other:?}; it is `public-ip` (the default), \
                     `private-ip` or `none`"
                ),
            }),
        }
    }
}

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

/// AWS's own EC2 endpoint for `region`: where a provider that names no `endpoint` goes.
pub(crate) fn default_endpoint(region: &str) -> String {
    format!("https://ec2.{region}.amazonaws.com")
}

/// A catalog provider's settings, read and checked.
#[derive(Debug, Clone)]
struct Settings {
    provider: String,
    region: String,
    endpoint: String,
    ssh_cidr: String,
    connect: Connect,
    instance_type: Option<String>,
}

impl Settings {
    /// `provider`'s settings. An `endpoint` must be one of `allowed_endpoints` (the
    /// operator's `--ec2-endpoint`): the catalog is a tenant admin's, and an endpoint
    /// of their choosing would have this server send requests wherever they point it
    /// (its own loopback services, a cloud's metadata address).
    fn read(
        provider: &ProviderSettings,
        allowed_endpoints: &[String],
    ) -> Result<Self, ProviderError> {
        let name = provider.name.clone();
        let region = provider
            .setting(&["region", "aws_region"])
            .ok_or_else(|| ProviderError::Ec2Settings {
                provider: name.clone(),
                detail: "setting `region` (or `aws_region`) is missing from its provisioner; \
                         name the EC2 region, e.g. \"region\": \"us-east-1\""
                    .to_owned(),
            })?
            .to_owned();
        // The region becomes part of a host name.
        if region.len() > 32
            || !region
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(ProviderError::Ec2Settings {
                provider: name,
                detail: format!(
                    "setting `region` {region:?} is not a region name (like \"us-east-1\")"
                ),
            });
        }
        let endpoint = match provider.setting(&["endpoint"]) {
            Some(endpoint)
                if !allowed_endpoints.iter().any(|allowed| {
                    allowed.trim_end_matches('/') == endpoint.trim_end_matches('/')
                }) =>
            {
                return Err(ProviderError::Ec2Settings {
                    provider: name,
                    detail: format!(
                        "setting `endpoint` {endpoint:?} is not an endpoint this server may \
                         call: its operator allows EC2-compatible endpoints with \
                         `corral serve --ec2-endpoint URL` (CORRAL_EC2_ENDPOINTS)"
                    ),
                });
            }
            Some(endpoint) => {
                let parsed =
                    url::Url::parse(endpoint).map_err(|error| ProviderError::Ec2Settings {
                        provider: name.clone(),
                        detail: format!("setting `endpoint` {endpoint:?} is not a URL: {error}"),
                    })?;
                if !matches!(parsed.scheme(), "http" | "https") {
                    return Err(ProviderError::Ec2Settings {
                        provider: name,
                        detail: format!("setting `endpoint` {endpoint:?} is not http(s)"),
                    });
                }
                endpoint.to_owned()
            }
            None => default_endpoint(&region),
        };
        Ok(Self {
            region,
            endpoint,
            ssh_cidr: provider
                .setting(&["ssh_cidr"])
                .unwrap_or(DEFAULT_SSH_CIDR)
                .to_owned(),
            connect: Connect::parse(&name, provider.setting(&["connect"]))?,
            instance_type: provider.setting(&["instance_type"]).map(str::to_owned),
            provider: name,
        })
    }
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

    /// How this process reaches `record`'s node (with its copy of the cluster's key).
    async fn target(&self, record: &NodeRecord) -> Result<SshTarget, ProviderError> {
        let state = state_of(record)?;
        self.keys.target(record, &state.key_name).await
    }

    /// A client signing with the credentials [`Store::credentials_for`] picks for
    /// `provider` of `tenant_id` at `region` and `endpoint` (`user`'s own where
    /// `users_allowed` and set for this region and endpoint, the tenant's otherwise),
    /// and whose they are.
    async fn client(
        &self,
        tenant_id: &str,
        provider: &str,
        (user, users_allowed): (Option<&str>, bool),
        region: &str,
        endpoint: &str,
    ) -> Result<(QueryClient, CredentialsSource), ProviderError> {
        // A user's own open only for the region and endpoint they were set for.
        let binding = CredentialBinding::ec2(region, endpoint);
        let found = self
            .store
            .credentials_for(tenant_id, provider, &binding, user, users_allowed)
            .await
            .map_err(|error| ProviderError::CredentialsUnusable {
                provider: provider.to_owned(),
                reason: error.to_string(),
            })?;
        let (credentials, source) = match found {
            OpenedCredentials::Open(credentials, source) => (credentials, source),
            OpenedCredentials::Nothing => {
                return Err(ProviderError::NoCredentials {
                    provider: provider.to_owned(),
                })
            }
            OpenedCredentials::Rebound(_) => {
                return Err(ProviderError::CredentialsRebound {
                    provider: provider.to_owned(),
                })
            }
        };
        let field = |name: &str| {
            credentials
                .field(name)
                .ok_or_else(|| ProviderError::CredentialsUnusable {
                    provider: provider.to_owned(),
                    reason: format!(
                        "field `{name}` is missing (EC2 needs access_key_id and \
                         secret_access_key, and session_token for temporary credentials)"
                    ),
                })
        };
        let client = QueryClient::new(
            self.http.clone(),
            endpoint,
            region,
            "ec2",
            EC2_VERSION,
            field("access_key_id")?,
            field("secret_access_key")?,
            credentials.field("session_token"),
        );
        Ok((client, source))
    }

    async fn check_provider(
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

    async fn create_node(&self, spec: &NodeSpec) -> Result<NodeRecord, ProviderError> {
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

        let (key_name, client_key_path) = self
            .ensure_key_pair(&client, node, provider, cluster, &tags)
            .await?;
        let group_id = self
            .ensure_security_group(&client, node, &settings, cluster, &tags)
            .await?;

        let instance_id = match self
            .node_instances(&client, node, provider)
            .await?
            .into_iter()
            .find(|instance| !instance.state().is_gone())
        {
            Some(instance) => {
                tracing::info!(node, instance = %instance.instance_id, "an instance of the node exists; using it");
                instance.instance_id
            }
            None => {
                let run_with = async |token: &str| {
                    self.run_instance(
                        &client,
                        spec,
                        &settings,
                        &image,
                        &imagetype,
                        &instance_type,
                        &key_name,
                        &group_id,
                        token,
                        &tags,
                    )
                    .await
                };
                let mut run = run_with(&client_token(&format!("{tenant}:{node}"))).await?;
                // The token already names an instance that has since been terminated
                // (the node was deleted and is made again): a token derived from that
                // instance makes a new one, still only once.
                if run.state().is_gone() {
                    let token = client_token(&format!("{tenant}:{node}:{}", run.instance_id));
                    run = run_with(&token).await?;
                }
                run.instance_id
            }
        };
        let instance = self
            .wait_for(&client, node, provider, &instance_id, "run", |state| {
                *state == InstanceState::Running
            })
            .await?;
        let (host, address) = addresses(&instance, settings.connect, node, provider)?;
        let (host_key, host_key_source) = self
            .host_key(
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

    #[allow(clippy::too_many_arguments)]
    async fn run_instance(
        &self,
        client: &QueryClient,
        spec: &NodeSpec,
        settings: &Settings,
        image: &str,
        imagetype: &str,
        instance_type: &str,
        key_name: &str,
        group_id: &str,
        token: &str,
        tags: &[(&str, &str)],
    ) -> Result<Instance, ProviderError> {
        let node = spec.id.as_str();
        let provider = settings.provider.as_str();
        let mut all_tags = tags.to_vec();
        let name = format!("corral-{node}");
        all_tags.push(("Name", &name));
        let params = Params::new()
            .set("ImageId", image)
            .set("InstanceType", instance_type)
            .set("MinCount", "1")
            .set("MaxCount", "1")
            .set("KeyName", key_name)
            .set("SecurityGroupId.1", group_id)
            .set("ClientToken", token)
            .tags("instance", &all_tags);
        let ran: api::RunInstances = client
            .call_as("RunInstances", params.as_slice())
            .await
            .map_err(|error| {
                if error.is("InvalidAMIID") {
                    ProviderError::Ec2Image {
                        node: node.to_owned(),
                        provider: provider.to_owned(),
                        region: settings.region.clone(),
                        image: image.to_owned(),
                        imagetype: imagetype.to_owned(),
                    }
                } else {
                    ec2_error(node, provider, "run the instance")(error)
                }
            })?;
        ran.instances_set
            .items
            .into_iter()
            .next()
            .ok_or_else(|| ProviderError::Ec2 {
                node: node.to_owned(),
                provider: provider.to_owned(),
                action: "run the instance",
                detail: "RunInstances answered without an instance".to_owned(),
            })
    }

    /// The cluster's key pair, imported from a key Corral made and keeps in the database:
    /// its name, and this process's copy of its private key.
    async fn ensure_key_pair(
        &self,
        client: &QueryClient,
        node: &str,
        provider: &str,
        cluster: &str,
        tags: &[(&str, &str)],
    ) -> Result<(String, PathBuf), ProviderError> {
        // This process's creates take turns, so a cluster's nodes made at once share a
        // key without asking the cloud twice; other processes agree through the database.
        static MAKING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
        let _turn = MAKING.lock().await;
        let name = key_name(cluster);
        let stored_before = self.keys.file_of(&name).await?.is_some();
        let (path, public) = self
            .keys
            .ensure(&name, &format!("corral cluster {cluster}"))
            .await?;
        let exists = match client
            .call(
                "DescribeKeyPairs",
                Params::new().set("KeyName.1", &name).as_slice(),
            )
            .await
        {
            Ok(_) => true,
            Err(error) if error.is("InvalidKeyPair.NotFound") => false,
            Err(error) => return Err(ec2_error(node, provider, "look up the key pair")(error)),
        };
        if exists {
            if stored_before {
                return Ok((name, path));
            }
            // Corral does not hold its private half (an earlier version made it on a
            // machine whose key directory is lost): the nodes made from now on get the
            // stored one.
            tracing::warn!(node, key = %name, "the cluster's key pair has no stored private key; replacing it");
            client
                .call(
                    "DeleteKeyPair",
                    Params::new().set("KeyName", &name).as_slice(),
                )
                .await
                .map_err(ec2_error(node, provider, "replace the key pair"))?;
        }
        let params = Params::new()
            .set("KeyName", &name)
            .set(
                "PublicKeyMaterial",
                base64::engine::general_purpose::STANDARD.encode(public.trim()),
            )
            .tags("key-pair", tags);
        match client.call("ImportKeyPair", params.as_slice()).await {
            Ok(_) => Ok((name, path)),
            Err(error) if error.is("InvalidKeyPair.Duplicate") => Ok((name, path)),
            Err(error) => Err(ec2_error(node, provider, "import the key pair")(error)),
        }
    }

    /// The id of the cluster's security group, made (with its rules) when missing.
    async fn ensure_security_group(
        &self,
        client: &QueryClient,
        node: &str,
        settings: &Settings,
        cluster: &str,
        tags: &[(&str, &str)],
    ) -> Result<String, ProviderError> {
        static MAKING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
        let _turn = MAKING.lock().await;
        let provider = settings.provider.as_str();
        let name = group_name(cluster);
        let group_id = match self
            .cluster_groups(client, node, provider, cluster)
            .await?
            .pop()
        {
            Some(id) => id,
            None => {
                let params = Params::new()
                    .set("GroupName", &name)
                    .set(
                        "GroupDescription",
                        format!(
                            "Corral cluster {cluster}: SSH in, the cluster's nodes to each other"
                        ),
                    )
                    .tags("security-group", tags);
                match client
                    .call_as::<api::CreateSecurityGroup>("CreateSecurityGroup", params.as_slice())
                    .await
                {
                    Ok(made) => made.group_id,
                    // Another process made it meanwhile.
                    Err(error) if error.is("InvalidGroup.Duplicate") => self
                        .cluster_groups(client, node, provider, cluster)
                        .await?
                        .pop()
                        .ok_or_else(|| ProviderError::Ec2 {
                            node: node.to_owned(),
                            provider: provider.to_owned(),
                            action: "make the security group",
                            detail: format!("{name} exists but cannot be found"),
                        })?,
                    Err(error) => {
                        return Err(ec2_error(node, provider, "make the security group")(error))
                    }
                }
            }
        };
        // Every time, and one rule per call: a create that crashed between making the
        // group and its rules leaves them to the next, and a rule already there only
        // fails its own call.
        let rules = [
            Params::new()
                .set("GroupId", &group_id)
                .set("IpPermissions.1.IpProtocol", "tcp")
                .set("IpPermissions.1.FromPort", SSH_PORT.to_string())
                .set("IpPermissions.1.ToPort", SSH_PORT.to_string())
                .set("IpPermissions.1.IpRanges.1.CidrIp", &settings.ssh_cidr),
            Params::new()
                .set("GroupId", &group_id)
                .set("IpPermissions.1.IpProtocol", "-1")
                .set("IpPermissions.1.Groups.1.GroupId", &group_id),
        ];
        for rule in rules {
            match client
                .call("AuthorizeSecurityGroupIngress", rule.as_slice())
                .await
            {
                Ok(_) => {}
                Err(error) if error.is("InvalidPermission.Duplicate") => {}
                Err(error) => {
                    return Err(ec2_error(node, provider, "open the security group")(error))
                }
            }
        }
        Ok(group_id)
    }

    /// The ids of security groups named for the cluster.
    async fn cluster_groups(
        &self,
        client: &QueryClient,
        node: &str,
        provider: &str,
        cluster: &str,
    ) -> Result<Vec<String>, ProviderError> {
        let groups: api::DescribeSecurityGroups = client
            .call_as(
                "DescribeSecurityGroups",
                Params::new()
                    .filter("group-name", &[&group_name(cluster)])
                    .as_slice(),
            )
            .await
            .map_err(ec2_error(node, provider, "look up the security group"))?;
        Ok(groups
            .security_group_info
            .items
            .into_iter()
            .filter(|group| group.group_name.is_empty() || group.group_name == group_name(cluster))
            .map(|group| group.group_id)
            .collect())
    }

    /// Instances matching `params` (filters or ids), following pages.
    async fn describe(
        &self,
        client: &QueryClient,
        params: Params,
    ) -> Result<Vec<Instance>, ApiError> {
        let mut instances = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut page = params.as_slice().to_vec();
            if let Some(token) = &token {
                page.push(("NextToken".to_owned(), token.clone()));
            }
            let answer: api::DescribeInstances = client.call_as("DescribeInstances", &page).await?;
            instances.extend(
                answer
                    .reservation_set
                    .items
                    .into_iter()
                    .flat_map(|reservation| reservation.instances_set.items),
            );
            match answer.next_token.filter(|next| !next.is_empty()) {
                Some(next) => token = Some(next),
                None => return Ok(instances),
            }
        }
    }

    /// The instances tagged as node `node` that are not terminated.
    async fn node_instances(
        &self,
        client: &QueryClient,
        node: &str,
        provider: &str,
    ) -> Result<Vec<Instance>, ProviderError> {
        self.describe(
            client,
            Params::new()
                .filter(&format!("tag:{TAG_NODE}"), &[node])
                .filter("instance-state-name", LIVE_STATES),
        )
        .await
        .map_err(ec2_error(node, provider, "look up the node's instance"))
    }

    /// The instance, or `None` when EC2 does not know it.
    async fn instance(
        &self,
        client: &QueryClient,
        node: &str,
        provider: &str,
        instance_id: &str,
    ) -> Result<Option<Instance>, ProviderError> {
        match self
            .describe(client, Params::new().set("InstanceId.1", instance_id))
            .await
        {
            Ok(instances) => Ok(instances
                .into_iter()
                .find(|instance| instance.instance_id == instance_id)),
            Err(error) if error.is("InvalidInstanceID") => Ok(None),
            Err(error) => Err(ec2_error(node, provider, "look up the instance")(error)),
        }
    }

    /// Polls the instance until its state satisfies `done`, for at most [`STATE_WAIT`].
    /// An instance that is not (yet) known is waited for: EC2 is eventually consistent.
    async fn wait_for(
        &self,
        client: &QueryClient,
        node: &str,
        provider: &str,
        instance_id: &str,
        goal: &'static str,
        done: impl Fn(&InstanceState) -> bool,
    ) -> Result<Instance, ProviderError> {
        let deadline = tokio::time::Instant::now() + STATE_WAIT;
        let mut pause = FIRST_POLL;
        loop {
            let last = match self.instance(client, node, provider, instance_id).await? {
                Some(instance) if done(&instance.state()) => return Ok(instance),
                Some(instance) if goal == "run" && instance.state().is_gone() => {
                    return Err(ProviderError::Ec2 {
                        node: node.to_owned(),
                        provider: provider.to_owned(),
                        action: "run the instance",
                        detail: format!(
                            "instance {instance_id} went {} before it ran (see its state \
                             reason in the EC2 console)",
                            instance.instance_state.name
                        ),
                    });
                }
                Some(instance) => instance.instance_state.name,
                None => "unknown".to_owned(),
            };
            if tokio::time::Instant::now() + pause > deadline {
                return Err(ProviderError::Ec2 {
                    node: node.to_owned(),
                    provider: provider.to_owned(),
                    action: "wait for the instance",
                    detail: format!(
                        "instance {instance_id} did not {goal} within {}s (it is {last})",
                        STATE_WAIT.as_secs()
                    ),
                });
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(MAX_POLL);
        }
    }

    /// The key to pin, and where it came from (see [`HostKeySource`]).
    async fn host_key(
        &self,
        client: &QueryClient,
        node: &str,
        provider: &str,
        instance_id: &str,
        host: &str,
        connect: Connect,
    ) -> Result<(HostKey, HostKeySource), ProviderError> {
        let failure = |action: &'static str, detail: String| ProviderError::Ec2 {
            node: node.to_owned(),
            provider: provider.to_owned(),
            action,
            detail,
        };
        let console_wait = if connect == Connect::None {
            Duration::ZERO
        } else {
            CONSOLE_WAIT
        };
        let deadline = tokio::time::Instant::now() + console_wait;
        loop {
            let output: api::ConsoleOutput = client
                .call_as(
                    "GetConsoleOutput",
                    Params::new().set("InstanceId", instance_id).as_slice(),
                )
                .await
                .map_err(ec2_error(node, provider, "read the console output"))?;
            let text = output
                .output
                .and_then(|encoded| {
                    base64::engine::general_purpose::STANDARD
                        .decode(encoded.trim())
                        .ok()
                })
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                .unwrap_or_default();
            if let Some(key) = console_host_key(&text) {
                return Ok((key, HostKeySource::Console));
            }
            if tokio::time::Instant::now() + MAX_POLL > deadline {
                break;
            }
            tokio::time::sleep(MAX_POLL).await;
        }
        if connect == Connect::None {
            // Never used to connect; a key whose private half is discarded right here
            // makes sure nothing could be trusted by mistake.
            let placeholder = ClientKeyPair::generate("corral: host key unknown")
                .map_err(|error| failure("record the host key", error.to_string()))?;
            let key = HostKey::from_openssh(&placeholder.public_openssh)
                .map_err(|error| failure("record the host key", error.to_string()))?;
            return Ok((key, HostKeySource::Unknown));
        }
        let deadline = tokio::time::Instant::now() + FIRST_USE_WAIT;
        loop {
            match crate::ssh::first_seen_host_key(host, SSH_PORT, Duration::from_secs(20)).await {
                Ok(key) => {
                    tracing::warn!(
                        node,
                        instance = instance_id,
                        fingerprint = %key.fingerprint(),
                        "the instance's console shows no host keys; pinning the key it \
                         presented on first connection (trust on first use)"
                    );
                    return Ok((key, HostKeySource::FirstUse));
                }
                Err(error) if tokio::time::Instant::now() + MAX_POLL > deadline => {
                    return Err(failure(
                        "learn the instance's host key",
                        format!(
                            "the console showed none within {}s and sshd at {host}:{SSH_PORT} \
                             did not answer within {}s: {error}",
                            CONSOLE_WAIT.as_secs(),
                            FIRST_USE_WAIT.as_secs()
                        ),
                    ));
                }
                Err(_) => tokio::time::sleep(MAX_POLL).await,
            }
        }
    }

    async fn delete_node(&self, record: &NodeRecord) -> Result<(), ProviderError> {
        let state = state_of(record)?;
        let node = record.id.as_str();
        let provider = state.provider.as_str();
        let whose = (state.credentials_user.as_deref(), true);
        let (client, _) = self
            .client(
                &state.tenant_id,
                provider,
                whose,
                &state.region,
                &state.endpoint,
            )
            .await?;
        let terminated = client
            .call(
                "TerminateInstances",
                Params::new()
                    .set("InstanceId.1", &state.instance_id)
                    .as_slice(),
            )
            .await;
        match terminated {
            Ok(_) => {
                self.wait_for(
                    &client,
                    node,
                    provider,
                    &state.instance_id,
                    "terminate",
                    |state| *state == InstanceState::Terminated,
                )
                .await?;
            }
            // Already gone (terminated instances are forgotten after a while).
            Err(error) if error.is("InvalidInstanceID") => {}
            Err(error) => return Err(ec2_error(node, provider, "terminate the instance")(error)),
        }
        self.delete_cluster_leftovers(&client, node, &state).await
    }

    /// The cluster's security group, key pair and private key, once no instance of the
    /// cluster is left.
    async fn delete_cluster_leftovers(
        &self,
        client: &QueryClient,
        node: &str,
        state: &Ec2NodeState,
    ) -> Result<(), ProviderError> {
        let provider = state.provider.as_str();
        let cluster = state.cluster_id.as_str();
        let remaining = self
            .describe(
                client,
                Params::new()
                    .filter(&format!("tag:{TAG_CLUSTER}"), &[cluster])
                    .filter("instance-state-name", LIVE_STATES),
            )
            .await
            .map_err(ec2_error(node, provider, "look up the cluster's instances"))?;
        if !remaining.is_empty() {
            return Ok(());
        }
        let mut groups = self.cluster_groups(client, node, provider, cluster).await?;
        if !groups.contains(&state.security_group_id) {
            groups.push(state.security_group_id.clone());
        }
        for group in groups {
            let mut pause = Duration::from_secs(1);
            for attempt in 1..=GROUP_DELETE_ATTEMPTS {
                match client
                    .call(
                        "DeleteSecurityGroup",
                        Params::new().set("GroupId", &group).as_slice(),
                    )
                    .await
                {
                    Ok(_) => break,
                    Err(error) if error.is("InvalidGroup") => break,
                    // Instances just terminated still hold it for a moment.
                    Err(error)
                        if error.is("DependencyViolation") && attempt < GROUP_DELETE_ATTEMPTS =>
                    {
                        tokio::time::sleep(pause).await;
                        pause *= 2;
                    }
                    Err(error) => {
                        return Err(ec2_error(node, provider, "delete the security group")(
                            error,
                        ))
                    }
                }
            }
        }
        match client
            .call(
                "DeleteKeyPair",
                Params::new().set("KeyName", &state.key_name).as_slice(),
            )
            .await
        {
            Ok(_) => {}
            Err(error) if error.is("InvalidKeyPair.NotFound") => {}
            Err(error) => return Err(ec2_error(node, provider, "delete the key pair")(error)),
        }
        self.keys.forget(&state.key_name).await
    }

    /// Gone when the node's instance is terminated (or terminating), stopped, or no
    /// longer known to the endpoint.
    async fn instance_presence(
        &self,
        record: &NodeRecord,
    ) -> Result<super::NodePresence, ProviderError> {
        let state = state_of(record)?;
        let provider = state.provider.as_str();
        let (client, _) = self
            .client(
                &state.tenant_id,
                provider,
                (state.credentials_user.as_deref(), true),
                &state.region,
                &state.endpoint,
            )
            .await?;
        let found = self
            .instance(&client, &record.id, provider, &state.instance_id)
            .await?;
        Ok(match found.map(|instance| instance.state()) {
            Some(InstanceState::Pending | InstanceState::Running) => super::NodePresence::Present,
            Some(InstanceState::Other(_)) => super::NodePresence::Unknown,
            Some(_) | None => super::NodePresence::Gone,
        })
    }

    /// Stops the node's instance (StopInstances) and waits until it is stopped; its
    /// volumes and its address in the VPC stay, [`Self::adopt_node`] starts it again.
    /// Stopping a stopped instance succeeds; one that is gone is an error.
    async fn suspend_node(&self, record: &NodeRecord) -> Result<Suspended, ProviderError> {
        let state = state_of(record)?;
        let node = record.id.as_str();
        let provider = state.provider.as_str();
        let whose = (state.credentials_user.as_deref(), true);
        let (client, _) = self
            .client(
                &state.tenant_id,
                provider,
                whose,
                &state.region,
                &state.endpoint,
            )
            .await?;
        let gone = || ProviderError::InstanceGone {
            node: node.to_owned(),
            instance: state.instance_id.clone(),
        };
        match self
            .instance(&client, node, provider, &state.instance_id)
            .await?
        {
            None => return Err(gone()),
            Some(instance) if instance.state().is_gone() => return Err(gone()),
            Some(instance) if instance.state() == InstanceState::Stopped => {
                return Ok(Suspended::Stopped)
            }
            Some(_) => {}
        }
        client
            .call(
                "StopInstances",
                Params::new()
                    .set("InstanceId.1", &state.instance_id)
                    .as_slice(),
            )
            .await
            .map_err(ec2_error(node, provider, "stop the instance"))?;
        self.wait_for(
            &client,
            node,
            provider,
            &state.instance_id,
            "stop",
            |state| *state == InstanceState::Stopped,
        )
        .await?;
        Ok(Suspended::Stopped)
    }

    async fn adopt_node(&self, record: &NodeRecord) -> Result<NodeRecord, ProviderError> {
        let mut state = state_of(record)?;
        let node = record.id.as_str();
        let provider = state.provider.clone();
        let provider = provider.as_str();
        let whose = (state.credentials_user.as_deref(), true);
        let (client, _) = self
            .client(
                &state.tenant_id,
                provider,
                whose,
                &state.region,
                &state.endpoint,
            )
            .await?;
        let instance = match self
            .instance(&client, node, provider, &state.instance_id)
            .await?
            .filter(|instance| !instance.state().is_gone())
        {
            Some(instance) => instance,
            // The record may name an instance of a create that was retried: the node's
            // tag finds the one that lives.
            None => self
                .node_instances(&client, node, provider)
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
                self.wait_for(
                    &client,
                    node,
                    provider,
                    &state.instance_id,
                    "stop",
                    |state| *state == InstanceState::Stopped,
                )
                .await?;
                client
                    .call(
                        "StartInstances",
                        Params::new()
                            .set("InstanceId.1", &state.instance_id)
                            .as_slice(),
                    )
                    .await
                    .map_err(ec2_error(node, provider, "start the instance again"))?;
                self.wait_for(
                    &client,
                    node,
                    provider,
                    &state.instance_id,
                    "run",
                    |state| *state == InstanceState::Running,
                )
                .await?
            }
            _ => {
                self.wait_for(
                    &client,
                    node,
                    provider,
                    &state.instance_id,
                    "run",
                    |state| *state == InstanceState::Running,
                )
                .await?
            }
        };
        // A started instance may have another public address.
        let (host, address) = addresses(&instance, state.connect, node, provider)?;
        Ok(NodeRecord {
            host,
            address,
            provider_state: serde_json::to_value(&state).unwrap_or_default(),
            ..record.clone()
        })
    }
}

impl super::NodeProvider for Ec2Provider {
    fn name(&self) -> &'static str {
        EC2_PROVIDER
    }

    fn create<'a>(&'a self, spec: &'a NodeSpec) -> ProviderFuture<'a, NodeRecord> {
        Box::pin(self.create_node(spec))
    }

    fn confirm<'a>(
        &'a self,
        record: &'a NodeRecord,
        pool: &'a SessionPool,
        timeout: Duration,
    ) -> ProviderFuture<'a, ()> {
        Box::pin(async move {
            if !Self::reachable(record) {
                let provider = state_of(record)
                    .map(|state| state.provider)
                    .unwrap_or_default();
                return Err(ProviderError::NotConnected {
                    node: record.id.clone(),
                    provider,
                });
            }
            super::wait_for_ssh(&self.target(record).await?, pool, timeout).await
        })
    }

    fn delete<'a>(&'a self, record: &'a NodeRecord) -> ProviderFuture<'a, ()> {
        Box::pin(self.delete_node(record))
    }

    fn adopt<'a>(&'a self, record: &'a NodeRecord) -> ProviderFuture<'a, NodeRecord> {
        Box::pin(self.adopt_node(record))
    }

    fn presence<'a>(&'a self, record: &'a NodeRecord) -> ProviderFuture<'a, super::NodePresence> {
        Box::pin(self.instance_presence(record))
    }

    fn suspend<'a>(&'a self, record: &'a NodeRecord) -> ProviderFuture<'a, Suspended> {
        Box::pin(self.suspend_node(record))
    }

    /// Adopting starts a stopped instance and reads its (maybe new) public address.
    fn resume<'a>(&'a self, record: &'a NodeRecord) -> ProviderFuture<'a, NodeRecord> {
        Box::pin(self.adopt_node(record))
    }

    fn check<'a>(
        &'a self,
        tenant_id: &'a str,
        provider: &'a ProviderSettings,
    ) -> ProviderFuture<'a, String> {
        Box::pin(self.check_provider(tenant_id, provider))
    }

    fn connects(&self, record: &NodeRecord) -> bool {
        Self::reachable(record)
    }

    fn ssh_target<'a>(&'a self, record: &'a NodeRecord) -> ProviderFuture<'a, SshTarget> {
        Box::pin(self.target(record))
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

/// The key pair (and key file) of cluster `cluster`.
pub fn key_name(cluster: &str) -> String {
    format!("corral-{cluster}")
}

/// The security group of cluster `cluster`.
pub fn group_name(cluster: &str) -> String {
    format!("corral-{cluster}")
}

/// A client token for `seed`: EC2 allows 64 ASCII characters, a SHA-256 in hex is 64.
fn client_token(seed: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("corral:{seed}").as_bytes());
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Where Corral connects (`host`) and where the cluster's nodes reach the node.
fn addresses(
    instance: &Instance,
    connect: Connect,
    node: &str,
    provider: &str,
) -> Result<(String, Option<String>), ProviderError> {
    let private = instance
        .private_ip_address
        .clone()
        .filter(|ip| !ip.is_empty());
    let public = instance.ip_address.clone().filter(|ip| !ip.is_empty());
    let host = match connect {
        Connect::PublicIp => public.ok_or_else(|| ProviderError::Ec2 {
            node: node.to_owned(),
            provider: provider.to_owned(),
            action: "give the instance a public address",
            detail: format!(
                "instance {} has none (its subnet does not assign them); set `connect` to \
                 `private-ip` where Corral runs inside the VPC",
                instance.instance_id
            ),
        })?,
        Connect::PrivateIp => private.clone().ok_or_else(|| ProviderError::Ec2 {
            node: node.to_owned(),
            provider: provider.to_owned(),
            action: "give the instance a private address",
            detail: format!("instance {} has none", instance.instance_id),
        })?,
        // Never connected to: the record still says where the instance is.
        Connect::None => public
            .or_else(|| private.clone())
            .unwrap_or_else(|| instance.instance_id.clone()),
    };
    Ok((host, private))
}

/// The Ed25519 key (else the first key) between cloud-init's host key markers.
fn console_host_key(console: &str) -> Option<HostKey> {
    let start = console.find(HOST_KEYS_BEGIN)? + HOST_KEYS_BEGIN.len();
    let block = &console[start..];
    let block = &block[..block.find(HOST_KEYS_END)?];
    let keys: Vec<HostKey> = block
        .lines()
        .filter_map(|line| HostKey::from_openssh(line.trim()).ok())
        .collect();
    keys.iter()
        .find(|key| key.to_openssh().starts_with("ssh-ed25519 "))
        .or_else(|| keys.first())
        .cloned()
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

    use super::*;

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
        let store = crate::store::Store::open(&db.url).await.unwrap();
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

    #[test]
    fn the_host_key_is_read_from_cloud_inits_console_block() {
        let ed = ClientKeyPair::generate("x").unwrap().public_openssh;
        let console = format!(
            "boot...\n{HOST_KEYS_BEGIN}\necdsa-sha2-nistp256 AAAA-not-a-key\n{ed}\n\
             {HOST_KEYS_END}\nlogin:"
        );
        let key = console_host_key(&console).unwrap();
        assert_eq!(key, HostKey::from_openssh(&ed).unwrap());
        assert!(console_host_key("no keys here").is_none());
        assert!(console_host_key(&format!("{HOST_KEYS_BEGIN}\n{ed}\n")).is_none());
    }

    #[test]
    fn client_tokens_fit_ec2s_limit_and_are_stable() {
        let token = client_token(&format!("tenant:{}", "c".repeat(300)));
        assert_eq!(token.len(), 64);
        assert_eq!(token, client_token(&format!("tenant:{}", "c".repeat(300))));
        assert_ne!(token, client_token("tenant:other"));
    }

    #[test]
    fn settings_need_a_region_and_know_their_defaults() {
        let mut provider = ProviderSettings {
            name: "aws1".into(),
            settings: serde_json::Map::new(),
        };
        let error = Settings::read(&provider, &[]).unwrap_err().to_string();
        assert!(
            error.contains("provider aws1") && error.contains("`region`"),
            "{error}"
        );
        provider
            .settings
            .insert("region".into(), "x.evil.example/".into());
        assert!(
            Settings::read(&provider, &[]).is_err(),
            "a region is a name"
        );
        provider.settings.remove("region");
        provider
            .settings
            .insert("aws_region".into(), "eu-west-1".into());
        let settings = Settings::read(&provider, &[]).unwrap();
        assert_eq!(settings.endpoint, "https://ec2.eu-west-1.amazonaws.com");
        provider
            .settings
            .insert("endpoint".into(), "http://169.254.169.254/".into());
        let error = Settings::read(&provider, &[]).unwrap_err().to_string();
        assert!(error.contains("--ec2-endpoint"), "{error}");
        let allowed = ["http://169.254.169.254".to_owned()];
        assert_eq!(
            Settings::read(&provider, &allowed).unwrap().endpoint,
            "http://169.254.169.254/"
        );
        provider.settings.remove("endpoint");
        assert_eq!(settings.ssh_cidr, "0.0.0.0/0");
        assert_eq!(settings.connect, Connect::PublicIp);
        provider
            .settings
            .insert("connect".into(), "sideways".into());
        assert!(Settings::read(&provider, &[]).is_err());
    }
}
