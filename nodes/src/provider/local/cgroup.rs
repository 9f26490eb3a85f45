//! A cgroup (v2) per local node, where the host lets this process make one: every
//! process of the node is in it whatever it does to its environment, session or parent
//! (`env -i setsid …` loses the node's environment marker and leaves sshd's process
//! tree), so delete kills them all through it.
//!
//! The node's sshd is moved into `<cgroup2 mount><this process's cgroup>/corral-nodes/
//! <instance>-<node id>` as soon as it has started, before anything connects to it, so
//! every session forked from it starts inside. Node users cannot move themselves out:
//! the cgroup files are root's. Where cgroup v2 is not mounted or not writable (Corral
//! not running as root, a read-only /sys/fs/cgroup), nodes have none and delete relies
//! on the environment marker and the process tree alone (docs/security.md says so).
//!
//! The parsing of /proc's files is pure and tested by tables; the I/O is small.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::provider::ProviderError;

/// The folder, under this process's own cgroup, holding the nodes' cgroups.
const NODES_FOLDER: &str = "corral-nodes";
/// Rounds of kill-and-look when the kernel has no `cgroup.kill` (before Linux 5.14).
const KILL_ROUNDS: usize = 50;

/// Where nodes' cgroups are made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeCgroups {
    root: PathBuf,
}

impl NodeCgroups {
    /// The nodes' cgroup folder of this process, made if need be; `None` where the host
    /// has no writable cgroup v2 (the reason is logged).
    pub fn detect() -> Option<Self> {
        own_folder(
            nodes_root,
            "no cgroup v2 hierarchy: local nodes get no cgroup of their own",
            "cgroups cannot be made here: local nodes get none of their own",
        )
        .map(|root| Self { root })
    }

    /// Where the cgroup of node `node` of the provider instance `instance` is.
    pub fn path_of(&self, instance: &str, node: &str) -> PathBuf {
        self.root.join(format!("{instance}-{node}"))
    }

    /// The cgroup of node `node` of the provider instance `instance`, made if need be.
    pub fn make(&self, instance: &str, node: &str) -> Result<PathBuf, ProviderError> {
        let path = self.path_of(instance, node);
        std::fs::create_dir_all(&path).map_err(|source| ProviderError::Io {
            action: "cannot make the node's cgroup",
            path: path.clone(),
            source,
        })?;
        Ok(path)
    }

    /// Whether `path` is a node cgroup of this folder (a record naming another is not
    /// acted on: delete kills everything in it).
    pub fn owns(&self, path: &Path) -> bool {
        is_child_of(&self.root, path)
    }
}

/// Whether `path` is a cgroup right below `root` with a plain name.
pub(super) fn is_child_of(root: &Path, path: &Path) -> bool {
    path.parent() == Some(root)
        && path
            .file_name()
            .and_then(|name| name.to_str())
            .is_some_and(is_plain_name)
}

/// A name that is one path component and not hidden: ASCII letters, digits, `-_.`.
pub(super) fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The folder `folder_of` finds from this process's /proc/self/mountinfo and
/// /proc/self/cgroup, made if need be. `None` where the host has no such folder or it
/// cannot be made: the local provider then does without it, so the reason is logged
/// (`missing` or `unmakeable`), not returned.
pub(super) fn own_folder(
    folder_of: fn(&str, &str) -> Option<PathBuf>,
    missing: &str,
    unmakeable: &str,
) -> Option<PathBuf> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let Some(folder) = folder_of(&mountinfo, &own) else {
        tracing::info!("{missing}");
        return None;
    };
    match std::fs::create_dir_all(&folder) {
        Ok(()) => Some(folder),
        Err(error) => {
            tracing::info!(path = %folder.display(), %error, "{unmakeable}");
            None
        }
    }
}

/// `<mount point><own cgroup path>/<folder>`; `None` for a path that climbs (`..`).
pub(super) fn folder_under(mount_point: &str, own: &str, folder: &str) -> Option<PathBuf> {
    let mut root = PathBuf::from(mount_point);
    for part in own.split('/').filter(|part| !part.is_empty()) {
        if part == ".." || part == "." {
            return None;
        }
        root.push(part);
    }
    Some(root.join(folder))
}

/// `<cgroup2 mount><own cgroup>/corral-nodes` from /proc/self/mountinfo and
/// /proc/self/cgroup; `None` without a cgroup v2 mount or a v2 entry (`0::`).
fn nodes_root(mountinfo: &str, own_cgroup: &str) -> Option<PathBuf> {
    let mount = mountinfo.lines().find_map(|line| {
        // `id parent major:minor root mount-point options… - fstype source options`
        let (before, after) = line.split_once(" - ")?;
        let fstype = after.split_whitespace().next()?;
        (fstype == "cgroup2").then(|| before.split_whitespace().nth(4))?
    })?;
    let own = own_cgroup
        .lines()
        .find_map(|line| line.strip_prefix("0::"))?
        .trim();
    folder_under(mount, own, NODES_FOLDER)
}

/// Moves process `pid` (the node's sshd, just started) into the cgroup at `path`.
pub fn enter(path: &Path, pid: i32) -> Result<(), ProviderError> {
    move_into(path, pid, "cannot move the node's sshd into its cgroup")
}

/// Writes `pid` into the `cgroup.procs` of the cgroup at `path` (of either version).
pub(super) fn move_into(path: &Path, pid: i32, action: &'static str) -> Result<(), ProviderError> {
    let procs = path.join("cgroup.procs");
    std::fs::write(&procs, pid.to_string()).map_err(|source| ProviderError::Io {
        action,
        path: procs,
        source,
    })
}

/// The processes in the cgroup at `path` now (none when it is gone).
fn members(path: &Path) -> BTreeSet<i32> {
    std::fs::read_to_string(path.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect()
}

/// Kills every process in the node's cgroup at `path` and removes it; a cgroup already
/// gone is fine. Survivors (there should be none) are an error naming them.
pub async fn kill_and_remove(node: &str, path: &Path) -> Result<(), ProviderError> {
    if !path.is_dir() {
        return Ok(());
    }
    // One write kills the whole cgroup at once, forks in flight included (Linux 5.14+);
    // without it, kill what is listed until nothing is.
    let killed_at_once = std::fs::write(path.join("cgroup.kill"), "1").is_ok();
    for _ in 0..KILL_ROUNDS {
        let left = members(path);
        if left.is_empty() {
            break;
        }
        if !killed_at_once {
            super::procs::kill_all(&left);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let survivors = members(path);
    if !survivors.is_empty() {
        return Err(ProviderError::Survivors {
            node: node.to_owned(),
            pids: survivors.into_iter().collect(),
        });
    }
    // Killed processes leave the cgroup once reaped; until then it is busy.
    let mut last = None;
    for _ in 0..KILL_ROUNDS {
        match std::fs::remove_dir(path) {
            Ok(()) => return Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(error) => last = Some(error),
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Err(ProviderError::Io {
        action: "cannot remove the node's cgroup",
        path: path.to_owned(),
        source: last.unwrap_or_else(|| std::io::Error::other("busy")),
    })
}

/// Kills and removes every node cgroup of the provider instance `instance` (a last-resort
/// sweep, blocking, for tests and tools that must leave nothing behind); returns how many
/// went.
pub fn clear_instance(instance: &str) -> usize {
    let Some(cgroups) = NodeCgroups::detect() else {
        return 0;
    };
    let prefix = format!("{instance}-");
    let mut removed = 0;
    for entry in std::fs::read_dir(&cgroups.root)
        .into_iter()
        .flatten()
        .flatten()
    {
        let path = entry.path();
        let ours = entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with(&prefix));
        if !ours || !cgroups.owns(&path) {
            continue;
        }
        let _ = std::fs::write(path.join("cgroup.kill"), "1");
        for _ in 0..KILL_ROUNDS {
            super::procs::kill_all(&members(&path));
            if std::fs::remove_dir(&path).is_ok() {
                removed += 1;
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID: &str = "\
24 30 0:22 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
25 24 0:23 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
26 24 0:24 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    const UNIFIED: &str = "\
30 1 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate
";
    const V1_ONLY: &str = "\
25 24 0:23 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
";

    #[test]
    fn the_nodes_folder_is_under_this_process_cgroup_on_the_v2_mount() {
        for (mountinfo, own, expected) in [
            (
                HYBRID,
                "4:memory:/x\n0::/\n",
                Some("/sys/fs/cgroup/unified/corral-nodes"),
            ),
            (
                UNIFIED,
                "0::/system.slice/corral.service\n",
                Some("/sys/fs/cgroup/system.slice/corral.service/corral-nodes"),
            ),
            (V1_ONLY, "4:memory:/\n", None),
            (UNIFIED, "4:memory:/\n", None),
            (UNIFIED, "0::/../escape\n", None),
        ] {
            assert_eq!(
                nodes_root(mountinfo, own),
                expected.map(PathBuf::from),
                "{own:?}"
            );
        }
    }

    #[test]
    fn only_node_cgroups_of_the_folder_are_acted_on() {
        let cgroups = NodeCgroups {
            root: PathBuf::from("/sys/fs/cgroup/corral-nodes"),
        };
        for (path, owned) in [
            ("/sys/fs/cgroup/corral-nodes/ab12cd-c1-1", true),
            ("/sys/fs/cgroup/corral-nodes", false),
            ("/sys/fs/cgroup/system.slice", false),
            ("/sys/fs/cgroup/corral-nodes/../system.slice", false),
            ("/sys/fs/cgroup/corral-nodes/x/y", false),
            ("/sys/fs/cgroup/corral-nodes/.hidden", false),
        ] {
            assert_eq!(cgroups.owns(Path::new(path)), owned, "{path}");
        }
    }
}
