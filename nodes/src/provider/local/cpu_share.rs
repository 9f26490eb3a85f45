//! One CPU share per cluster for local nodes: the scheduler divides the machine between
//! clusters, not between processes, so a 3-node create beside a 1,000-node one gets as
//! much CPU as the big one while both want more than they can get.
//!
//! Every local node of a cluster runs in `<cpu mount><this process's cgroup>/
//! corral-clusters/<instance>-<cluster id>` of the cgroup v1 `cpu` controller, all with
//! the default `cpu.shares` (1024): a group is weighed as one task, whatever the number
//! of processes in it. The node's sshd is moved in as soon as it starts (beside its node
//! cgroup of v2, `cgroup`, which is what delete kills through); its sessions inherit it.
//!
//! Only where the `cpu` controller is on a v1 hierarchy this process may write to (a
//! root server on a hybrid host, such as a container without systemd). On a host with
//! cgroup v2 alone the controller belongs to the unified tree, where a process has one
//! cgroup: there clusters get no share of their own and nodes compete process by
//! process, as they always did (docs/operations.md says so).
//!
//! The reading of /proc's files is pure and tested by tables; the I/O is small.

use std::path::{Path, PathBuf};

use super::cgroup::{folder_under, is_child_of, is_plain_name, move_into, own_folder};
use crate::provider::ProviderError;

/// The folder, under this process's own cpu cgroup, holding the clusters' groups.
const CLUSTERS_FOLDER: &str = "corral-clusters";

/// Where the clusters' CPU groups are made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterCpuGroups {
    root: PathBuf,
}

impl ClusterCpuGroups {
    /// The clusters' folder of this process, made if need be; `None` where the host has
    /// no writable v1 `cpu` hierarchy (the reason is logged).
    pub fn detect() -> Option<Self> {
        own_folder(
            clusters_root,
            "no cgroup v1 cpu controller: clusters of local nodes share no CPU",
            "cpu cgroups cannot be made here: clusters of local nodes share no CPU",
        )
        .map(|root| Self { root })
    }

    /// The group of cluster `cluster` of the provider instance `instance`, made if need
    /// be; `None` for a cluster id that is not a plain name (never made into a path).
    pub fn make(&self, instance: &str, cluster: &str) -> Result<Option<PathBuf>, ProviderError> {
        if !is_plain_name(cluster) {
            return Ok(None);
        }
        let path = self.root.join(format!("{instance}-{cluster}"));
        std::fs::create_dir_all(&path).map_err(|source| ProviderError::Io {
            action: "cannot make the cluster's cpu cgroup",
            path: path.clone(),
            source,
        })?;
        Ok(Some(path))
    }

    /// Whether `path` is a cluster group of this folder (a record naming another is not
    /// acted on).
    pub fn owns(&self, path: &Path) -> bool {
        is_child_of(&self.root, path)
    }

    /// Removes the group at `path` once its last node is gone; a group still holding
    /// processes (the cluster's other nodes) stays, as does one already gone.
    pub fn remove_if_empty(&self, path: &Path) {
        if !self.owns(path) {
            return;
        }
        if let Err(error) = std::fs::remove_dir(path) {
            tracing::debug!(path = %path.display(), %error, "cluster cpu cgroup kept");
        }
    }

    /// Removes every empty group of the provider instance `instance` (a sweep for tests
    /// and tools that must leave nothing behind); returns how many went.
    pub fn clear_instance(instance: &str) -> usize {
        let Some(groups) = Self::detect() else {
            return 0;
        };
        let prefix = format!("{instance}-");
        std::fs::read_dir(&groups.root)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|entry| {
                entry
                    .file_name()
                    .to_str()
                    .is_some_and(|name| name.starts_with(&prefix))
            })
            .filter(|entry| groups.owns(&entry.path()) && std::fs::remove_dir(entry.path()).is_ok())
            .count()
    }
}

/// Moves process `pid` (a node's sshd, just started) into the group at `path`.
pub fn enter(path: &Path, pid: i32) -> Result<(), ProviderError> {
    move_into(
        path,
        pid,
        "cannot move the node's sshd into its cluster's cpu cgroup",
    )
}

/// `<cpu mount><own cpu cgroup>/corral-clusters` from /proc/self/mountinfo and
/// /proc/self/cgroup; `None` without a v1 hierarchy carrying `cpu`.
fn clusters_root(mountinfo: &str, own_cgroup: &str) -> Option<PathBuf> {
    let (mount_root, mount_point) = mountinfo.lines().find_map(|line| {
        // `id parent major:minor root mount-point options… - fstype source super-options`
        let (before, after) = line.split_once(" - ")?;
        let mut after = after.split_whitespace();
        let (fstype, super_options) = (after.next()?, after.nth(1)?);
        let carries_cpu = fstype == "cgroup" && super_options.split(',').any(|o| o == "cpu");
        let mut before = before.split_whitespace();
        carries_cpu.then(|| Some((before.nth(3)?, before.next()?)))?
    })?;
    // `hierarchy-id:controllers:path`, the cpu controller's line (alone or with others).
    let own = own_cgroup.lines().find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        controllers
            .split(',')
            .any(|c| c == "cpu")
            .then(|| path.trim())
    })?;
    // A mount of part of the hierarchy (a container's) shows paths below its root.
    let own = if mount_root == "/" {
        own
    } else {
        own.strip_prefix(mount_root)?
    };
    folder_under(mount_point, own, CLUSTERS_FOLDER)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID: &str = "\
24 30 0:22 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
25 24 0:23 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
26 24 0:24 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
27 24 0:25 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    const JOINED: &str = "\
25 24 0:23 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
";
    const CONTAINER: &str = "\
25 24 0:23 /docker/abc /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
";
    const UNIFIED: &str = "\
30 1 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate
";
    const CPUSET_ONLY: &str = "\
25 24 0:23 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
";

    #[test]
    fn the_clusters_folder_is_under_this_process_cpu_cgroup() {
        for (mountinfo, own, expected) in [
            (
                HYBRID,
                "2:cpuacct:/\n1:cpu:/\n0::/\n",
                Some("/sys/fs/cgroup/cpu/corral-clusters"),
            ),
            (
                JOINED,
                "3:cpu,cpuacct:/corral.service\n",
                Some("/sys/fs/cgroup/cpu,cpuacct/corral.service/corral-clusters"),
            ),
            (
                CONTAINER,
                "1:cpu:/docker/abc/inner\n",
                Some("/sys/fs/cgroup/cpu/inner/corral-clusters"),
            ),
            (CONTAINER, "1:cpu:/elsewhere\n", None),
            (UNIFIED, "0::/system.slice/corral.service\n", None),
            (CPUSET_ONLY, "1:cpuset:/\n", None),
            (HYBRID, "2:cpuacct:/\n", None),
            (HYBRID, "1:cpu:/../escape\n", None),
        ] {
            assert_eq!(
                clusters_root(mountinfo, own),
                expected.map(PathBuf::from),
                "{mountinfo} {own:?}"
            );
        }
    }

    #[test]
    fn a_cluster_id_that_is_not_a_plain_name_gets_no_group() {
        let groups = ClusterCpuGroups {
            root: PathBuf::from("/nonexistent/corral-clusters"),
        };
        for cluster in ["../x", "a/b", "", ".hidden"] {
            assert_eq!(groups.make("ab12cd", cluster).unwrap(), None, "{cluster:?}");
        }
    }
}
