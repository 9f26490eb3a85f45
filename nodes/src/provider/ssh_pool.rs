//! The `ssh-pool` provider: hosts a tenant's admins registered (address, user, pinned host
//! key, and a key pair Corral made for the host), lent out as nodes and returned on delete.
//!
//! Which host serves which node lives in the store (`pool_hosts.checked_out_node`), so
//! every process sharing the database sees the same lending: a check-out is one
//! conditional UPDATE, a retried creation gets the host its node already holds, and
//! re-adoption after a restart finds the host still checked out to its node. The client private key
//! is written to a 0600 file under the provider's key directory when a node is made or
//! adopted, because connections load keys from files, and by any other process (a
//! `corral worker` elsewhere) the first time it connects to the node. Delete returns the host without
//! touching what runs on it: the pool's hosts are the administrator's, not Corral's.

use std::path::PathBuf;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::private_files::{create_private_dir, write_private_file};
use super::{NodeProvider, NodeRecord, NodeSpec, ProviderError};
use crate::ssh::{ClientKey, HostKey, SshTarget};
use store::pool_hosts::PoolHost;
use store::{now_ms, Store, StoreError};

// The name `ssh-pool` nodes carry in [`NodeRecord::provider`].
pub use domain::catalog::SSH_POOL_PROVIDER;

/// What the pool keeps in [`NodeRecord::provider_state`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolNodeState {
    /// The `pool_hosts` row lent to the node.
    pub host_id: String,
    /// `host:port` of the checked-out host, for people reading the record.
    pub address: String,
}

/// Lends a tenant's registered hosts out as nodes, one node per host at a time.
#[derive(Debug, Clone)]
pub struct SshPoolProvider {
    store: Store,
    keys_dir: PathBuf,
}

impl SshPoolProvider {
    /// A pool over `store`'s hosts, writing client keys under `keys_dir` (made 0700).
    pub fn new(store: Store, keys_dir: impl Into<PathBuf>) -> Result<Self, ProviderError> {
        let keys_dir = keys_dir.into();
        create_private_dir(&keys_dir)?;
        Ok(Self { store, keys_dir })
    }

    fn store_error(node: &str) -> impl FnOnce(StoreError) -> ProviderError + '_ {
        move |source| ProviderError::PoolStore {
            node: node.to_owned(),
            source,
        }
    }

    /// Where this process keeps the client key of pool host `host_id`.
    fn key_path(&self, host_id: &str) -> PathBuf {
        self.keys_dir.join(format!("{host_id}.key"))
    }

    /// The record's target with this process's copy of the host's client key, written
    /// from the store first when this process has none (the node was made elsewhere).
    async fn target(&self, record: &NodeRecord) -> Result<SshTarget, ProviderError> {
        let state = Self::state_of(record)?;
        let path = self.key_path(&state.host_id);
        if !path.is_file() {
            let client_key = self
                .store
                .pool_host_client_key(&state.host_id)
                .await
                .map_err(Self::store_error(&record.id))?;
            write_private_file(&path, client_key.as_bytes())?;
        }
        let mut target = record.ssh_target();
        target.client_key = ClientKey::at(path);
        Ok(target)
    }

    /// The record of `node` on `host`, with the host's client key written out.
    async fn record_for(&self, node: &str, host: &PoolHost) -> Result<NodeRecord, ProviderError> {
        let host_key =
            HostKey::from_openssh(&host.host_key).map_err(|error| ProviderError::BadRecord {
                node: node.to_owned(),
                reason: format!("pool host {}: {error}", host.name),
            })?;
        let client_key = self
            .store
            .pool_host_client_key(&host.id)
            .await
            .map_err(Self::store_error(node))?;
        let client_key_path = self.key_path(&host.id);
        write_private_file(&client_key_path, client_key.as_bytes())?;
        Ok(NodeRecord {
            id: node.to_owned(),
            provider: SSH_POOL_PROVIDER.to_owned(),
            host: host.host.clone(),
            port: host.port,
            user: host.user.clone(),
            host_key,
            client_key_path,
            provider_state: serde_json::to_value(PoolNodeState {
                host_id: host.id.clone(),
                address: host.address(),
            })
            .unwrap_or(serde_json::Value::Null),
            address: None,
        })
    }

    async fn check_out(&self, spec: &NodeSpec) -> Result<NodeRecord, ProviderError> {
        if spec.id.is_empty() {
            return Err(ProviderError::InvalidNodeId {
                id: spec.id.clone(),
                reason: "it is empty",
            });
        }
        let tenant_id = spec
            .tenant_id
            .as_deref()
            .ok_or_else(|| ProviderError::NoTenant {
                node: spec.id.clone(),
            })?;
        let lent = self
            .store
            .check_out_pool_host(tenant_id, &spec.id, now_ms())
            .await
            .map_err(Self::store_error(&spec.id))?;
        match lent {
            Some(host) => self.record_for(&spec.id, &host).await,
            None => {
                let hosts = self
                    .store
                    .count_pool_hosts(tenant_id)
                    .await
                    .map_err(Self::store_error(&spec.id))?;
                Err(match hosts {
                    0 => ProviderError::PoolEmpty {
                        node: spec.id.clone(),
                    },
                    hosts => ProviderError::PoolExhausted {
                        node: spec.id.clone(),
                        hosts: usize::try_from(hosts).unwrap_or(usize::MAX),
                    },
                })
            }
        }
    }

    fn state_of(record: &NodeRecord) -> Result<PoolNodeState, ProviderError> {
        record.state_as(SSH_POOL_PROVIDER)
    }

    async fn readopt(&self, record: &NodeRecord) -> Result<NodeRecord, ProviderError> {
        let state = Self::state_of(record)?;
        let host = match self.store.pool_host(&state.host_id).await {
            Ok(host) => host,
            Err(StoreError::NotFound(_)) => {
                return Err(ProviderError::BadRecord {
                    node: record.id.clone(),
                    reason: format!("pool host {} is no longer registered", state.address),
                })
            }
            Err(error) => return Err(Self::store_error(&record.id)(error)),
        };
        let registered =
            HostKey::from_openssh(&host.host_key).map_err(|error| ProviderError::BadRecord {
                node: record.id.clone(),
                reason: format!("pool host {}: {error}", host.name),
            })?;
        if registered != record.host_key {
            return Err(ProviderError::HostKeyChanged {
                node: record.id.clone(),
                pinned: record.host_key.fingerprint(),
                current: registered.fingerprint(),
            });
        }
        // The table, not the record, says who holds the host. A free host is not
        // claimed back: its node was deleted (perhaps by another process right now), and
        // claiming it would lend the host to a node that no longer exists.
        match host.checked_out_node.as_deref() {
            Some(owner) if owner == record.id => self.record_for(&record.id, &host).await,
            Some(owner) => Err(ProviderError::HostInUse {
                node: record.id.clone(),
                address: host.address(),
                owner: owner.to_owned(),
            }),
            None => Err(ProviderError::BadRecord {
                node: record.id.clone(),
                reason: format!(
                    "pool host {} ({}) was returned; the node no longer holds it",
                    host.name,
                    host.address()
                ),
            }),
        }
    }

    async fn give_back(&self, record: &NodeRecord) -> Result<(), ProviderError> {
        let state = Self::state_of(record)?;
        // The key file goes first: once the row is free another node may be lent the
        // host and write the file again. Only this process's copy: another machine's
        // stays until that machine returns the host or is cleaned up.
        let path = self.key_path(&state.host_id);
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(ProviderError::Io {
                    action: "cannot remove the pool key",
                    path,
                    source,
                })
            }
        }
        self.store
            .return_pool_host(&record.id)
            .await
            .map_err(Self::store_error(&record.id))
    }
}

#[async_trait]
impl NodeProvider for SshPoolProvider {
    fn name(&self) -> &'static str {
        SSH_POOL_PROVIDER
    }

    async fn create(&self, spec: &NodeSpec) -> Result<NodeRecord, ProviderError> {
        self.check_out(spec).await
    }

    async fn delete(&self, record: &NodeRecord) -> Result<(), ProviderError> {
        self.give_back(record).await
    }

    async fn adopt(&self, record: &NodeRecord) -> Result<NodeRecord, ProviderError> {
        self.readopt(record).await
    }

    async fn ssh_target(&self, record: &NodeRecord) -> Result<SshTarget, ProviderError> {
        self.target(record).await
    }
}
