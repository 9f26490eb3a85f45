//! `docker`: every node is a container on a Docker engine, running its own sshd.
//!
//! What a container gets, and why:
//! - The image the image type names for the provider (`"providermap": {"docker":
//!   {"image": "..."}}`): any image of the engine with sshd, or `corral-node` (also when
//!   none is named) for Corral's own node image (see [`image`]), built on first use.
//! - A host key Corral generates and copies in before the container starts, pinned in
//!   the node's record: the first connection already checks it, nothing is trusted on
//!   first use. The private half exists only inside the container.
//! - Corral's client key in root's `authorized_keys` (one key pair per provider, kept
//!   0600 in the provider's directory).
//! - The tenant's SSH user CA trusted by sshd for certificates naming the node's
//!   cluster (`corral cluster ssh`), when the spec brings one.
//! - Cgroup limits always (`docker inspect` shows them): the hardware type's `memory_mb`
//!   and `cpus`, or the operator's defaults where it names none (or 0), never above the
//!   operator's maxima, and a PIDs limit (see `domain::node_limits`); no privileges, no host
//!   mounts, no Docker socket.
//! - A bridge network per cluster, so a cluster's nodes reach each other and nothing of
//!   another cluster; sshd published on a free port of 127.0.0.1 only, which is the one
//!   address Corral connects to (it never scans or guesses an address).
//! - Labels `corral.cluster`, `corral.node`, `corral.tenant` on containers and networks,
//!   so what Corral made is found (and removed) by label.
//!
//! Every method is safe to repeat: a create finds no recorded node, so a container of
//! the same name left by a crashed create (its host key lost with that process) is
//! removed and made again; a delete of a deleted node succeeds.
//!
//! The engine may go away under a running job (dockerd restarted or stopped). Every call
//! that makes, starts or removes something first waits for the engine to answer, for
//! [`ENGINE_WAIT`] at most, so a restart costs a job a pause rather than its steps; an
//! engine that stays away fails the step with an error naming the engine's socket. A
//! restarted engine leaves the containers it ran stopped (they have no restart policy),
//! so before a step reaches a node over SSH the executor adopts it again (`adopt`
//! starts a stopped container and reads its new port).

mod image;

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use async_trait::async_trait;
use bollard::models::{ContainerCreateBody, HostConfig, NetworkCreateRequest, PortBinding};
use bollard::query_parameters::{
    CreateContainerOptions, InspectNetworkOptions, ListNetworksOptions, RemoveContainerOptions,
    UploadToContainerOptions,
};
use bollard::Docker;
use serde::{Deserialize, Serialize};

pub use domain::node_limits::{AppliedLimits, DockerLimits};
pub use image::{NodeImage, NODE_IMAGE, NODE_IMAGE_PACKAGES};

use super::client_keys::ClientKeys;
use super::{
    NodePresence, NodeProvider, NodeRecord, NodeSpec, ProviderError, ProviderSettings, Suspended,
};
use crate::ssh::{ClientKeyPair, HostKey, SshTarget};
use store::Store;

// The provider type's name in catalogs (`"providertype": "docker"`).
pub use domain::catalog::DOCKER_PROVIDER;

/// The engine's socket when `DOCKER_HOST` names no other (`unix://...`) one.
pub const DEFAULT_DOCKER_SOCKET: &str = "unix:///var/run/docker.sock";

/// How long a call waits for an engine that does not answer before it fails: a restarted
/// dockerd answers within a few seconds, so its restart costs a job a pause; a stopped one
/// fails the step after this (and its retries after this again).
pub const ENGINE_WAIT: Duration = Duration::from_secs(30);

/// How often a call waiting for the engine asks it again.
const ENGINE_POLL: Duration = Duration::from_millis(200);
/// How long one of those asks may take.
const PING_TIMEOUT: Duration = Duration::from_secs(5);

/// bollard's own default for a request's whole time (an image import is the longest).
const REQUEST_TIMEOUT_SECS: u64 = 120;

const LABEL_CLUSTER: &str = "corral.cluster";
const LABEL_NODE: &str = "corral.node";
const LABEL_TENANT: &str = "corral.tenant";
const SSH_PORT: &str = "22/tcp";
/// Where the node's pinned host key lives inside the container.
const HOST_KEY_IN_CONTAINER: &str = "etc/ssh/ssh_host_ed25519_key";
/// The tenant's SSH user CA, which the container's sshd trusts (empty: none).
const USER_CA_IN_CONTAINER: &str = "etc/ssh/corral_user_ca.pub";
/// The principal a certificate must name to log in: the node's cluster's.
const PRINCIPALS_IN_CONTAINER: &str = "etc/ssh/corral_principals";

/// What a docker node's record keeps beyond how to reach it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DockerNodeState {
    pub container: String,
    /// The cluster whose network the node is on (its label `corral.cluster`).
    pub cluster: String,
    /// The id of the cluster's network.
    pub network: String,
    pub image: String,
}

/// Makes nodes as containers of one Docker engine (the local one, over its socket).
pub struct DockerProvider {
    docker: Docker,
    /// The engine's socket (`unix:///var/run/docker.sock`), named in errors.
    endpoint: String,
    /// How long a call waits for the engine to answer (see [`ENGINE_WAIT`]).
    engine_wait: Duration,
    /// Each node's own client key (`<node id>.key`): a key that opens one node only, so
    /// handing it to a tenant's Ansible run opens no other tenant's containers.
    node_keys: ClientKeys,
    /// The operator's defaults and maxima for nodes' memory, CPUs and processes.
    limits: DockerLimits,
}

impl DockerProvider {
    /// Connects to the engine at its default socket (or the `unix://` socket `DOCKER_HOST`
    /// names), agreeing on an API version it speaks; nodes' client keys are kept in
    /// `store` and copied under `dir`.
    pub async fn connect(store: Store, dir: &Path) -> Result<Self, ProviderError> {
        let endpoint = std::env::var("DOCKER_HOST")
            .ok()
            .filter(|host| host.starts_with("unix://"))
            .unwrap_or_else(|| DEFAULT_DOCKER_SOCKET.to_owned());
        Self::connect_to(store, dir, &endpoint).await
    }

    /// [`DockerProvider::connect`] to the engine listening on `endpoint`
    /// (`unix:///path/to/docker.sock`).
    pub async fn connect_to(
        store: Store,
        dir: &Path,
        endpoint: &str,
    ) -> Result<Self, ProviderError> {
        let failed = |error: bollard::errors::Error| {
            docker_failure("", "connect", engine_detail(endpoint, &error))
        };
        let docker =
            Docker::connect_with_unix(endpoint, REQUEST_TIMEOUT_SECS, bollard::API_DEFAULT_VERSION)
                .map_err(failed)?
                .negotiate_version()
                .await
                .map_err(failed)?;
        let node_keys = ClientKeys::new(store, &dir.join("node-keys"), DOCKER_PROVIDER)?;
        Ok(Self {
            docker,
            endpoint: endpoint.to_owned(),
            engine_wait: ENGINE_WAIT,
            node_keys,
            limits: DockerLimits::default(),
        })
    }

    /// Waits at most `wait` (instead of [`ENGINE_WAIT`]) for an engine that does not answer.
    #[must_use]
    pub fn with_engine_wait(mut self, wait: Duration) -> Self {
        self.engine_wait = wait;
        self
    }

    /// The engine's socket, as errors name it.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Returns once the engine answers, or fails naming it after [`Self::engine_wait`]
    /// of no answer: what a call does first, so an engine restarting meanwhile costs a
    /// pause instead of a failed step.
    async fn wait_for_engine(&self, node: &str) -> Result<(), ProviderError> {
        let started = tokio::time::Instant::now();
        let mut said = false;
        loop {
            // A hung engine takes a ping no longer than a dead one.
            let detail = match tokio::time::timeout(PING_TIMEOUT, self.docker.ping()).await {
                Ok(Ok(_)) => {
                    if said {
                        tracing::info!(endpoint = %self.endpoint, node, "the Docker engine answers again");
                    }
                    return Ok(());
                }
                Ok(Err(error)) if is_unreachable(&error) => with_causes(&error),
                Ok(Err(error)) => return Err(self.engine_error(node, "answer")(error)),
                Err(_) => format!("no answer to a ping within {PING_TIMEOUT:?}"),
            };
            let waited = started.elapsed();
            if waited >= self.engine_wait {
                return Err(ProviderError::DockerEngineDown {
                    node: node.to_owned(),
                    endpoint: self.endpoint.clone(),
                    waited_secs: waited.as_secs(),
                    detail,
                });
            }
            if !said {
                tracing::warn!(endpoint = %self.endpoint, node, %detail, "the Docker engine does not answer; waiting for it");
                said = true;
            }
            tokio::time::sleep(ENGINE_POLL).await;
        }
    }

    /// What a failed request to the engine becomes: the node, what Docker could not
    /// do, and why (naming the engine when it did not answer at all).
    fn engine_error(
        &self,
        node: &str,
        action: &'static str,
    ) -> impl FnOnce(bollard::errors::Error) -> ProviderError {
        let node = node.to_owned();
        let endpoint = self.endpoint.clone();
        move |error| docker_failure(&node, action, engine_detail(&endpoint, &error))
    }

    /// Makes nodes within `limits` (the operator's) instead of the defaults.
    #[must_use]
    pub fn with_limits(mut self, limits: DockerLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The name node `node`'s client key is stored under.
    fn node_key_name(node: &str) -> String {
        format!("{node}.key")
    }

    /// How this process reaches `record`'s node (with its copy of the node's key).
    async fn target(&self, record: &NodeRecord) -> Result<SshTarget, ProviderError> {
        self.node_keys
            .target(record, &Self::node_key_name(&record.id))
            .await
    }

    /// The engine answers, and whether Corral's node image is built yet (the first node
    /// builds it, which takes a while).
    async fn check_engine(
        &self,
        _tenant_id: &str,
        _provider: &ProviderSettings,
    ) -> Result<String, ProviderError> {
        let version = self
            .docker
            .version()
            .await
            .map_err(self.engine_error("", "answer"))?;
        let image = NodeImage::tag();
        let built = self.docker.inspect_image(&image).await.is_ok();
        Ok(format!(
            "the Docker engine {} answers (API {}); Corral's node image {} is {}",
            version.version.unwrap_or_default(),
            version.api_version.unwrap_or_default(),
            image,
            if built {
                "built"
            } else {
                "not built yet: the first node builds it from Debian's packages (about a \
                 minute, once)"
            }
        ))
    }

    /// Whether `spec`'s node waits for Corral's node image to be built first.
    async fn image_to_build(&self, spec: &NodeSpec) -> Result<Option<String>, ProviderError> {
        if spec
            .image
            .as_deref()
            .is_some_and(|image| image != NODE_IMAGE)
        {
            return Ok(None);
        }
        let tag = NodeImage::tag();
        Ok((!image::exists(&self.docker, &tag).await?).then(|| NodeImage::building_note(&tag)))
    }

    /// The engine this provider talks to (tests list what it made through it).
    pub fn docker(&self) -> &Docker {
        &self.docker
    }

    async fn create_node(&self, spec: &NodeSpec) -> Result<NodeRecord, ProviderError> {
        let node = spec.id.as_str();
        check_name(node)?;
        self.wait_for_engine(node).await?;
        // Previews refuse such a hardware type already; this worker may be set lower.
        let hardware = spec
            .hardwaretype
            .as_ref()
            .map_or_else(|| "(none)".to_owned(), ToString::to_string);
        self.limits
            .check(&hardware, &spec.limits)
            .map_err(|problem| docker_failure(node, "apply the hardware type's limits", problem))?;
        let applied = self.limits.applied(&spec.limits);
        let container = container_name(node);
        // Not recorded, so nothing depends on it: a leftover of a crashed create.
        self.remove_container(node, &container).await?;
        let cluster = spec.cluster_id.as_deref().unwrap_or(node);
        let image = match spec.image.as_deref() {
            Some(image) if image != NODE_IMAGE => {
                // The engine would try to pull a missing image from a registry: Corral
                // only uses images the engine already has.
                if !image::exists(&self.docker, image).await? {
                    return Err(docker_failure(
                        node,
                        "use the image type's image",
                        format!(
                            "image {image:?} is not on this Docker engine (Corral never pulls \
                             images; build or load it there, or name corral-node)"
                        ),
                    ));
                }
                image.to_owned()
            }
            _ => NodeImage::ensure(&self.docker).await?,
        };
        // The image first: a refused image must leave no network behind.
        let network = self.ensure_network(node, cluster, spec).await?;
        let host_key = ClientKeyPair::generate(&format!("corral node {node}"))
            .map_err(|error| docker_failure(node, "make a host key", error))?;
        let (client_key_path, client_public_key) = self
            .node_keys
            .ensure(&Self::node_key_name(node), &format!("corral client {node}"))
            .await?;

        let labels = labels(spec, cluster);
        let port_bindings = HashMap::from([(
            SSH_PORT.to_owned(),
            Some(vec![PortBinding {
                host_ip: Some("127.0.0.1".to_owned()),
                host_port: Some(String::new()),
            }]),
        )]);
        let body = ContainerCreateBody {
            image: Some(image.clone()),
            hostname: Some(format!("node-{}", node_number(node))),
            cmd: Some(vec![
                "/bin/sh".to_owned(),
                "-c".to_owned(),
                format!(
                    "mkdir -p /run/sshd && chmod 0600 /{HOST_KEY_IN_CONTAINER} && \
                     exec /usr/sbin/sshd -D -e -o HostKey=/{HOST_KEY_IN_CONTAINER} \
                     -o PasswordAuthentication=no -o PermitRootLogin=prohibit-password \
                     -o TrustedUserCAKeys=/{USER_CA_IN_CONTAINER} \
                     -o AuthorizedPrincipalsFile=/{PRINCIPALS_IN_CONTAINER}"
                ),
            ]),
            exposed_ports: Some(vec![SSH_PORT.to_owned()]),
            labels: Some(labels),
            host_config: Some(HostConfig {
                memory: Some(applied.memory_bytes),
                // The same as the memory: no swap beyond the limit.
                memory_swap: Some(applied.memory_bytes),
                nano_cpus: Some(applied.nano_cpus),
                pids_limit: Some(applied.pids),
                port_bindings: Some(port_bindings),
                network_mode: Some(network.clone()),
                privileged: Some(false),
                ..HostConfig::default()
            }),
            ..ContainerCreateBody::default()
        };
        self.docker
            .create_container(
                Some(CreateContainerOptions {
                    name: Some(container.clone()),
                    ..CreateContainerOptions::default()
                }),
                body,
            )
            .await
            .map_err(self.engine_error(node, "create the container"))?;
        let keys = key_files(
            &host_key,
            &client_public_key,
            &UserCaFiles::of(spec, cluster),
        )
        .map_err(|error| docker_failure(node, "pack the node's keys", error))?;
        self.docker
            .upload_to_container(
                &container,
                Some(UploadToContainerOptions {
                    path: "/".to_owned(),
                    ..UploadToContainerOptions::default()
                }),
                bollard::body_full(keys.into()),
            )
            .await
            .map_err(self.engine_error(node, "copy the node's keys in"))?;
        self.docker
            .start_container(&container, None)
            .await
            .map_err(self.engine_error(node, "start the container"))?;
        let (port, address) = self.reach(node, &container, &network).await?;
        let host_key = HostKey::from_openssh(&host_key.public_openssh)
            .map_err(|error| docker_failure(node, "read the host key back", error))?;
        Ok(NodeRecord {
            id: node.to_owned(),
            provider: DOCKER_PROVIDER.to_owned(),
            host: "127.0.0.1".to_owned(),
            port,
            user: "root".to_owned(),
            host_key,
            client_key_path,
            provider_state: serde_json::to_value(DockerNodeState {
                container,
                cluster: cluster.to_owned(),
                network,
                image,
            })
            .unwrap_or_default(),
            address: Some(address),
        })
    }

    /// The id of the cluster's network, made with its labels if it is not there yet.
    ///
    /// Older engines let two networks share a name, so a network is found by its
    /// cluster label and the oldest one wins: nodes made at the same moment by several
    /// workers all join the same one, and an extra empty one goes with the cluster.
    async fn ensure_network(
        &self,
        node: &str,
        cluster: &str,
        spec: &NodeSpec,
    ) -> Result<String, ProviderError> {
        // This process's creates take turns, so they make at most one network.
        static MAKING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
        let _turn = MAKING.lock().await;
        if let Some(id) = self
            .cluster_networks(node, cluster)
            .await?
            .into_iter()
            .next()
        {
            return Ok(id);
        }
        self.docker
            .create_network(NetworkCreateRequest {
                name: network_name(cluster),
                driver: Some("bridge".to_owned()),
                labels: Some(labels(spec, cluster)),
                ..NetworkCreateRequest::default()
            })
            .await
            .map_err(self.engine_error(node, "make the cluster's network"))?;
        self.cluster_networks(node, cluster)
            .await?
            .into_iter()
            .next()
            .ok_or_else(|| {
                docker_failure(node, "make the cluster's network", "it vanished once made")
            })
    }

    /// The ids of the cluster's networks, oldest first.
    async fn cluster_networks(
        &self,
        node: &str,
        cluster: &str,
    ) -> Result<Vec<String>, ProviderError> {
        let mut networks: Vec<(String, String)> = self
            .docker
            .list_networks(Some(ListNetworksOptions {
                filters: Some(HashMap::from([(
                    "label".to_owned(),
                    vec![format!("{LABEL_CLUSTER}={cluster}")],
                )])),
            }))
            .await
            .map_err(self.engine_error(node, "list the cluster's networks"))?
            .into_iter()
            .filter_map(|network| {
                let created = network.created.map(|at| at.to_string()).unwrap_or_default();
                Some((created, network.id?))
            })
            .collect();
        networks.sort();
        Ok(networks.into_iter().map(|(_, id)| id).collect())
    }

    /// How the container is reached: the loopback port Docker published its sshd on,
    /// and its address on the cluster's network (as Docker reports it).
    async fn reach(
        &self,
        node: &str,
        container: &str,
        network: &str,
    ) -> Result<(u16, String), ProviderError> {
        let inspected = self
            .docker
            .inspect_container(container, None)
            .await
            .map_err(self.engine_error(node, "inspect the container"))?;
        let settings = inspected.network_settings.unwrap_or_default();
        let port = settings
            .ports
            .and_then(|ports| ports.get(SSH_PORT).cloned().flatten())
            .into_iter()
            .flatten()
            .filter(|binding| binding.host_ip.as_deref() == Some("127.0.0.1"))
            .find_map(|binding| binding.host_port.and_then(|port| port.parse().ok()))
            .ok_or_else(|| {
                docker_failure(
                    node,
                    "publish sshd on 127.0.0.1",
                    "the container has no published port for 22/tcp",
                )
            })?;
        let address = settings
            .networks
            .unwrap_or_default()
            .into_values()
            .find(|endpoint| endpoint.network_id.as_deref() == Some(network))
            .and_then(|endpoint| endpoint.ip_address)
            .filter(|address| !address.is_empty())
            .ok_or_else(|| {
                docker_failure(
                    node,
                    "give the container an address",
                    format!("it has none on network {network}"),
                )
            })?;
        Ok((port, address))
    }

    async fn remove_container(&self, node: &str, container: &str) -> Result<(), ProviderError> {
        let removed = self
            .docker
            .remove_container(
                container,
                Some(RemoveContainerOptions {
                    force: true,
                    v: true,
                    ..RemoveContainerOptions::default()
                }),
            )
            .await;
        match removed {
            Ok(()) => Ok(()),
            Err(error) if is_not_found(&error) => Ok(()),
            Err(error) => Err(self.engine_error(node, "remove the container")(error)),
        }
    }

    async fn delete_node(&self, record: &NodeRecord) -> Result<(), ProviderError> {
        let state = state_of(record)?;
        self.wait_for_engine(&record.id).await?;
        self.remove_container(&record.id, &state.container).await?;
        // The node's own key (nodes made before keys were per node share one, kept).
        self.node_keys
            .forget(&Self::node_key_name(&record.id))
            .await?;
        // The cluster's networks go with its last node.
        for network in self.cluster_networks(&record.id, &state.cluster).await? {
            let in_use = match self
                .docker
                .inspect_network(&network, None::<InspectNetworkOptions>)
                .await
            {
                Ok(network) => network
                    .containers
                    .is_some_and(|containers| !containers.is_empty()),
                Err(error) if is_not_found(&error) => continue,
                Err(error) => {
                    let failed = self.engine_error(&record.id, "look up the cluster's network");
                    return Err(failed(error));
                }
            };
            if in_use {
                continue;
            }
            match self.docker.remove_network(&network).await {
                Ok(()) => {}
                // A node made meanwhile joined it, or another delete removed it.
                Err(error) if is_not_found(&error) || is_in_use(&error) => {}
                Err(error) => {
                    let failed = self.engine_error(&record.id, "remove the cluster's network");
                    return Err(failed(error));
                }
            }
        }
        Ok(())
    }

    /// Gone when the node's container was removed or is no longer running.
    async fn container_presence(&self, record: &NodeRecord) -> Result<NodePresence, ProviderError> {
        let state = state_of(record)?;
        match self.docker.inspect_container(&state.container, None).await {
            Ok(inspected) => {
                let running = inspected
                    .state
                    .and_then(|state| state.running)
                    .unwrap_or(false);
                Ok(if running {
                    NodePresence::Present
                } else {
                    NodePresence::Gone
                })
            }
            Err(error) if is_not_found(&error) => Ok(NodePresence::Gone),
            Err(error) => Err(self.engine_error(&record.id, "inspect the container")(
                error,
            )),
        }
    }

    /// Stops the node's container (`docker stop`), keeping it and its files for
    /// [`Self::adopt_node`] to start again. Its published port is freed meanwhile.
    async fn suspend_node(&self, record: &NodeRecord) -> Result<Suspended, ProviderError> {
        let state = state_of(record)?;
        match self.docker.stop_container(&state.container, None).await {
            Ok(()) => Ok(Suspended::Stopped),
            // 304: it was not running.
            Err(error) if status_of(&error) == Some(304) => Ok(Suspended::Stopped),
            Err(error) if is_not_found(&error) => Err(ProviderError::ContainerGone {
                node: record.id.clone(),
                container: state.container,
            }),
            Err(error) => Err(docker_error(&record.id, "stop the container")(error)),
        }
    }

    async fn adopt_node(&self, record: &NodeRecord) -> Result<NodeRecord, ProviderError> {
        let state = state_of(record)?;
        self.wait_for_engine(&record.id).await?;
        let inspected = match self.docker.inspect_container(&state.container, None).await {
            Ok(inspected) => inspected,
            Err(error) if is_not_found(&error) => {
                return Err(ProviderError::ContainerGone {
                    node: record.id.clone(),
                    container: state.container,
                })
            }
            Err(error) => {
                return Err(self.engine_error(&record.id, "inspect the container")(
                    error,
                ))
            }
        };
        let running = inspected
            .state
            .and_then(|state| state.running)
            .unwrap_or(false);
        if !running {
            self.docker
                .start_container(&state.container, None)
                .await
                .map_err(self.engine_error(&record.id, "restart the container"))?;
        }
        // A restarted container may have been given another port and address.
        let (port, address) = self
            .reach(&record.id, &state.container, &state.network)
            .await?;
        Ok(NodeRecord {
            port,
            address: Some(address),
            ..record.clone()
        })
    }
}

#[async_trait]
impl NodeProvider for DockerProvider {
    fn name(&self) -> &'static str {
        DOCKER_PROVIDER
    }

    async fn create(&self, spec: &NodeSpec) -> Result<NodeRecord, ProviderError> {
        self.create_node(spec).await
    }

    async fn delete(&self, record: &NodeRecord) -> Result<(), ProviderError> {
        self.delete_node(record).await
    }

    async fn adopt(&self, record: &NodeRecord) -> Result<NodeRecord, ProviderError> {
        self.adopt_node(record).await
    }

    async fn check(
        &self,
        tenant_id: &str,
        provider: &ProviderSettings,
    ) -> Result<String, ProviderError> {
        self.check_engine(tenant_id, provider).await
    }

    async fn ssh_target(&self, record: &NodeRecord) -> Result<SshTarget, ProviderError> {
        self.target(record).await
    }

    async fn slow_start(&self, spec: &NodeSpec) -> Result<Option<String>, ProviderError> {
        self.image_to_build(spec).await
    }

    async fn presence(&self, record: &NodeRecord) -> Result<NodePresence, ProviderError> {
        self.container_presence(record).await
    }

    async fn suspend(&self, record: &NodeRecord) -> Result<Suspended, ProviderError> {
        self.suspend_node(record).await
    }

    /// Resuming is adopting: start the container if it is stopped, read its new port.
    async fn resume(&self, record: &NodeRecord) -> Result<NodeRecord, ProviderError> {
        self.adopt_node(record).await
    }
}

/// The container of node `node` (node ids are `<cluster id>-<number>`).
pub fn container_name(node: &str) -> String {
    format!("corral-node-{node}")
}

/// The network of cluster `cluster`.
pub fn network_name(cluster: &str) -> String {
    format!("corral-net-{cluster}")
}

fn node_number(node: &str) -> &str {
    node.rsplit('-').next().unwrap_or(node)
}

/// Node ids become container names: Docker allows `[a-zA-Z0-9][a-zA-Z0-9_.-]*`.
fn check_name(node: &str) -> Result<(), ProviderError> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if node.is_empty() || !node.chars().all(allowed) {
        return Err(ProviderError::InvalidNodeId {
            id: node.to_owned(),
            reason: "docker nodes need letters, digits, '-', '_' or '.'",
        });
    }
    Ok(())
}

fn labels(spec: &NodeSpec, cluster: &str) -> HashMap<String, String> {
    let mut labels = HashMap::from([
        (LABEL_CLUSTER.to_owned(), cluster.to_owned()),
        (LABEL_NODE.to_owned(), spec.id.clone()),
    ]);
    if let Some(tenant) = &spec.tenant_id {
        labels.insert(LABEL_TENANT.to_owned(), tenant.clone());
    }
    labels
}

fn state_of(record: &NodeRecord) -> Result<DockerNodeState, ProviderError> {
    record.state_as(DOCKER_PROVIDER)
}

/// What the container's sshd is told about the tenant's SSH user CA (see
/// `crate::ssh::UserCa`): its key (none: nothing trusted) and the cluster's principal.
struct UserCaFiles {
    ca: String,
    principals: String,
}

impl UserCaFiles {
    fn of(spec: &NodeSpec, cluster: &str) -> Self {
        match &spec.trusted_user_ca {
            Some(ca) => Self {
                ca: format!("{}\n", ca.trim()),
                principals: format!("{}\n", crate::ssh::cluster_principal(cluster)),
            },
            None => Self {
                ca: String::new(),
                principals: String::new(),
            },
        }
    }
}

/// A tar of what the container needs before sshd starts: its host key pair, root's
/// `authorized_keys` with Corral's client key, and the user CA sshd trusts.
fn key_files(
    host_key: &ClientKeyPair,
    client_public_key: &str,
    user_ca: &UserCaFiles,
) -> std::io::Result<Vec<u8>> {
    let mut archive = tar::Builder::new(Vec::new());
    let mut add = |path: &str, mode: u32, bytes: &[u8]| {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(mode);
        header.set_uid(0);
        header.set_gid(0);
        header.set_entry_type(tar::EntryType::Regular);
        archive.append_data(&mut header, path, bytes)
    };
    add(
        HOST_KEY_IN_CONTAINER,
        0o600,
        host_key.private_openssh.as_bytes(),
    )?;
    add(
        &format!("{HOST_KEY_IN_CONTAINER}.pub"),
        0o644,
        format!("{}\n", host_key.public_openssh).as_bytes(),
    )?;
    add(
        "root/.ssh/authorized_keys",
        0o600,
        format!("{client_public_key}\n").as_bytes(),
    )?;
    add(USER_CA_IN_CONTAINER, 0o644, user_ca.ca.as_bytes())?;
    add(
        PRINCIPALS_IN_CONTAINER,
        0o644,
        user_ca.principals.as_bytes(),
    )?;
    archive.into_inner()
}

fn docker_failure(node: &str, action: &'static str, detail: impl ToString) -> ProviderError {
    ProviderError::Docker {
        node: node.to_owned(),
        action,
        detail: detail.to_string(),
    }
}

fn docker_error(
    node: &str,
    action: &'static str,
) -> impl FnOnce(bollard::errors::Error) -> ProviderError {
    let node = node.to_owned();
    move |error| docker_failure(&node, action, describe(&error))
}

/// Why a request failed: the engine's own message where it sent one; where it did not
/// answer at all, that, naming the engine's socket (an operator's first question).
fn engine_detail(endpoint: &str, error: &bollard::errors::Error) -> String {
    if is_unreachable(error) {
        format!(
            "the Docker engine at {endpoint} does not answer ({}); is dockerd running?",
            with_causes(error)
        )
    } else {
        describe(error)
    }
}

/// The error and its causes, `: `-separated (a connection error's own text says only
/// "client error (Connect)"; its cause says the socket is missing or refused).
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// Whether the request never got an answer from the engine: its socket is missing or
/// refuses connections, or the connection broke or timed out (the engine stopped or is
/// restarting), as opposed to an answer refusing the request.
fn is_unreachable(error: &bollard::errors::Error) -> bool {
    use bollard::errors::Error;
    matches!(
        error,
        Error::SocketNotFoundError(_)
            | Error::HyperLegacyError { .. }
            | Error::HyperResponseError { .. }
            | Error::HttpClientError { .. }
            | Error::IOError { .. }
            | Error::RequestTimeoutError
    )
}

/// The engine's own message where it sent one, else the client's.
fn describe(error: &bollard::errors::Error) -> String {
    match error {
        bollard::errors::Error::DockerResponseServerError { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

fn status_of(error: &bollard::errors::Error) -> Option<u16> {
    match error {
        bollard::errors::Error::DockerResponseServerError { status_code, .. } => Some(*status_code),
        _ => None,
    }
}

fn is_not_found(error: &bollard::errors::Error) -> bool {
    status_of(error) == Some(404)
}

/// A network with endpoints left is refused with 403 (older engines) or 409.
fn is_in_use(error: &bollard::errors::Error) -> bool {
    matches!(status_of(error), Some(403 | 409))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn node_ids_that_are_not_container_names_are_refused() {
        assert!(check_name("2b0d6b3e-0f7c-4d1c-9d35-6c1f0e0a1b2c-1").is_ok());
        for bad in ["", "a b", "a/b", "a;rm", "ä"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_key_archive_holds_the_host_key_the_client_key_and_the_user_ca_with_tight_modes() {
        let host = ClientKeyPair::generate("host").unwrap();
        let spec = NodeSpec {
            trusted_user_ca: Some("ssh-ed25519 AAAA ca".to_owned()),
            ..NodeSpec::new("n1")
        };
        let user_ca = UserCaFiles::of(&spec, "c1");
        assert_eq!(user_ca.principals, "corral-cluster-c1\n");
        let bytes = key_files(&host, "ssh-ed25519 AAAA client", &user_ca).unwrap();
        let mut archive = tar::Archive::new(bytes.as_slice());
        let entries: Vec<(String, u32)> = archive
            .entries()
            .unwrap()
            .map(|entry| {
                let entry = entry.unwrap();
                (
                    entry.path().unwrap().to_string_lossy().into_owned(),
                    entry.header().mode().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            entries,
            vec![
                ("etc/ssh/ssh_host_ed25519_key".to_owned(), 0o600),
                ("etc/ssh/ssh_host_ed25519_key.pub".to_owned(), 0o644),
                ("root/.ssh/authorized_keys".to_owned(), 0o600),
                ("etc/ssh/corral_user_ca.pub".to_owned(), 0o644),
                ("etc/ssh/corral_principals".to_owned(), 0o644),
            ]
        );
    }
}
