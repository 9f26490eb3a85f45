//! The `ssh-pool` provider: hosts an administrator already runs (address, user, key, host
//! key), checked out as nodes and returned on delete.
//!
//! Which host serves which node lives in memory; after a restart the engine re-adopts its
//! stored records, which checks the hosts out again. Delete returns the host without
//! touching what runs on it: the pool's hosts are the administrator's, not Corral's.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{NodeProvider, NodeRecord, NodeSpec, ProviderError, ProviderFuture};
use crate::ssh::{HostKey, SessionPool};

/// The name `ssh-pool` nodes carry in [`NodeRecord::provider`].
pub const SSH_POOL_PROVIDER: &str = "ssh-pool";

/// One host of the pool, as the administrator configured it. The host key is required:
/// it is what every connection is checked against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolHost {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub host_key: HostKey,
    pub client_key_path: PathBuf,
}

impl PoolHost {
    fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// What the pool keeps in [`NodeRecord::provider_state`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolNodeState {
    /// `host:port` of the checked-out host.
    pub address: String,
}

/// Lends the configured hosts out as nodes, one node per host at a time.
#[derive(Debug)]
pub struct SshPoolProvider {
    hosts: Vec<PoolHost>,
    /// Host address → the node id it is checked out to.
    checked_out: Mutex<HashMap<String, String>>,
}

impl SshPoolProvider {
    pub fn new(hosts: Vec<PoolHost>) -> Self {
        Self {
            hosts,
            checked_out: Mutex::new(HashMap::new()),
        }
    }

    /// Hosts not checked out to any node.
    pub fn free_hosts(&self) -> usize {
        let checked_out = self.lock();
        self.hosts
            .iter()
            .filter(|host| !checked_out.contains_key(&host.address()))
            .count()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        // The map is replaced entry by entry, so a panicking holder leaves it consistent.
        self.checked_out
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn record_for(&self, id: &str, host: &PoolHost) -> NodeRecord {
        NodeRecord {
            id: id.to_owned(),
            provider: SSH_POOL_PROVIDER.to_owned(),
            host: host.host.clone(),
            port: host.port,
            user: host.user.clone(),
            host_key: host.host_key.clone(),
            client_key_path: host.client_key_path.clone(),
            provider_state: serde_json::to_value(PoolNodeState {
                address: host.address(),
            })
            .unwrap_or(serde_json::Value::Null),
        }
    }

    fn check_out(&self, spec: &NodeSpec) -> Result<NodeRecord, ProviderError> {
        if spec.id.is_empty() {
            return Err(ProviderError::InvalidNodeId {
                id: spec.id.clone(),
                reason: "it is empty",
            });
        }
        let mut checked_out = self.lock();
        let mine = |host: &&PoolHost| checked_out.get(&host.address()) == Some(&spec.id);
        if let Some(host) = self.hosts.iter().find(mine) {
            return Ok(self.record_for(&spec.id, host));
        }
        let free = self
            .hosts
            .iter()
            .find(|host| !checked_out.contains_key(&host.address()));
        match free {
            Some(host) => {
                checked_out.insert(host.address(), spec.id.clone());
                Ok(self.record_for(&spec.id, host))
            }
            None => Err(ProviderError::PoolExhausted {
                node: spec.id.clone(),
                hosts: self.hosts.len(),
            }),
        }
    }

    fn host_of(&self, record: &NodeRecord) -> Result<&PoolHost, ProviderError> {
        if record.provider != SSH_POOL_PROVIDER {
            return Err(ProviderError::WrongProvider {
                node: record.id.clone(),
                expected: SSH_POOL_PROVIDER.to_owned(),
                found: record.provider.clone(),
            });
        }
        let state: PoolNodeState =
            serde_json::from_value(record.provider_state.clone()).map_err(|error| {
                ProviderError::BadRecord {
                    node: record.id.clone(),
                    reason: format!("provider_state: {error}"),
                }
            })?;
        self.hosts
            .iter()
            .find(|host| host.address() == state.address)
            .ok_or_else(|| ProviderError::BadRecord {
                node: record.id.clone(),
                reason: format!("host {} is no longer in the pool", state.address),
            })
    }

    fn readopt(&self, record: &NodeRecord) -> Result<NodeRecord, ProviderError> {
        let host = self.host_of(record)?;
        if host.host_key != record.host_key {
            return Err(ProviderError::HostKeyChanged {
                node: record.id.clone(),
                pinned: record.host_key.fingerprint(),
                current: host.host_key.fingerprint(),
            });
        }
        let mut checked_out = self.lock();
        match checked_out.get(&host.address()) {
            Some(owner) if owner != &record.id => Err(ProviderError::HostInUse {
                node: record.id.clone(),
                address: host.address(),
                owner: owner.clone(),
            }),
            _ => {
                checked_out.insert(host.address(), record.id.clone());
                Ok(self.record_for(&record.id, host))
            }
        }
    }

    fn give_back(&self, record: &NodeRecord) -> Result<(), ProviderError> {
        let host = self.host_of(record)?;
        let mut checked_out = self.lock();
        if checked_out.get(&host.address()) == Some(&record.id) {
            checked_out.remove(&host.address());
        }
        Ok(())
    }
}

impl NodeProvider for SshPoolProvider {
    fn name(&self) -> &'static str {
        SSH_POOL_PROVIDER
    }

    fn create<'a>(&'a self, spec: &'a NodeSpec) -> ProviderFuture<'a, NodeRecord> {
        Box::pin(async move { self.check_out(spec) })
    }

    fn confirm<'a>(
        &'a self,
        record: &'a NodeRecord,
        pool: &'a SessionPool,
        timeout: Duration,
    ) -> ProviderFuture<'a, ()> {
        Box::pin(super::wait_for_ssh(record, pool, timeout))
    }

    fn delete<'a>(&'a self, record: &'a NodeRecord) -> ProviderFuture<'a, ()> {
        Box::pin(async move { self.give_back(record) })
    }

    fn adopt<'a>(&'a self, record: &'a NodeRecord) -> ProviderFuture<'a, NodeRecord> {
        Box::pin(async move { self.readopt(record) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYS: [&str; 2] = [
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMjL5g2tLCXY/mxtwGZ1QuYVzyZ8Z7reMrGN53ioWB2o",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDOC86Td3sPr+4F7plqy0iowqGWUohYI3LaPNaJRWysz",
    ];

    fn host(index: usize) -> PoolHost {
        PoolHost {
            host: "10.0.0.1".to_owned(),
            port: 22 + index as u16,
            user: "corral".to_owned(),
            host_key: HostKey::from_openssh(KEYS[index]).unwrap(),
            client_key_path: PathBuf::from("/etc/corral/pool_key"),
        }
    }

    fn pool() -> SshPoolProvider {
        SshPoolProvider::new(vec![host(0), host(1)])
    }

    #[test]
    fn hosts_are_checked_out_once_and_returned() {
        let pool = pool();
        let a = pool.check_out(&NodeSpec::new("a")).unwrap();
        assert_eq!(
            pool.check_out(&NodeSpec::new("a")).unwrap(),
            a,
            "idempotent"
        );
        let b = pool.check_out(&NodeSpec::new("b")).unwrap();
        assert_ne!(a.port, b.port);
        assert_eq!(pool.free_hosts(), 0);
        let error = pool.check_out(&NodeSpec::new("c")).unwrap_err();
        assert!(
            matches!(error, ProviderError::PoolExhausted { hosts: 2, .. }),
            "{error}"
        );
        pool.give_back(&a).unwrap();
        pool.give_back(&a).unwrap();
        let c = pool.check_out(&NodeSpec::new("c")).unwrap();
        assert_eq!(c.port, a.port);
        assert_eq!(c.host_key, a.host_key);
    }

    #[test]
    fn adoption_restores_checkouts_and_checks_the_host_key() {
        let record = pool().check_out(&NodeSpec::new("a")).unwrap();
        let restarted = pool();
        assert_eq!(restarted.readopt(&record).unwrap(), record);
        assert_eq!(restarted.free_hosts(), 1);
        let error = restarted
            .check_out(&NodeSpec::new("b"))
            .and_then(|b| {
                restarted.readopt(&NodeRecord {
                    id: "x".to_owned(),
                    ..b
                })
            })
            .unwrap_err();
        assert!(matches!(error, ProviderError::HostInUse { .. }), "{error}");

        let mut changed = record.clone();
        changed.host_key = HostKey::from_openssh(KEYS[1]).unwrap();
        let error = pool().readopt(&changed).unwrap_err();
        assert!(
            matches!(error, ProviderError::HostKeyChanged { .. }),
            "{error}"
        );
    }
}
