//! The `local` provider: every node is a real OpenSSH `sshd` on a loopback port, with its
//! own directory (host key, client key, authorized key, home) under a base directory.
//!
//! sshd daemonizes, so nodes outlive the provider object and the process that made them;
//! [`LocalProvider::adopt`] takes them over again from their records. Delete kills the
//! node's sshd and every process started through it, found through /proc.

mod addresses;
mod files;
mod procs;
mod sshd;

use std::collections::{BTreeSet, HashMap};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{NodeProvider, NodeRecord, NodeSpec, ProviderError, ProviderFuture, ResourceLimits};
use crate::ssh::{HostKey, SessionPool};
use crate::sync::lock_unpoisoned;
use files::NodeDir;
use sshd::StartFailure;

/// The name `local` nodes carry in [`NodeRecord::provider`].
pub const LOCAL_PROVIDER: &str = "local";

/// Attempts at finding a port nobody else grabs between our probe and sshd's bind.
const PORT_ATTEMPTS: usize = 8;

/// Rounds of kill-and-rescan in delete: a process may fork between a scan and the kill.
const KILL_ROUNDS: usize = 100;

/// What the local provider keeps in [`NodeRecord::provider_state`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalNodeState {
    pub dir: PathBuf,
    /// The sshd listener's pid, once started.
    pub pid: Option<i32>,
    /// Applied to sshd, so to everything run on the node; kept to restart it alike.
    #[serde(default)]
    pub limits: ResourceLimits,
}

/// Runs nodes as local sshd processes under one base directory.
pub struct LocalProvider {
    base_dir: PathBuf,
    sshd: PathBuf,
    keygen: PathBuf,
    user: String,
    /// Serialises create/adopt/delete per node id, so concurrent retries make one node.
    /// Entries are only added whole, so a panicking holder cannot break the map.
    node_locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl std::fmt::Debug for LocalProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalProvider")
            .field("base_dir", &self.base_dir)
            .field("sshd", &self.sshd)
            .field("user", &self.user)
            .finish()
    }
}

impl LocalProvider {
    /// A provider keeping its nodes under `base_dir` (created if missing), using the
    /// system's sshd; fails with install instructions when there is none.
    pub fn new(base_dir: impl Into<PathBuf>) -> Result<Self, ProviderError> {
        Self::with_sshd(base_dir, sshd::locate_sshd()?)
    }

    /// As [`LocalProvider::new`] with an explicit sshd binary.
    pub fn with_sshd(
        base_dir: impl Into<PathBuf>,
        sshd: impl Into<PathBuf>,
    ) -> Result<Self, ProviderError> {
        let sshd = sshd.into();
        if !sshd.is_file() {
            return Err(ProviderError::SshdMissing {
                looked_for: sshd.display().to_string(),
            });
        }
        let keygen = sshd::locate_tool("ssh-keygen")?;
        let base_dir = absolute_base_dir(base_dir.into())?;
        let user = current_user()?;
        if rustix::process::geteuid().is_root() {
            // sshd refuses to start as root without its privilege separation directory,
            // which lives on a tmpfs that a fresh boot leaves empty.
            let privsep = Path::new("/run/sshd");
            std::fs::create_dir_all(privsep).map_err(|source| ProviderError::Io {
                action: "creating",
                path: privsep.to_owned(),
                source,
            })?;
        }
        Ok(Self {
            base_dir,
            sshd,
            keygen,
            user,
            node_locks: Mutex::new(HashMap::new()),
        })
    }

    pub fn base_dir(&self) -> &Path {
        &self.base_dir
    }

    /// Kills every process of every node under `base_dir` (sshd, sessions, detached
    /// services) without touching records or directories; returns how many were signalled.
    /// Blocking and synchronous so `Drop` guards in tests and tools can call it.
    pub fn kill_everything_under(base_dir: &Path) -> usize {
        let base_dir = base_dir
            .canonicalize()
            .unwrap_or_else(|_| base_dir.to_owned());
        let mut killed = 0;
        for _ in 0..KILL_ROUNDS {
            let victims = procs::processes_under(&base_dir);
            if victims.is_empty() {
                break;
            }
            killed += victims.len();
            procs::kill_all(&victims);
            std::thread::sleep(Duration::from_millis(2));
        }
        killed
    }

    /// A loopback address of its own for a new node.
    fn allocate_address(&self) -> Result<Ipv4Addr, ProviderError> {
        addresses::allocate(&self.addresses_on_disk()).ok_or_else(|| ProviderError::SshdStart {
            node: String::new(),
            detail: "every loopback address in 127.1.0.0/16 is taken".to_owned(),
        })
    }

    fn addresses_on_disk(&self) -> BTreeSet<Ipv4Addr> {
        let Ok(entries) = std::fs::read_dir(&self.base_dir) else {
            return BTreeSet::new();
        };
        entries
            .filter_map(Result::ok)
            .filter_map(|entry| read_record(&NodeDir::new(entry.path())).ok().flatten())
            .filter_map(|record| record.host.parse().ok())
            .collect()
    }

    /// Pids of every live process of every node under `base_dir` (sshd, sessions,
    /// detached services): empty once all nodes there are deleted.
    pub fn processes_under(base_dir: &Path) -> Vec<i32> {
        let base_dir = base_dir
            .canonicalize()
            .unwrap_or_else(|_| base_dir.to_owned());
        procs::processes_under(&base_dir).into_iter().collect()
    }

    fn node_lock(&self, id: &str) -> Arc<tokio::sync::Mutex<()>> {
        lock_unpoisoned(&self.node_locks)
            .entry(id.to_owned())
            .or_default()
            .clone()
    }

    async fn create_node(&self, spec: &NodeSpec) -> Result<NodeRecord, ProviderError> {
        validate_node_id(&spec.id)?;
        let lock = self.node_lock(&spec.id);
        let _guard = lock.lock().await;
        let dir = NodeDir::new(self.base_dir.join(&spec.id));
        if let Some(record) = read_record(&dir)? {
            return self.adopt_locked(&record).await;
        }
        if dir.root.exists() {
            // A create that died before recording the node: nothing was handed out from
            // this directory, so clear it (and anything it started) and start over.
            kill_node_processes(&spec.id, &dir).await?;
            remove_dir(&dir.root)?;
        }
        create_dir(&dir.root)?;
        create_dir(&dir.home())?;
        let host_comment = format!("corral-host-{}", spec.id);
        let client_comment = format!("corral-client-{}", spec.id);
        let (host_key_path, client_key_path) = (dir.host_key(), dir.client_key());
        let (host, client) = tokio::join!(
            sshd::generate_key(&self.keygen, &host_key_path, &host_comment, &spec.id),
            sshd::generate_key(&self.keygen, &client_key_path, &client_comment, &spec.id),
        );
        host?;
        client?;
        copy_file(&dir.client_key_pub(), &dir.authorized_keys())?;
        let host_key = read_host_key(&spec.id, &dir)?;
        let mut record = NodeRecord {
            id: spec.id.clone(),
            provider: LOCAL_PROVIDER.to_owned(),
            host: self.allocate_address()?.to_string(),
            port: 0,
            user: self.user.clone(),
            host_key,
            client_key_path: dir.client_key(),
            provider_state: state_value(&LocalNodeState {
                dir: dir.root.clone(),
                pid: None,
                limits: spec.limits.clone(),
            }),
        };
        self.start_sshd(&mut record, &dir, None).await?;
        tracing::info!(node = %record.id, port = record.port, "local node created");
        Ok(record)
    }

    /// Starts sshd on `preferred_port` if given and free, else on a fresh port, recording
    /// the node (port, pid) before and after so a crash in between leaves it adoptable.
    async fn start_sshd(
        &self,
        record: &mut NodeRecord,
        dir: &NodeDir,
        preferred_port: Option<u16>,
    ) -> Result<(), ProviderError> {
        let mut port = match preferred_port {
            Some(port) => port,
            None => sshd::free_port(&record.host)?,
        };
        for _ in 0..PORT_ATTEMPTS {
            record.port = port;
            write_file(
                &dir.sshd_config(),
                &files::sshd_config(&record.id, dir, &record.host, port, &self.user),
            )?;
            set_pid(record, None);
            write_record(dir, record)?;
            let limits = serde_json::from_value::<LocalNodeState>(record.provider_state.clone())
                .map(|state| state.limits)
                .unwrap_or_default();
            match sshd::start(&self.sshd, dir, &record.id, &limits).await {
                Ok(pid) => {
                    set_pid(record, Some(pid));
                    return write_record(dir, record);
                }
                Err(StartFailure::PortTaken) => port = sshd::free_port(&record.host)?,
                Err(StartFailure::Failed(error)) => return Err(error),
            }
        }
        Err(ProviderError::SshdStart {
            node: record.id.clone(),
            detail: format!("no free port after {PORT_ATTEMPTS} attempts"),
        })
    }

    async fn adopt_node(&self, record: &NodeRecord) -> Result<NodeRecord, ProviderError> {
        let lock = self.node_lock(&record.id);
        let _guard = lock.lock().await;
        self.adopt_locked(record).await
    }

    async fn adopt_locked(&self, record: &NodeRecord) -> Result<NodeRecord, ProviderError> {
        let state = self.state_of(record)?;
        let dir = NodeDir::new(state.dir.clone());
        if !dir.root.is_dir() {
            return Err(ProviderError::NodeGone {
                node: record.id.clone(),
                dir: dir.root,
            });
        }
        let on_disk = read_host_key(&record.id, &dir)?;
        if on_disk != record.host_key {
            return Err(ProviderError::HostKeyChanged {
                node: record.id.clone(),
                pinned: record.host_key.fingerprint(),
                current: on_disk.fingerprint(),
            });
        }
        let mut record = record.clone();
        let config = dir.sshd_config();
        let running = state
            .pid
            .filter(|pid| procs::is_node_sshd(*pid, &config))
            .or_else(|| sshd::read_pid(&dir).filter(|pid| procs::is_node_sshd(*pid, &config)))
            .or_else(|| procs::find_node_sshd(&config));
        match running {
            Some(pid) => {
                set_pid(&mut record, Some(pid));
                write_record(&dir, &record)?;
            }
            None => {
                let port = record.port;
                self.start_sshd(&mut record, &dir, (port != 0).then_some(port))
                    .await?;
            }
        }
        Ok(record)
    }

    async fn delete_node(&self, record: &NodeRecord) -> Result<(), ProviderError> {
        let state = self.state_of(record)?;
        let lock = self.node_lock(&record.id);
        let _guard = lock.lock().await;
        let dir = NodeDir::new(state.dir);
        kill_node_processes(&record.id, &dir).await?;
        remove_dir(&dir.root)?;
        addresses::release(&record.host);
        tracing::info!(node = %record.id, "local node deleted");
        Ok(())
    }

    fn state_of(&self, record: &NodeRecord) -> Result<LocalNodeState, ProviderError> {
        if record.provider != LOCAL_PROVIDER {
            return Err(ProviderError::WrongProvider {
                node: record.id.clone(),
                expected: LOCAL_PROVIDER.to_owned(),
                found: record.provider.clone(),
            });
        }
        let state: LocalNodeState =
            serde_json::from_value(record.provider_state.clone()).map_err(|error| {
                ProviderError::BadRecord {
                    node: record.id.clone(),
                    reason: format!("provider_state: {error}"),
                }
            })?;
        // Delete removes this directory: never act on one outside our base directory.
        if state.dir.parent() != Some(self.base_dir.as_path()) || !files::is_plain_path(&state.dir)
        {
            return Err(ProviderError::BadRecord {
                node: record.id.clone(),
                reason: format!(
                    "node directory {} is not inside {}",
                    state.dir.display(),
                    self.base_dir.display()
                ),
            });
        }
        Ok(state)
    }
}

impl NodeProvider for LocalProvider {
    fn name(&self) -> &'static str {
        LOCAL_PROVIDER
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
        Box::pin(async move { super::wait_for_ssh(&record.ssh_target(), pool, timeout).await })
    }

    fn delete<'a>(&'a self, record: &'a NodeRecord) -> ProviderFuture<'a, ()> {
        Box::pin(self.delete_node(record))
    }

    fn adopt<'a>(&'a self, record: &'a NodeRecord) -> ProviderFuture<'a, NodeRecord> {
        Box::pin(self.adopt_node(record))
    }
}

/// Kills sshd and everything started through it, rescanning until nothing is left.
async fn kill_node_processes(node: &str, dir: &NodeDir) -> Result<(), ProviderError> {
    let config = dir.sshd_config();
    let marker = dir.marker();
    // A scan reads every process under /proc: off the async workers, so a burst of
    // deletes never stalls the steps and database writes sharing them.
    let scan = || {
        let (config, marker) = (config.clone(), marker.clone());
        async move {
            tokio::task::spawn_blocking(move || procs::node_processes(&config, &marker))
                .await
                // Only a panicking scan fails to join: nothing is known to be gone.
                .map_err(|error| ProviderError::BadRecord {
                    node: node.to_owned(),
                    reason: format!("scanning the node's processes failed: {error}"),
                })
        }
    };
    for _ in 0..KILL_ROUNDS {
        let victims = scan().await?;
        if victims.is_empty() {
            return Ok(());
        }
        procs::kill_all(&victims);
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let survivors = scan().await?;
    if survivors.is_empty() {
        Ok(())
    } else {
        Err(ProviderError::Survivors {
            node: node.to_owned(),
            pids: survivors.into_iter().collect(),
        })
    }
}

fn validate_node_id(id: &str) -> Result<(), ProviderError> {
    let reason = if id.is_empty() {
        Some("it is empty")
    } else if id.len() > 64 {
        Some("it is longer than 64 characters")
    } else if id.starts_with('.') || id.starts_with('-') {
        Some("it starts with '.' or '-'")
    } else if !id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        Some("only letters, digits, '.', '_' and '-' are allowed")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(ProviderError::InvalidNodeId {
            id: id.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

fn absolute_base_dir(base_dir: PathBuf) -> Result<PathBuf, ProviderError> {
    create_dir(&base_dir)?;
    let absolute = base_dir
        .canonicalize()
        .map_err(|source| ProviderError::Io {
            action: "resolving",
            path: base_dir.clone(),
            source,
        })?;
    if files::is_plain_path(&absolute) {
        Ok(absolute)
    } else {
        Err(ProviderError::InvalidBaseDir {
            path: absolute,
            reason: "it holds characters sshd_config or sh would interpret".to_owned(),
        })
    }
}

fn current_user() -> Result<String, ProviderError> {
    if rustix::process::geteuid().is_root() {
        return Ok("root".to_owned());
    }
    ["USER", "LOGNAME"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|user| !user.is_empty()))
        .ok_or_else(|| ProviderError::SshdStart {
            node: String::new(),
            detail: "cannot tell which user to log in as: neither USER nor LOGNAME is set"
                .to_owned(),
        })
}

fn state_value(state: &LocalNodeState) -> serde_json::Value {
    serde_json::to_value(state).unwrap_or(serde_json::Value::Null)
}

fn set_pid(record: &mut NodeRecord, pid: Option<i32>) {
    if let Ok(mut state) = serde_json::from_value::<LocalNodeState>(record.provider_state.clone()) {
        state.pid = pid;
        record.provider_state = state_value(&state);
    }
}

fn read_host_key(node: &str, dir: &NodeDir) -> Result<HostKey, ProviderError> {
    let path = dir.host_key_pub();
    let text = std::fs::read_to_string(&path).map_err(|source| ProviderError::Io {
        action: "reading",
        path: path.clone(),
        source,
    })?;
    HostKey::from_openssh(&text).map_err(|error| ProviderError::BadRecord {
        node: node.to_owned(),
        reason: error.to_string(),
    })
}

fn read_record(dir: &NodeDir) -> Result<Option<NodeRecord>, ProviderError> {
    let path = dir.record();
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            serde_json::from_str(&text)
                .map(Some)
                .map_err(|error| ProviderError::BadRecord {
                    node: dir.root.display().to_string(),
                    reason: format!("{}: {error}", path.display()),
                })
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ProviderError::Io {
            action: "reading",
            path,
            source,
        }),
    }
}

/// Written to a temporary file and renamed, so a crash never leaves half a record.
fn write_record(dir: &NodeDir, record: &NodeRecord) -> Result<(), ProviderError> {
    let text = serde_json::to_string_pretty(record).map_err(|error| ProviderError::BadRecord {
        node: record.id.clone(),
        reason: error.to_string(),
    })?;
    let partial = dir.root.join("node.json.partial");
    write_file(&partial, &text)?;
    std::fs::rename(&partial, dir.record()).map_err(|source| ProviderError::Io {
        action: "renaming",
        path: partial,
        source,
    })
}

fn write_file(path: &Path, text: &str) -> Result<(), ProviderError> {
    std::fs::write(path, text).map_err(|source| ProviderError::Io {
        action: "writing",
        path: path.to_owned(),
        source,
    })
}

fn copy_file(from: &Path, to: &Path) -> Result<(), ProviderError> {
    std::fs::copy(from, to)
        .map(drop)
        .map_err(|source| ProviderError::Io {
            action: "copying",
            path: from.to_owned(),
            source,
        })
}

fn create_dir(path: &Path) -> Result<(), ProviderError> {
    std::fs::create_dir_all(path).map_err(|source| ProviderError::Io {
        action: "creating",
        path: path.to_owned(),
        source,
    })
}

fn remove_dir(path: &Path) -> Result<(), ProviderError> {
    match std::fs::remove_dir_all(path) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(ProviderError::Io {
            action: "removing",
            path: path.to_owned(),
            source: error,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ids_become_safe_directory_names() {
        for good in ["n1", "cluster-7.node_1000", "a"] {
            assert!(validate_node_id(good).is_ok(), "{good}");
        }
        for bad in ["", ".", "..", "../x", "a/b", "-f", "a b", &"x".repeat(65)] {
            assert!(validate_node_id(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn missing_sshd_says_how_to_install_it() {
        let base = tempfile::tempdir().unwrap();
        let error = LocalProvider::with_sshd(base.path(), "/nonexistent/sbin/sshd").unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains("apt-get install openssh-server"),
            "{message}"
        );
        assert!(message.contains("/nonexistent/sbin/sshd"), "{message}");
    }
}
