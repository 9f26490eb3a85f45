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

/// One live (non-zombie) process as /proc shows it.
#[derive(Debug)]
struct ProcessInfo {
    parent: i32,
    cmdline: Vec<u8>,
}

/// Live processes; zombies are left out because they hold nothing and cannot be killed.
fn live_processes() -> HashMap<i32, ProcessInfo> {
    process_ids()
        .filter_map(|pid| Some((pid, process_info(pid)?)))
        .collect()
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

/// Whether `pid` is alive and is the sshd serving the config at `config`.
pub(crate) fn is_node_sshd(pid: i32, config: &Path) -> bool {
    process_info(pid).is_some_and(|info| contains(&info.cmdline, config_needle(config).as_bytes()))
}

/// The pid of the sshd listening for the node whose config is at `config`, if any.
pub(crate) fn find_node_sshd(config: &Path) -> Option<i32> {
    let needle = config_needle(config);
    live_processes()
        .into_iter()
        .filter(|(_, info)| contains(&info.cmdline, needle.as_bytes()))
        .map(|(pid, _)| pid)
        .min()
}

/// Every live process belonging to the node: its sshd and descendants, and every process
/// carrying `marker` in its environment, with their descendants.
pub(crate) fn node_processes(config: &Path, marker: &str) -> BTreeSet<i32> {
    let config_needle = config_needle(config);
    let mut marker_entry = marker.as_bytes().to_vec();
    marker_entry.push(0);
    processes_and_descendants(|pid, info| {
        contains(&info.cmdline, config_needle.as_bytes())
            || has_environment_entry(pid, &marker_entry)
    })
}

/// Every live process of every node under `base_dir`, with descendants: a last-resort sweep
/// for tests and tools that must not leave processes behind whatever happened.
pub(crate) fn processes_under(base_dir: &Path) -> BTreeSet<i32> {
    let config_prefix = format!("-f {}/", base_dir.display());
    let marker_prefix = format!("CORRAL_LOCAL_NODE={}/", base_dir.display());
    processes_and_descendants(|pid, info| {
        contains(&info.cmdline, config_prefix.as_bytes())
            || has_environment_prefix(pid, marker_prefix.as_bytes())
    })
}

fn processes_and_descendants(is_seed: impl Fn(i32, &ProcessInfo) -> bool) -> BTreeSet<i32> {
    let processes = live_processes();
    let own = std::process::id() as i32;
    let mut members: BTreeSet<i32> = processes
        .iter()
        .filter(|(pid, info)| **pid != own && is_seed(**pid, info))
        .map(|(pid, _)| *pid)
        .collect();
    loop {
        let before = members.len();
        for (pid, info) in &processes {
            if *pid != own && members.contains(&info.parent) {
                members.insert(*pid);
            }
        }
        if members.len() == before {
            return members;
        }
    }
}

/// Sends SIGKILL; a process that is already gone is not an error.
pub(crate) fn kill_all(pids: &BTreeSet<i32>) {
    for pid in pids {
        if let Some(pid) = rustix::process::Pid::from_raw(*pid) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}

/// Whether this process may read the environment of other users' processes: root holding
/// CAP_SYS_PTRACE (container runtimes often drop it). Without it, services of node users
/// that left their session are not found by their marker.
pub(crate) fn can_read_others_environment() -> bool {
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

fn has_environment_entry(pid: i32, entry: &[u8]) -> bool {
    let Ok(environment) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    environment
        .split_inclusive(|byte| *byte == 0)
        .any(|variable| variable == entry)
}

fn has_environment_prefix(pid: i32, prefix: &[u8]) -> bool {
    let Ok(environment) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    environment
        .split(|byte| *byte == 0)
        .any(|variable| variable.starts_with(prefix))
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
        assert!(live_processes().contains_key(&own));
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
