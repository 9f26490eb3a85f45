//! Finding and killing a local node's processes through /proc.
//!
//! A node's processes are its sshd listener, everything descended from it, and everything
//! that carries the node's environment marker (set by sshd for every session), which
//! catches services that detached with nohup/setsid and were re-parented away.
//!
//! Node processes may belong to other users (the node users): anyone may read a
//! process's stat and cmdline, and root may read its environment as long as it holds
//! CAP_SYS_PTRACE, which [`can_read_others_environment`] checks.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// The environment variable every process started through a node's sshd carries; its
/// value is the node's directory.
pub const MARKER_VARIABLE: &str = "CORRAL_LOCAL_NODE";

/// One live (non-zombie) process as /proc shows it.
#[derive(Debug)]
struct ProcessInfo {
    parent: i32,
    cmdline: Vec<u8>,
}

/// One read of /proc: every live process with its parent, command line and node marker.
///
/// Reading it costs a few file reads per process on the host (thousands with a thousand
/// nodes), so deletes running at the same time share one through [`ProcessCensus`]
/// instead of each reading its own.
#[derive(Debug, Default)]
pub struct ProcessTable {
    processes: HashMap<i32, ProcessInfo>,
    /// The `CORRAL_LOCAL_NODE=…` entry of each process that has one.
    markers: HashMap<i32, Vec<u8>>,
}

impl ProcessTable {
    /// Reads /proc now; zombies are left out because they hold nothing and cannot be
    /// killed, and this process is left out so no scan ever kills its reader.
    pub fn read() -> Self {
        let own = std::process::id() as i32;
        let mut table = Self::default();
        for pid in process_ids().filter(|pid| *pid != own) {
            let Some(info) = process_info(pid) else {
                continue;
            };
            if let Some(marker) = marker_entry(pid) {
                table.markers.insert(pid, marker);
            }
            table.processes.insert(pid, info);
        }
        table
    }

    /// Every process belonging to the node: its sshd and descendants, and every process
    /// carrying `marker` in its environment, with their descendants.
    pub fn node_processes(&self, config: &Path, marker: &str) -> BTreeSet<i32> {
        let config_needle = config_needle(config);
        self.with_descendants(|pid, info| {
            contains(&info.cmdline, config_needle.as_bytes())
                || self.markers.get(&pid).map(Vec::as_slice) == Some(marker.as_bytes())
        })
    }

    /// Every process of every node under `base_dir`, with descendants.
    fn processes_under(&self, base_dir: &Path) -> BTreeSet<i32> {
        let config_prefix = format!("-f {}/", base_dir.display());
        let marker_prefix = format!("{MARKER_VARIABLE}={}/", base_dir.display());
        self.with_descendants(|pid, info| {
            contains(&info.cmdline, config_prefix.as_bytes())
                || self
                    .markers
                    .get(&pid)
                    .is_some_and(|marker| marker.starts_with(marker_prefix.as_bytes()))
        })
    }

    fn with_descendants(&self, is_seed: impl Fn(i32, &ProcessInfo) -> bool) -> BTreeSet<i32> {
        let mut members: BTreeSet<i32> = self
            .processes
            .iter()
            .filter(|(pid, info)| is_seed(**pid, info))
            .map(|(pid, _)| *pid)
            .collect();
        if members.is_empty() {
            return members;
        }
        let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
        for (pid, info) in &self.processes {
            children.entry(info.parent).or_default().push(*pid);
        }
        let mut pending: Vec<i32> = members.iter().copied().collect();
        while let Some(pid) = pending.pop() {
            for child in children.get(&pid).into_iter().flatten() {
                if members.insert(*child) {
                    pending.push(*child);
                }
            }
        }
        members
    }
}

/// Shares reads of /proc between callers that ask at the same time: a caller gets the
/// newest table whose read began after it asked, so it never sees a process list older
/// than its own last kill, and a burst of N deletes costs a few reads instead of N.
#[derive(Debug, Default)]
pub struct ProcessCensus {
    latest: tokio::sync::Mutex<Option<(Instant, Arc<ProcessTable>)>>,
}

impl ProcessCensus {
    pub const fn new() -> Self {
        Self {
            latest: tokio::sync::Mutex::const_new(None),
        }
    }

    /// A table read after `asked_at`: the one read meanwhile by another caller, or a new one.
    pub async fn read_after(
        &self,
        asked_at: Instant,
    ) -> Result<Arc<ProcessTable>, tokio::task::JoinError> {
        // Callers queue here while one reads; when the read ends, those that asked before
        // it began take it without reading again.
        let mut latest = self.latest.lock().await;
        if let Some((started, table)) = latest.as_ref() {
            if *started >= asked_at {
                return Ok(table.clone());
            }
        }
        let started = Instant::now();
        // Thousands of file reads: off the async workers, so a burst of deletes never
        // stalls the steps and database writes sharing them.
        let table = Arc::new(tokio::task::spawn_blocking(ProcessTable::read).await?);
        *latest = Some((started, table.clone()));
        Ok(table)
    }
}

/// The ids of the processes /proc lists now (a process may be gone by the time it is
/// read; readers skip those).
pub fn process_ids() -> impl Iterator<Item = i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
}

fn process_info(pid: i32) -> Option<ProcessInfo> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may itself contain spaces or parentheses.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace();
    let state = fields.next()?;
    if state == "Z" || state == "X" {
        return None;
    }
    let parent = fields.next()?.parse().ok()?;
    // Arguments are NUL-separated until a process rewrites its title (sshd does) into one
    // space-separated string; searching the space form matches both.
    let mut cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    for byte in &mut cmdline {
        if *byte == 0 {
            *byte = b' ';
        }
    }
    Some(ProcessInfo { parent, cmdline })
}

/// The process's `CORRAL_LOCAL_NODE=…` environment entry, if it has one and its
/// environment is readable.
fn marker_entry(pid: i32) -> Option<Vec<u8>> {
    let environment = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{MARKER_VARIABLE}=");
    environment
        .split(|byte| *byte == 0)
        .find(|variable| variable.starts_with(prefix.as_bytes()))
        .map(<[u8]>::to_vec)
}

/// Whether `pid` is alive and is the sshd serving the config at `config`.
pub fn is_node_sshd(pid: i32, config: &Path) -> bool {
    process_info(pid).is_some_and(|info| contains(&info.cmdline, config_needle(config).as_bytes()))
}

/// The pid of the sshd listening for the node whose config is at `config`, if any.
pub fn find_node_sshd(config: &Path) -> Option<i32> {
    let needle = config_needle(config);
    process_ids()
        .filter(|pid| {
            process_info(*pid).is_some_and(|info| contains(&info.cmdline, needle.as_bytes()))
        })
        .min()
}

/// Every live process of the node (see [`ProcessTable::node_processes`]), read now.
pub fn node_processes(config: &Path, marker: &str) -> BTreeSet<i32> {
    ProcessTable::read().node_processes(config, marker)
}

/// Every live process of every node under `base_dir`, with descendants: a last-resort sweep
/// for tests and tools that must not leave processes behind whatever happened.
pub fn processes_under(base_dir: &Path) -> BTreeSet<i32> {
    ProcessTable::read().processes_under(base_dir)
}

/// Sends SIGKILL; a process that is already gone is not an error.
pub fn kill_all(pids: &BTreeSet<i32>) {
    for pid in pids {
        if let Some(pid) = rustix::process::Pid::from_raw(*pid) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}

/// Whether this process may read the environment of other users' processes: root holding
/// CAP_SYS_PTRACE (container runtimes often drop it). Without it, services of node users
/// that left their session are not found by their marker.
pub fn can_read_others_environment() -> bool {
    const CAP_SYS_PTRACE: u32 = 19;
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("CapEff:"))
                .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        })
        .is_some_and(|capabilities| capabilities & (1 << CAP_SYS_PTRACE) != 0)
}

fn config_needle(config: &Path) -> String {
    format!("-f {}", config.display())
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty()
        && haystack
            .windows(needle.len())
            .any(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_own_process_but_never_returns_it() {
        let own = std::process::id() as i32;
        assert!(process_ids().any(|pid| pid == own));
        // The test binary's environment certainly holds PATH; the scan must still skip us.
        let path = std::env::var("PATH").unwrap_or_default();
        let members = node_processes(
            Path::new("/nonexistent/sshd_config"),
            &format!("PATH={path}"),
        );
        assert!(!members.contains(&own));
    }

    #[test]
    fn substring_search() {
        assert!(contains(
            b"sshd -f /a/sshd_config -E x",
            b"-f /a/sshd_config"
        ));
        assert!(!contains(b"sshd -f /b/sshd_config", b"-f /a/sshd_config"));
    }
}
