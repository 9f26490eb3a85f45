//! Node providers: where nodes come from and where they go.
//!
//! A [`NodeProvider`] creates a node from a [`NodeSpec`] and returns a [`NodeRecord`]: plain
//! serialisable data the engine stores before it runs anything on the node, so a crash or a
//! retry can always find (and adopt or delete) what was made. `local` runs each node as its
//! own OpenSSH `sshd` on a loopback port; `ssh-pool` lends out hosts a tenant's admins registered;
//! `docker` runs containers; `ec2` makes instances of Amazon EC2 or a cloud speaking its API;
//! `exec` hands each call to an operator-installed plugin program (docs/providers.md
//! describes the boundary and the plugin protocol).

pub mod binding;
mod client_keys;
mod confirm;
mod docker;
mod ec2;
mod error;
mod exec;
mod local;
pub use local::tenant_host_user;
mod private_files;
mod record;
mod scrub;
mod ssh_pool;

use std::time::Duration;

use async_trait::async_trait;

pub use binding::CredentialBinding;
pub use confirm::wait_for_ssh;
pub use docker::{
    container_name, network_name, AppliedLimits, DockerLimits, DockerNodeState, DockerProvider,
    NodeImage, DOCKER_PROVIDER, NODE_IMAGE, NODE_IMAGE_PACKAGES,
};
pub use ec2::{
    first_text as xml_first_text, group_name as ec2_group_name, key_name as ec2_key_name, ApiError,
    Connect, Ec2NodeState, Ec2Provider, HostKeySource, Params, QueryClient, EC2_PROVIDER,
    EC2_VERSION, IAM_VERSION,
};
pub use error::ProviderError;
pub use exec::{
    check_plugin_name, shares_client_key, tenant_key_name, ErrorCode, ExecNodeState, ExecOp,
    ExecProvider, EXEC_PROVIDER, MAX_STDOUT, PROTOCOL_VERSION, STDERR_TAIL,
};
pub use local::{
    process_ids, LocalNodeState, LocalProvider, NodeIsolation, DEFAULT_NODE_HOMES, LOCAL_PROVIDER,
};
pub use private_files::create_private_dir;
pub use record::{
    provider_settings, NodeRecord, NodeSpec, ProviderSettings, ResourceLimits,
    USER_CREDENTIALS_SETTING,
};
pub use scrub::{Scrubber, BLOT};
pub use ssh_pool::{PoolNodeState, SshPoolProvider, SSH_POOL_PROVIDER};
pub use store::credentials::{Credentials, CredentialsError};

use crate::ssh::{SessionPool, SshTarget};

/// A node's machine as its provider sees it (the same words the API shows).
pub use api_types::NodePresence;

/// What [`NodeProvider::suspend`] did with a node's machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suspended {
    /// The machine is stopped and kept (its disk, its identity), to be resumed.
    Stopped,
    /// This provider cannot stop machines: it keeps running (its services are stopped).
    KeptRunning,
}

/// Whether a lease's stop also stops the machines of a cluster of `providertype`
/// (containers stopped, instances stopped), and its extension starts them first. Local
/// nodes are processes of this machine and pool hosts are lent, not Corral's to power
/// off: their services stop only. Exec plugins have no such op (yet). Deciding this
/// from the type lets a job's plan show the machine steps only where they do something.
pub fn suspends_machines(providertype: &str) -> bool {
    matches!(providertype, DOCKER_PROVIDER | EC2_PROVIDER)
}

/// Creates, confirms, deletes and re-adopts nodes. Every method is safe to retry.
///
/// Every provider implements it the same way: `#[async_trait]` on the `impl`, `async fn`s
/// for what it does differently from the defaults. `async_trait` boxes each future, as
/// `dyn NodeProvider` (providers chosen at run time from a catalog's provider type)
/// needs.
#[async_trait]
pub trait NodeProvider: Send + Sync {
    /// The provider's name as stored in [`NodeRecord::provider`].
    fn name(&self) -> &'static str;

    /// Makes the node, or returns the existing one if a node with this id was already made
    /// (a retried task must not make a second node).
    async fn create(&self, spec: &NodeSpec) -> Result<NodeRecord, ProviderError>;

    /// Waits until the node accepts SSH with its pinned host key and the client key, leaving
    /// the authenticated session in `pool` for the node's next tasks. Every provider whose
    /// nodes are reached over SSH as [`NodeProvider::ssh_target`] says can keep this.
    async fn confirm(
        &self,
        record: &NodeRecord,
        pool: &SessionPool,
        timeout: Duration,
    ) -> Result<(), ProviderError> {
        let target = self.ssh_target(record).await?;
        wait_for_ssh(&target, pool, timeout).await
    }

    /// Destroys the node and everything running on it. Deleting a deleted node succeeds.
    async fn delete(&self, record: &NodeRecord) -> Result<(), ProviderError>;

    /// Takes over a node recorded by an earlier process: checks it is still there and
    /// running, restarting what it can. The returned record replaces the stored one (an
    /// address may change).
    async fn adopt(&self, record: &NodeRecord) -> Result<NodeRecord, ProviderError>;

    /// Checks, without making anything, that `provider` can make nodes for `tenant_id`
    /// (its engine or endpoint answers, its credentials are accepted), and says in a
    /// few words what was checked. What `corral provider test` runs first.
    async fn check(
        &self,
        tenant_id: &str,
        provider: &ProviderSettings,
    ) -> Result<String, ProviderError> {
        let _ = (tenant_id, provider);
        Ok(format!(
            "the {} provider has nothing to check before making a node",
            self.name()
        ))
    }

    /// Whether making `spec`'s node must first do something slow that happens once
    /// (building an image), said in a few words for the create step's output before
    /// the wait. `None` when the node comes at its usual speed.
    async fn slow_start(&self, spec: &NodeSpec) -> Result<Option<String>, ProviderError> {
        let _ = spec;
        Ok(None)
    }

    /// What the user should know about a node just made, for the create step's output:
    /// e.g. that its host key was trusted on first use because the machine did not
    /// publish it.
    fn creation_note(&self, record: &NodeRecord) -> Option<String> {
        let _ = record;
        None
    }

    /// Whether the node's machine is still there, as its provider sees it, without
    /// changing anything: what healing reads to replace nodes that died.
    async fn presence(&self, record: &NodeRecord) -> Result<NodePresence, ProviderError> {
        let _ = record;
        Ok(NodePresence::Unknown)
    }

    /// Stops the node's machine and keeps it, for a lease's grace; stopping a stopped
    /// machine succeeds. Providers that cannot (the default) keep it running.
    async fn suspend(&self, record: &NodeRecord) -> Result<Suspended, ProviderError> {
        let _ = record;
        Ok(Suspended::KeptRunning)
    }

    /// Starts a suspended node's machine again (a running one is left as it is); the
    /// returned record replaces the stored one, since a restarted machine may have
    /// another port or address. The default: the record as it is.
    async fn resume(&self, record: &NodeRecord) -> Result<NodeRecord, ProviderError> {
        Ok(record.clone())
    }

    /// Whether Corral connects to `record`'s machine over SSH. A cloud provider may be
    /// set not to (to check an account, or against an emulator whose addresses are
    /// made up); its nodes then cannot run steps.
    fn connects(&self, record: &NodeRecord) -> bool {
        let _ = record;
        true
    }

    /// How this process connects to the node. A record names the client key file of the
    /// process that made the node; a provider whose keys live in the store (the pool)
    /// points this process at its own copy, so that a `corral worker` on another machine
    /// reaches the same nodes.
    async fn ssh_target(&self, record: &NodeRecord) -> Result<SshTarget, ProviderError> {
        Ok(record.ssh_target())
    }
}
