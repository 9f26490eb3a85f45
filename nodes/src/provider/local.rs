//! The `local` provider: every node is a real OpenSSH `sshd` on a loopback address, with
//! its own node dir (host key, client key, record, sshd config) under a base directory.
//!
//! Who a node's commands run as ([`NodeIsolation`]): when the server runs as root, sshd
//! runs as root but every session drops to an unprivileged OS user of the node's tenant
//! (see `os_user`), whose HOME is in a home area outside the data dir
//! (`<home root>/<instance>/<node id>`, [`DEFAULT_NODE_HOMES`] unless configured), so a
//! step reaches neither the data dir (database, keys, sessions) nor other tenants' nodes.
//! A server that is not root cannot switch users, and its nodes run as itself.
//!
//! Modes, when nodes have users: the base dir and node dirs are root's alone (0700); the
//! home root, the instance dir and each home area let others pass but not list (0711);
//! a node's `authorized_keys` is root's and readable by all (0644), because sshd reads it
//! with the node user's privileges and the user must not be able to replace it; its
//! `home/` is the node user's alone (0700).
//!
//! sshd daemonizes, so nodes outlive the provider object and the process that made them;
//! [`LocalProvider::adopt`] takes them over again from their records (also records of
//! nodes made before nodes had users of their own, which keep running as they did).
//! Delete kills the node's sshd and every process started through it: through the
//! node's own cgroup where the host lets Corral make one (see `cgroup`: it holds every
//! process of the node, also one started with `env -i` in a session of its own), and
//! through /proc (the node's environment marker and sshd's process tree), then removes
//! its node dir and home area.
//!
//! The nodes of one cluster share one CPU share (see `cpu_share`, where the host has a
//! cgroup v1 `cpu` controller), so a small cluster's steps are not slowed in proportion
//! to a big cluster's node count.

mod addresses;
mod cgroup;
mod cpu_share;
mod files;
mod os_user;
mod procs;
mod sshd;

use std::collections::{BTreeSet, HashMap};
use std::net::Ipv4Addr;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use procs::process_ids;

use super::private_files::create_private_dir;
use super::{
    NodePresence, NodeProvider, NodeRecord, NodeSpec, ProviderError, ProviderSettings,
    ResourceLimits,
};
use crate::ssh::HostKey;
use crate::sync::lock_unpoisoned;
use files::NodeDir;
use sshd::StartFailure;

// The name `local` nodes carry in [`NodeRecord::provider`].
pub use domain::catalog::LOCAL_PROVIDER;

/// Where node homes live unless [`LocalProvider::with_home_root`] says otherwise: outside
/// any data dir, on a path every node user can reach.
pub const DEFAULT_NODE_HOMES: &str = "/var/lib/corral/node-homes";

/// Node dirs and the base dir: root's (or the server's) alone.
const PRIVATE_DIR: u32 = 0o700;
/// Home root, instance dir, home area: node users pass through, but list nothing.
const PASSAGE_DIR: u32 = 0o711;
/// Directories made above a missing home root.
const OPEN_DIR: u32 = 0o755;
/// `authorized_keys`: readable by the node user (sshd reads it as that user), root's.
const PUBLIC_FILE: u32 = 0o644;

/// Attempts at finding a port nobody else grabs between our probe and sshd's bind.
const PORT_ATTEMPTS: usize = 8;

/// Rounds of kill-and-rescan in delete: a process may fork between a scan and the kill.
const KILL_ROUNDS: usize = 100;

/// Whose OS account the commands on a provider's local nodes run as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeIsolation {
    /// The server runs as root: each tenant's nodes run as an unprivileged OS user of
    /// their own (nodes of no tenant share one), with homes outside the data dir; a step
    /// can read neither the data dir nor other tenants' nodes.
    SeparateUsers,
    /// The server is not root and cannot switch users: nodes run as the server's own OS
    /// user, so whoever can edit a service step can read and change everything the
    /// server can, its data dir (database, keys, sessions) included.
    ServerUser,
}

/// The OS user (uid, gid) that runs a tenant's code on this host outside its nodes
/// (Ansible's controller side): the tenant's node user when this process is root, none
/// (this process's own user) otherwise, as for local nodes.
pub async fn tenant_host_user(
    tenant_id: &str,
    purpose: &str,
) -> Result<Option<(u32, u32)>, ProviderError> {
    match NodeIsolation::of_this_process() {
        NodeIsolation::SeparateUsers => {
            let name = os_user::name_for(Some(tenant_id));
            let user = os_user::ensure(&name, Some(tenant_id), purpose).await?;
            Ok(Some((user.uid, user.gid)))
        }
        NodeIsolation::ServerUser => Ok(None),
    }
}

impl NodeIsolation {
    /// What this process can give local nodes: users of their own only as root.
    pub fn of_this_process() -> Self {
        if rustix::process::geteuid().is_root() {
            Self::SeparateUsers
        } else {
            Self::ServerUser
        }
    }

    /// One line for operators: what the isolation means and, when it is unsafe, what to do.
    pub fn explanation(self) -> &'static str {
        match self {
            Self::SeparateUsers => {
                "local nodes run as unprivileged OS users, one per tenant, that cannot read \
                 the data dir or other tenants' nodes"
            }
            Self::ServerUser => {
                "local nodes run as this server's OS user: whoever can edit a service step \
                 can read the data dir (database, keys, sessions); run the server as root so \
                 that nodes get unprivileged users of their own, or let only trusted admins \
                 edit services"
            }
        }
    }
}

impl std::fmt::Display for NodeIsolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.explanation())
    }
}

/// What the local provider keeps in [`NodeRecord::provider_state`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalNodeState {
    pub dir: PathBuf,
    /// The sshd listener's pid, once started.
    pub pid: Option<i32>,
    /// Applied to sshd, so to everything run on the node; kept to restart it alike.
    #[serde(default)]
    pub limits: ResourceLimits,
    /// The node's home area (`<home root>/<instance>/<node id>`: `authorized_keys` and
    /// `home/`) when it runs as a node user; `None` when both are inside `dir`, as for
    /// nodes of a server that is not root and nodes made before nodes had users.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home_area: Option<PathBuf>,
    /// The node's cgroup, holding all its processes; `None` where the host let Corral
    /// make none, and for nodes made before nodes had one (until sshd is restarted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<PathBuf>,
    /// The CPU group of the node's cluster (`cpu_share`); `None` where the host has none,
    /// for a node of no cluster, and for nodes made before clusters had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_group: Option<PathBuf>,
}

impl LocalNodeState {
    /// HOME of the node's sessions.
    pub fn home(&self) -> PathBuf {
        self.home_area.as_ref().unwrap_or(&self.dir).join("home")
    }
}

/// Runs nodes as local sshd processes under one base directory.
pub struct LocalProvider {
    base_dir: PathBuf,
    sshd: PathBuf,
    keygen: PathBuf,
    isolation: NodeIsolation,
    /// The server's own user: who nodes run as under [`NodeIsolation::ServerUser`].
    user: String,
    home_root: PathBuf,
    /// `<home root>/<instance>`, the home areas of this base dir's nodes: each base dir
    /// has its own, named from its path, so providers of several data dirs (several
    /// servers, tests) can share a home root and reuse node ids.
    homes: PathBuf,
    /// Set once the home root and `homes` were made and checked.
    homes_ready: OnceLock<()>,
    /// Serialises create/adopt/delete per node id, so concurrent retries make one node.
    /// Entries are only added whole, so a panicking holder cannot break the map.
    node_locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Addresses in use outside this process's own allocations, read at most once a
    /// second (see [`addresses::Occupied`]).
    occupied: addresses::Occupied,
    /// Where nodes' cgroups are made, where this host allows it.
    cgroups: Option<cgroup::NodeCgroups>,
    /// Where clusters' CPU groups are made, where this host allows it.
    cpu_groups: Option<cpu_share::ClusterCpuGroups>,
}

impl std::fmt::Debug for LocalProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalProvider")
            .field("base_dir", &self.base_dir)
            .field("sshd", &self.sshd)
            .field("isolation", &self.isolation)
            .field("user", &self.user)
            .field("homes", &self.homes)
            .finish()
    }
}

impl LocalProvider {
    /// A provider keeping its nodes under `base_dir` (created if missing, made private),
    /// using the system's sshd; fails with install instructions when there is none. Node
    /// homes go under [`DEFAULT_NODE_HOMES`], made on the first node.
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
        let isolation = NodeIsolation::of_this_process();
        let base_dir = absolute_base_dir(base_dir.into(), isolation)?;
        let user = current_user()?;
        if isolation == NodeIsolation::SeparateUsers {
            // sshd refuses to start as root without its privilege separation directory,
            // which lives on a tmpfs that a fresh boot leaves empty.
            let privsep = Path::new("/run/sshd");
            std::fs::create_dir_all(privsep).map_err(|source| ProviderError::Io {
                action: "creating",
                path: privsep.to_owned(),
                source,
            })?;
            warn_about_exposure(&base_dir);
        }
        let home_root = PathBuf::from(DEFAULT_NODE_HOMES);
        Ok(Self {
            homes: home_root.join(instance_name(&base_dir)),
            home_root,
            homes_ready: OnceLock::new(),
            occupied: addresses::Occupied::default(),
            base_dir,
            sshd,
            keygen,
            isolation,
            user,
            node_locks: Mutex::new(HashMap::new()),
            cgroups: cgroup::NodeCgroups::detect(),
            cpu_groups: cpu_share::ClusterCpuGroups::detect(),
        })
    }

    /// Keeps node homes under `home_root` (an absolute path; made if missing, with mode
    /// 0711) instead of [`DEFAULT_NODE_HOMES`]. Every directory from `/` down to it must
    /// let others pass (o+x), and it must be root's and writable by root alone. Under
    /// [`NodeIsolation::SeparateUsers`] it is made and checked here, so a bad choice
    /// fails at once; otherwise nodes keep their homes in their node dirs and it is unused.
    pub fn with_home_root(mut self, home_root: impl Into<PathBuf>) -> Result<Self, ProviderError> {
        let home_root = home_root.into();
        self.homes = home_root.join(instance_name(&self.base_dir));
        self.home_root = home_root;
        self.homes_ready = OnceLock::new();
        if self.isolation == NodeIsolation::SeparateUsers {
            self.prepare_homes()?;
        }
        Ok(self)
    }

    pub fn base_dir(&self) -> &Path {
        &self.base_dir
    }

    /// Where this provider keeps node homes (used under [`NodeIsolation::SeparateUsers`]).
    pub fn home_root(&self) -> &Path {
        &self.home_root
    }

    /// Whose account node commands run as: separate unprivileged users when the server
    /// runs as root, else the server's own (whoever edits a step can then read the data
    /// dir; [`NodeIsolation::explanation`] says so for a start-up warning).
    /// Which sshd nodes run and as whom (nothing to reach: nodes are on this host).
    async fn check_host(
        &self,
        _tenant_id: &str,
        _provider: &ProviderSettings,
    ) -> Result<String, ProviderError> {
        Ok(format!(
            "nodes run {} on this host; {}",
            self.sshd.display(),
            self.isolation().explanation()
        ))
    }

    pub fn isolation(&self) -> NodeIsolation {
        self.isolation
    }

    /// Kills every process of every node under `base_dir` (sshd, sessions, detached
    /// services) and removes the nodes' cgroups, without touching records or
    /// directories; returns how many processes were signalled.
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
        // The nodes' cgroups too (empty by now, or holding what shed the node's marker).
        let instance = instance_name(&base_dir);
        cgroup::clear_instance(&instance);
        cpu_share::ClusterCpuGroups::clear_instance(&instance);
        killed
    }

    /// A loopback address of its own for a new node.
    fn allocate_address(&self) -> Result<Ipv4Addr, ProviderError> {
        let occupied = self.occupied.read(|| {
            let mut occupied = self.addresses_on_disk();
            occupied.extend(addresses::listening_addresses());
            occupied
        });
        addresses::allocate(&occupied).ok_or_else(|| ProviderError::SshdStart {
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

    /// Pids of every live process of node `id` under `base_dir`: empty once it is
    /// deleted (what a scale-in must leave of the nodes it removed).
    pub fn processes_of_node(base_dir: &Path, id: &str) -> Vec<i32> {
        let base_dir = base_dir
            .canonicalize()
            .unwrap_or_else(|_| base_dir.to_owned());
        let dir = NodeDir::with_area(base_dir.join(id), None);
        procs::node_processes(&dir.sshd_config(), &dir.marker())
            .into_iter()
            .collect()
    }

    /// Makes and checks the home root and this provider's instance dir in it, once.
    fn prepare_homes(&self) -> Result<(), ProviderError> {
        if self.homes_ready.get().is_some() {
            return Ok(());
        }
        let unusable = |reason: String| ProviderError::NodeHomes {
            path: self.home_root.clone(),
            reason,
        };
        let plain = self
            .home_root
            .components()
            .all(|part| matches!(part, Component::RootDir | Component::Normal(_)));
        // Home paths go into sshd_config unquoted, like the base dir's.
        if !self.home_root.is_absolute() || !plain || !files::is_plain_path(&self.homes) {
            return Err(unusable(
                "it must be an absolute path without `.` or `..` parts, of letters, digits \
                 and `/._+-` only"
                    .to_owned(),
            ));
        }
        make_dirs(&self.home_root)?;
        for dir in self.home_root.ancestors() {
            let mode = metadata(dir)?.mode();
            if mode & 0o001 == 0 {
                return Err(unusable(format!(
                    "node users cannot pass through {} (mode {:o}); allow it with \
                     `chmod o+x {}` or choose another directory",
                    dir.display(),
                    mode & 0o7777,
                    dir.display()
                )));
            }
        }
        check_root_only(&self.home_root).map_err(unusable)?;
        match std::fs::create_dir(&self.homes) {
            Err(error) if error.kind() != std::io::ErrorKind::AlreadyExists => {
                return Err(ProviderError::Io {
                    action: "creating",
                    path: self.homes.clone(),
                    source: error,
                });
            }
            _ => {}
        }
        check_root_only(&self.homes).map_err(|reason| ProviderError::NodeHomes {
            path: self.homes.clone(),
            reason,
        })?;
        set_mode(&self.homes, PASSAGE_DIR)?;
        let _ = self.homes_ready.set(());
        Ok(())
    }

    /// The paths of node `id`: its node dir and, when nodes have users, its home area.
    fn node_dir_for(&self, id: &str) -> NodeDir {
        let area = (self.isolation == NodeIsolation::SeparateUsers).then(|| self.homes.join(id));
        NodeDir::with_area(self.base_dir.join(id), area)
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
        let dir = self.node_dir_for(&spec.id);
        if let Some(record) = read_record(&dir)? {
            return self.adopt_locked(&record).await;
        }
        if dir.root.exists() {
            // A create that died before recording the node: nothing was handed out from
            // this directory, so clear it (and anything it started) and start over.
            if let Some(cgroups) = &self.cgroups {
                let path = cgroups.path_of(&instance_name(&self.base_dir), &spec.id);
                cgroup::kill_and_remove(&spec.id, &path).await?;
            }
            kill_node_processes(&spec.id, &dir).await?;
            remove_dir(&dir.root)?;
        }
        if let Some(area) = &dir.area {
            // Left by such a create, or by a delete cut short after the node dir went.
            remove_dir(area)?;
            self.prepare_homes()?;
        }
        // Private, as the keys and record in it are.
        create_private_dir(&dir.root)?;
        let host_comment = format!("corral-host-{}", spec.id);
        let client_comment = format!("corral-client-{}", spec.id);
        let (host_key_path, client_key_path) = (dir.host_key(), dir.client_key());
        let tenant = spec.tenant_id.as_deref();
        // A tenant's first node waits for `useradd` (tens of ms) alongside its keys.
        let node_user = async {
            match self.isolation {
                NodeIsolation::SeparateUsers => {
                    let name = os_user::name_for(tenant);
                    os_user::ensure(&name, tenant, &spec.id).await.map(Some)
                }
                NodeIsolation::ServerUser => Ok(None),
            }
        };
        let (host, client, node_user) = tokio::join!(
            sshd::generate_key(&self.keygen, &host_key_path, &host_comment, &spec.id),
            sshd::generate_key(&self.keygen, &client_key_path, &client_comment, &spec.id),
            node_user,
        );
        host?;
        client?;
        let user = match node_user? {
            Some(node_user) => {
                make_home_area(&dir, &node_user)?;
                node_user.name
            }
            None => {
                create_dir(&dir.home())?;
                copy_file(&dir.client_key_pub(), &dir.authorized_keys())?;
                self.user.clone()
            }
        };
        trust_user_ca(&dir, spec)?;
        let host_key = read_host_key(&spec.id, &dir)?;
        let cpu_group = match (&self.cpu_groups, &spec.cluster_id) {
            (Some(groups), Some(cluster)) => {
                groups.make(&instance_name(&self.base_dir), cluster)?
            }
            _ => None,
        };
        let mut record = NodeRecord {
            id: spec.id.clone(),
            provider: LOCAL_PROVIDER.to_owned(),
            host: self.allocate_address()?.to_string(),
            port: 0,
            user,
            host_key,
            client_key_path: dir.client_key(),
            provider_state: state_value(&LocalNodeState {
                dir: dir.root.clone(),
                pid: None,
                limits: spec.limits.clone(),
                home_area: dir.area.clone(),
                cgroup: None,
                cpu_group,
            }),
            address: None,
        };
        self.start_sshd(&mut record, &dir, None).await?;
        tracing::info!(
            node = %record.id,
            port = record.port,
            user = %record.user,
            "local node created"
        );
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
                &files::sshd_config(
                    &record.id,
                    dir,
                    &record.host,
                    port,
                    &record.user,
                    dir.trusted_user_ca_keys().exists(),
                ),
            )?;
            set_pid(record, None);
            write_record(dir, record)?;
            let limits = serde_json::from_value::<LocalNodeState>(record.provider_state.clone())
                .map(|state| state.limits)
                .unwrap_or_default();
            match sshd::start(&self.sshd, dir, &record.id, &limits).await {
                Ok(pid) => {
                    set_pid(record, Some(pid));
                    // Into the node's cgroup before anything connects, so every session
                    // forked from it starts there.
                    self.enter_cgroup(record, pid)?;
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

    /// Moves the node's sshd `pid` into the node's cgroup, made (and recorded) when it is
    /// not there, and into its cluster's CPU group; nothing where the host gives Corral no
    /// cgroups.
    fn enter_cgroup(&self, record: &mut NodeRecord, pid: i32) -> Result<(), ProviderError> {
        let mut state: LocalNodeState = record.state_as(LOCAL_PROVIDER)?;
        self.enter_cpu_group(&state, &record.id, pid);
        let Some(cgroups) = &self.cgroups else {
            return Ok(());
        };
        // Made again when it is gone: cgroups do not survive a reboot.
        let path = cgroups.make(&instance_name(&self.base_dir), &record.id)?;
        if let Err(error) = cgroup::enter(&path, pid) {
            procs::kill_all(&BTreeSet::from([pid]));
            return Err(error);
        }
        state.cgroup = Some(path);
        record.provider_state = state_value(&state);
        Ok(())
    }

    /// Moves the node's sshd `pid` into its cluster's CPU group, made again when it is
    /// gone. A failure costs the cluster its fair share, not the node: it is logged.
    fn enter_cpu_group(&self, state: &LocalNodeState, node: &str, pid: i32) {
        let (Some(groups), Some(path)) = (&self.cpu_groups, &state.cpu_group) else {
            return;
        };
        if !groups.owns(path) {
            return;
        }
        let entered = std::fs::create_dir_all(path)
            .map_err(|source| ProviderError::Io {
                action: "cannot make the cluster's cpu cgroup",
                path: path.clone(),
                source,
            })
            .and_then(|()| cpu_share::enter(path, pid));
        if let Err(error) = entered {
            tracing::warn!(%node, %error, "node runs without its cluster's cpu share");
        }
    }

    /// Gone when the node's directory is gone or no sshd serves it any more.
    async fn sshd_presence(&self, record: &NodeRecord) -> Result<NodePresence, ProviderError> {
        let state = self.state_of(record)?;
        let dir = NodeDir::with_area(state.dir.clone(), state.home_area.clone());
        if !dir.root.is_dir() {
            return Ok(NodePresence::Gone);
        }
        Ok(if running_sshd(&state, &dir).is_some() {
            NodePresence::Present
        } else {
            NodePresence::Gone
        })
    }

    async fn adopt_node(&self, record: &NodeRecord) -> Result<NodeRecord, ProviderError> {
        let lock = self.node_lock(&record.id);
        let _guard = lock.lock().await;
        self.adopt_locked(record).await
    }

    async fn adopt_locked(&self, record: &NodeRecord) -> Result<NodeRecord, ProviderError> {
        let state = self.state_of(record)?;
        let dir = NodeDir::with_area(state.dir.clone(), state.home_area.clone());
        for needed in std::iter::once(&dir.root).chain(&dir.area) {
            if !needed.is_dir() {
                return Err(ProviderError::NodeGone {
                    node: record.id.clone(),
                    dir: needed.clone(),
                });
            }
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
        match running_sshd(&state, &dir) {
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
        let dir = NodeDir::with_area(state.dir, state.home_area);
        // The cgroup first: it holds every process of the node, also those the /proc
        // scan cannot tell apart (`env -i` in a session of its own).
        if let (Some(cgroups), Some(path)) = (&self.cgroups, &state.cgroup) {
            if cgroups.owns(path) {
                cgroup::kill_and_remove(&record.id, path).await?;
            }
        }
        kill_node_processes(&record.id, &dir).await?;
        // The node dir (with its record) first: a delete cut short in between leaves a
        // home area that a retried delete, or a new node of the same id, removes.
        remove_dir(&dir.root)?;
        if let Some(area) = &dir.area {
            remove_dir(area)?;
        }
        if let (Some(groups), Some(path)) = (&self.cpu_groups, &state.cpu_group) {
            groups.remove_if_empty(path);
        }
        addresses::release(&record.host);
        tracing::info!(node = %record.id, "local node deleted");
        Ok(())
    }

    fn state_of(&self, record: &NodeRecord) -> Result<LocalNodeState, ProviderError> {
        let state: LocalNodeState = record.state_as(LOCAL_PROVIDER)?;
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
        // Delete removes this one too: only ever `<any home root>/<our instance>/<id>`
        // (the home root may have been configured differently when the node was made).
        if let Some(area) = &state.home_area {
            let instance = instance_name(&self.base_dir);
            if !is_home_area_of(area, &instance, &record.id) {
                return Err(ProviderError::BadRecord {
                    node: record.id.clone(),
                    reason: format!(
                        "home area {} is not this provider's `<home root>/{instance}/{}`",
                        area.display(),
                        record.id
                    ),
                });
            }
        }
        Ok(state)
    }
}

#[async_trait]
impl NodeProvider for LocalProvider {
    fn name(&self) -> &'static str {
        LOCAL_PROVIDER
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
        self.check_host(tenant_id, provider).await
    }

    async fn presence(&self, record: &NodeRecord) -> Result<NodePresence, ProviderError> {
        self.sshd_presence(record).await
    }
}

/// One census of /proc for every local provider of the process: /proc is the host's.
static PROCESS_CENSUS: procs::ProcessCensus = procs::ProcessCensus::new();

/// Kills sshd and everything started through it, rescanning until nothing is left.
async fn kill_node_processes(node: &str, dir: &NodeDir) -> Result<(), ProviderError> {
    let config = dir.sshd_config();
    let marker = dir.marker();
    let scan = || async {
        let table = PROCESS_CENSUS
            .read_after(std::time::Instant::now())
            .await
            // Only a panicking scan fails to join: nothing is known to be gone.
            .map_err(|error| ProviderError::BadRecord {
                node: node.to_owned(),
                reason: format!("scanning the node's processes failed: {error}"),
            })?;
        Ok::<_, ProviderError>(table.node_processes(&config, &marker))
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

fn absolute_base_dir(
    base_dir: PathBuf,
    isolation: NodeIsolation,
) -> Result<PathBuf, ProviderError> {
    create_dir(&base_dir)?;
    let absolute = base_dir
        .canonicalize()
        .map_err(|source| ProviderError::Io {
            action: "resolving",
            path: base_dir.clone(),
            source,
        })?;
    if !files::is_plain_path(&absolute) {
        return Err(ProviderError::InvalidBaseDir {
            path: absolute,
            reason: "it holds characters sshd_config or sh would interpret".to_owned(),
        });
    }
    // Node dirs hold every node's keys: node users must not even list them. (Older
    // versions left the base dir open.) Nodes running as the server's user could read
    // it anyway, so there a base dir this user cannot change is left as it is.
    if metadata(&absolute)?.mode() & 0o077 != 0 {
        match set_mode(&absolute, PRIVATE_DIR) {
            Err(error) if isolation == NodeIsolation::SeparateUsers => return Err(error),
            _ => {}
        }
    }
    Ok(absolute)
}

/// The name of a base dir's own directory under the home root: the first 12 hex digits
/// of the SHA-256 of its path, a fixed-length plain name whatever the path.
fn instance_name(base_dir: &Path) -> String {
    let digest = Sha256::digest(base_dir.as_os_str().as_encoded_bytes());
    hex::encode(&digest[..6])
}

/// Whether `area` is `<some home root>/<instance>/<node>`, a plain absolute path.
fn is_home_area_of(area: &Path, instance: &str, node: &str) -> bool {
    let plain = area
        .components()
        .all(|part| matches!(part, Component::RootDir | Component::Normal(_)));
    area.is_absolute()
        && plain
        && files::is_plain_path(area)
        && area.file_name() == Some(node.as_ref())
        && area.parent().and_then(Path::file_name) == Some(instance.as_ref())
}

/// Start-up warnings about what node users could still reach: they enter the base dir's
/// parent (the data dir) when others may pass through it, and read whatever in it is
/// readable by all (the database, say); and without CAP_SYS_PTRACE their detached
/// services cannot be told apart by environment, so they may outlive their node.
fn warn_about_exposure(base_dir: &Path) {
    if let Some(parent) = base_dir.parent() {
        if let Ok(mode) = std::fs::metadata(parent).map(|meta| meta.mode()) {
            if mode & 0o001 != 0 && parent != Path::new("/") {
                tracing::warn!(
                    dir = %parent.display(),
                    mode = format!("{:o}", mode & 0o7777),
                    "other users may enter the directory holding the local nodes' base dir, so \
                     node users can read the files in it that are readable by all (such as \
                     the database): `chmod 700` it"
                );
            }
        }
    }
    if !procs::can_read_others_environment() {
        tracing::warn!(
            "this server lacks CAP_SYS_PTRACE, so it cannot read node users' process \
             environments: services that steps detach from their session (nohup, setsid) may \
             survive their node's delete; grant it (e.g. `docker run --cap-add SYS_PTRACE`)"
        );
    }
}

/// Makes a node's home area as root: the area itself (passable), `authorized_keys` (root's,
/// readable by the node user, who must not replace it) and `home/` (the user's alone), and
/// in the node dir links to both, where they were before nodes had users (only root can
/// follow them: node users cannot enter the node dir).
fn make_home_area(dir: &NodeDir, user: &os_user::NodeUser) -> Result<(), ProviderError> {
    let Some(area) = &dir.area else {
        return Ok(());
    };
    create_dir_with_mode(area, PASSAGE_DIR)?;
    let key = dir.client_key_pub();
    let key = std::fs::read(&key).map_err(|source| ProviderError::Io {
        action: "reading",
        path: key,
        source,
    })?;
    create_file_with_mode(&dir.authorized_keys(), &key, PUBLIC_FILE)?;
    let home = dir.home();
    create_dir_with_mode(&home, PRIVATE_DIR)?;
    std::os::unix::fs::chown(&home, Some(user.uid), Some(user.gid)).map_err(|source| {
        ProviderError::Io {
            action: "handing to the node user",
            path: home.clone(),
            source,
        }
    })?;
    for (target, link) in [
        (home, dir.home_link()),
        (dir.authorized_keys(), dir.authorized_keys_link()),
    ] {
        std::os::unix::fs::symlink(&target, &link).map_err(|source| ProviderError::Io {
            action: "linking",
            path: link,
            source,
        })?;
    }
    Ok(())
}

/// Has the node's sshd trust the tenant's SSH user CA for certificates naming the
/// node's cluster (see `crate::ssh::UserCa`), when the spec brings one: the CA's key
/// in the node dir, the cluster's principal beside `authorized_keys` (root's, readable
/// by the node user, as `authorized_keys`).
fn trust_user_ca(dir: &NodeDir, spec: &NodeSpec) -> Result<(), ProviderError> {
    let (Some(ca), Some(cluster)) = (&spec.trusted_user_ca, &spec.cluster_id) else {
        return Ok(());
    };
    let principal = crate::ssh::cluster_principal(cluster);
    create_file_with_mode(
        &dir.authorized_principals(),
        format!("{principal}\n").as_bytes(),
        PUBLIC_FILE,
    )?;
    create_file_with_mode(
        &dir.trusted_user_ca_keys(),
        format!("{}\n", ca.trim()).as_bytes(),
        PUBLIC_FILE,
    )
}

/// Refuses a directory that others could change: they could swap node homes in it.
fn check_root_only(path: &Path) -> Result<(), String> {
    let meta = std::fs::metadata(path).map_err(|error| error.to_string())?;
    let mode = meta.mode() & 0o7777;
    if meta.uid() != 0 || mode & 0o022 != 0 {
        Err(format!(
            "it must be root's and writable by root alone, but is owned by uid {} with mode \
             {mode:o}: others could swap node homes in it; use a directory only root can \
             write",
            meta.uid()
        ))
    } else {
        Ok(())
    }
}

/// `create_dir_all` that gives the directories it makes modes of their own (whatever the
/// umask): the home root passable, those above it open.
fn make_dirs(path: &Path) -> Result<(), ProviderError> {
    let missing: Vec<&Path> = path.ancestors().take_while(|dir| !dir.exists()).collect();
    create_dir(path)?;
    for dir in missing {
        set_mode(dir, if dir == path { PASSAGE_DIR } else { OPEN_DIR })?;
    }
    Ok(())
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

/// The pid of the sshd serving the node, if one runs: the recorded pid, the pid file,
/// then a scan of the processes (a restarted sshd the record has not caught up with).
fn running_sshd(state: &LocalNodeState, dir: &NodeDir) -> Option<i32> {
    let config = dir.sshd_config();
    state
        .pid
        .filter(|pid| procs::is_node_sshd(*pid, &config))
        .or_else(|| sshd::read_pid(dir).filter(|pid| procs::is_node_sshd(*pid, &config)))
        .or_else(|| procs::find_node_sshd(&config))
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

/// A new directory (it must not exist) with exactly `mode`, whatever the umask.
fn create_dir_with_mode(path: &Path, mode: u32) -> Result<(), ProviderError> {
    std::fs::DirBuilder::new()
        .mode(mode)
        .create(path)
        .map_err(|source| ProviderError::Io {
            action: "creating",
            path: path.to_owned(),
            source,
        })?;
    enforce_mode(path, mode)
}

/// A new file (it must not exist) holding `bytes`, with exactly `mode`.
fn create_file_with_mode(path: &Path, bytes: &[u8], mode: u32) -> Result<(), ProviderError> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .and_then(|mut file| file.write_all(bytes))
        .map_err(|source| ProviderError::Io {
            action: "writing",
            path: path.to_owned(),
            source,
        })?;
    enforce_mode(path, mode)
}

/// Sets `mode` on what was just made with it, unless the umask left it whole (the usual
/// case, which saves a node a few metadata writes).
fn enforce_mode(path: &Path, mode: u32) -> Result<(), ProviderError> {
    if umask().is_some_and(|umask| umask & mode == 0) {
        Ok(())
    } else {
        set_mode(path, mode)
    }
}

/// This process's umask, as Linux shows it in /proc/self/status (nothing here changes it).
fn umask() -> Option<u32> {
    static UMASK: OnceLock<Option<u32>> = OnceLock::new();
    *UMASK.get_or_init(|| {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let value = status
            .lines()
            .find_map(|line| line.strip_prefix("Umask:"))?;
        u32::from_str_radix(value.trim(), 8).ok()
    })
}

fn set_mode(path: &Path, mode: u32) -> Result<(), ProviderError> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(|source| {
        ProviderError::Io {
            action: "setting the mode of",
            path: path.to_owned(),
            source,
        }
    })
}

fn metadata(path: &Path) -> Result<std::fs::Metadata, ProviderError> {
    std::fs::metadata(path).map_err(|source| ProviderError::Io {
        action: "reading the metadata of",
        path: path.to_owned(),
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
    fn records_name_only_home_areas_of_their_own_instance_and_node() {
        let instance = instance_name(Path::new("/srv/corral/nodes"));
        assert_eq!(instance.len(), 12);
        assert_ne!(instance, instance_name(Path::new("/srv/other/nodes")));
        let ours = PathBuf::from(format!("/var/lib/corral/node-homes/{instance}/n1"));
        assert!(is_home_area_of(&ours, &instance, "n1"));
        // Another home root is fine: it may have been configured differently.
        let moved = PathBuf::from(format!("/srv/homes/{instance}/n1"));
        assert!(is_home_area_of(&moved, &instance, "n1"));
        for foreign in [
            "/root".to_owned(),
            format!("/var/lib/corral/node-homes/{instance}/n2"),
            "/var/lib/corral/node-homes/0123456789ab/n1".to_owned(),
            format!("/x/{instance}/../{instance}/n1"),
            format!("relative/{instance}/n1"),
        ] {
            assert!(
                !is_home_area_of(Path::new(&foreign), &instance, "n1"),
                "{foreign}"
            );
        }
    }

    #[test]
    fn isolation_explains_itself_in_one_line() {
        for isolation in [NodeIsolation::SeparateUsers, NodeIsolation::ServerUser] {
            assert!(!isolation.explanation().contains('\n'));
        }
        assert!(NodeIsolation::ServerUser
            .to_string()
            .contains("can read the data dir"));
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
