//! A local node's directories: where each file lives, the sshd config written into it,
//! and the command line that starts its sshd.
//!
//! A node has its node dir under the provider's base dir (host key, Corral's client key,
//! node.json, sshd_config, sshd's pid file and log: root's alone when nodes run as users
//! of their own) and, when its commands run as a node user, a home area under the home
//! root, outside the data dir, holding what that user must reach: `authorized_keys`
//! (read by sshd with the user's privileges) and `home/`, the sessions' HOME. Nodes that
//! run as the server's user keep both inside the node dir, as every node once did; for
//! the others the node dir links to both, so root finds every node's files there.

use std::path::{Path, PathBuf};

use crate::provider::ResourceLimits;

/// The paths of one node.
#[derive(Debug, Clone)]
pub struct NodeDir {
    pub root: PathBuf,
    /// The home area (`<home root>/<instance>/<node id>`), if the node has one.
    pub area: Option<PathBuf>,
}

impl NodeDir {
    /// A node dir alone: enough to read its record.
    pub fn new(root: PathBuf) -> Self {
        Self { root, area: None }
    }
    pub fn with_area(root: PathBuf, area: Option<PathBuf>) -> Self {
        Self { root, area }
    }
    pub fn record(&self) -> PathBuf {
        self.root.join("node.json")
    }
    pub fn host_key(&self) -> PathBuf {
        self.root.join("ssh_host_ed25519_key")
    }
    pub fn host_key_pub(&self) -> PathBuf {
        self.root.join("ssh_host_ed25519_key.pub")
    }
    pub fn client_key(&self) -> PathBuf {
        self.root.join("client_ed25519_key")
    }
    pub fn client_key_pub(&self) -> PathBuf {
        self.root.join("client_ed25519_key.pub")
    }
    pub fn authorized_keys(&self) -> PathBuf {
        self.area
            .as_ref()
            .unwrap_or(&self.root)
            .join("authorized_keys")
    }
    /// The tenant's SSH user CA the node's sshd trusts (`TrustedUserCAKeys`): read by
    /// sshd as root, so it stays in the node dir. Absent on nodes made without one.
    pub fn trusted_user_ca_keys(&self) -> PathBuf {
        self.root.join("trusted_user_ca_keys")
    }
    /// The principals a certificate must name to log in (the node's cluster): read by
    /// sshd with the node user's privileges, so it sits beside `authorized_keys`.
    pub fn authorized_principals(&self) -> PathBuf {
        self.area
            .as_ref()
            .unwrap_or(&self.root)
            .join("authorized_principals")
    }
    pub fn sshd_config(&self) -> PathBuf {
        self.root.join("sshd_config")
    }
    pub fn pid_file(&self) -> PathBuf {
        self.root.join("sshd.pid")
    }
    pub fn log_file(&self) -> PathBuf {
        self.root.join("sshd.log")
    }
    /// HOME of every session on the node.
    pub fn home(&self) -> PathBuf {
        self.area.as_ref().unwrap_or(&self.root).join("home")
    }
    /// `home` in the node dir: the home itself, or a link to it in the home area, so
    /// admins and tools find a node's files in its node dir whichever layout it has.
    pub fn home_link(&self) -> PathBuf {
        self.root.join("home")
    }
    /// `authorized_keys` in the node dir: the file itself, or a link to it, as `home`.
    pub fn authorized_keys_link(&self) -> PathBuf {
        self.root.join("authorized_keys")
    }

    /// The environment entry every process started through this node's sshd carries; it is
    /// how delete finds processes that left the session (nohup, setsid, double fork).
    pub fn marker(&self) -> String {
        format!("{}={}", super::procs::MARKER_VARIABLE, self.root.display())
    }
}

/// Paths go into sshd_config and a shell script unquoted, so they are restricted to
/// characters that mean nothing to either (and no `%`, which sshd expands).
pub fn is_plain_path(path: &Path) -> bool {
    path.to_str().is_some_and(|text| {
        !text.is_empty()
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '+' | '-'))
    })
}

pub fn sshd_config(
    node_id: &str,
    dir: &NodeDir,
    host: &str,
    port: u16,
    user: &str,
    trusts_user_ca: bool,
) -> String {
    let root = dir.root.display();
    // Certificates of the tenant's CA log in only when they name the node's cluster.
    let user_ca = if trusts_user_ca {
        format!(
            "TrustedUserCAKeys {}\nAuthorizedPrincipalsFile {}\n",
            dir.trusted_user_ca_keys().display(),
            dir.authorized_principals().display()
        )
    } else {
        String::new()
    };
    format!(
        "# Written by Corral for local node {node_id}.\n\
         Port {port}\n\
         ListenAddress {host}\n\
         HostKey {host_key}\n\
         PidFile {pid_file}\n\
         AuthorizedKeysFile {authorized_keys} {home}/{user_keys}\n\
         {user_ca}\
         AllowUsers {user}\n\
         UsePAM no\n\
         StrictModes no\n\
         PubkeyAuthentication yes\n\
         PasswordAuthentication no\n\
         KbdInteractiveAuthentication no\n\
         PermitRootLogin {root_login}\n\
         PermitUserRC no\n\
         # Commands skip the login shell's rc files: with SHLVL=1 bash does not source\n\
         # ~/.bashrc for ssh commands (root's may run pyenv, +0.34 s each), and HOME is the\n\
         # node's own. No ForceCommand: sshd refuses to signal forced-command sessions.\n\
         SetEnv HOME={home} {marker} SHLVL=1\n\
         UseDNS no\n\
         PrintMotd no\n\
         PrintLastLog no\n\
         X11Forwarding no\n\
         AllowTcpForwarding no\n\
         AllowAgentForwarding no\n\
         PermitTunnel no\n\
         # scp and sftp clients of users who reach the node through Corral, starting in\n\
         # the node's HOME (the node user's passwd home is /).\n\
         Subsystem sftp internal-sftp -d {home}\n\
         MaxSessions 64\n\
         MaxStartups 256\n\
         LogLevel ERROR\n\
         # node directory: {root}\n",
        host_key = dir.host_key().display(),
        pid_file = dir.pid_file().display(),
        authorized_keys = dir.authorized_keys().display(),
        // The users' own keys, which bootstrap keeps in the node user's file (the
        // first file, Corral's, is root's and stays out of the user's reach).
        user_keys = crate::node_scripts::AUTHORIZED_KEYS,
        home = dir.home().display(),
        marker = dir.marker(),
        // Only nodes of the old layout and of a root server without node users log in
        // as root; everywhere else root has no business on the node's sshd.
        root_login = if user == "root" {
            "prohibit-password"
        } else {
            "no"
        },
    )
}

/// The command line that starts the node's sshd under the node's limits, which every
/// session and command then inherits: `sh -c 'ulimit -v N && exec nice -n M sshd …'`.
pub fn sshd_command(sshd: &Path, dir: &NodeDir, limits: &ResourceLimits) -> Vec<String> {
    let mut launch = String::new();
    if let Some(kib) = limits.max_virtual_memory_kib {
        launch.push_str(&format!("ulimit -v {kib} && "));
    }
    launch.push_str("exec ");
    if let Some(level) = limits.nice {
        launch.push_str(&format!("nice -n {} ", level.min(19)));
    }
    launch.push_str("\"$@\"");
    vec![
        "/bin/sh".to_owned(),
        "-c".to_owned(),
        launch,
        "corral-sshd".to_owned(),
        sshd.display().to_string(),
        "-f".to_owned(),
        dir.sshd_config().display().to_string(),
        "-E".to_owned(),
        dir.log_file().display().to_string(),
        // No re-exec per connection: each connection is a fork of the node's listener,
        // which saves loading sshd, its config and its host key again (a fifth of the
        // node's CPU per connection). Re-exec re-randomizes the address-space layout for
        // every connection; a local node listens on loopback only and accepts only the
        // key Corral made for it, so it trades that for connections a fifth cheaper.
        "-r".to_owned(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_paths_only() {
        assert!(is_plain_path(Path::new("/tmp/.tmpAb12_x/nodes-1.0+x")));
        assert!(!is_plain_path(Path::new("/tmp/with space")));
        assert!(!is_plain_path(Path::new("/tmp/100%")));
        assert!(!is_plain_path(Path::new("/tmp/quote\"")));
    }

    #[test]
    fn a_node_with_a_home_area_has_its_keys_and_home_there_and_no_root_login() {
        let dir = NodeDir::with_area(
            PathBuf::from("/base/n1"),
            Some(PathBuf::from("/homes/abc/n1")),
        );
        let config = sshd_config("n1", &dir, "127.1.0.1", 2222, "corral-node", true);
        for line in [
            "HostKey /base/n1/ssh_host_ed25519_key\n",
            "AuthorizedKeysFile /homes/abc/n1/authorized_keys /homes/abc/n1/home/.ssh/authorized_keys\n",
            "AllowUsers corral-node\n",
            "PermitRootLogin no\n",
            "SetEnv HOME=/homes/abc/n1/home CORRAL_LOCAL_NODE=/base/n1 SHLVL=1\n",
            "TrustedUserCAKeys /base/n1/trusted_user_ca_keys\n",
            "AuthorizedPrincipalsFile /homes/abc/n1/authorized_principals\n",
            "Subsystem sftp internal-sftp -d /homes/abc/n1/home\n",
        ] {
            assert!(config.contains(line), "{line}");
        }
        // A node of the old layout: everything in its node dir, as before.
        let old = NodeDir::new(PathBuf::from("/base/n1"));
        let config = sshd_config("n1", &old, "127.1.0.1", 2222, "root", false);
        assert!(!config.contains("TrustedUserCAKeys"), "{config}");
        for line in [
            "AuthorizedKeysFile /base/n1/authorized_keys /base/n1/home/.ssh/authorized_keys\n",
            "PermitRootLogin prohibit-password\n",
            "SetEnv HOME=/base/n1/home CORRAL_LOCAL_NODE=/base/n1 SHLVL=1\n",
        ] {
            assert!(config.contains(line), "{line}");
        }
    }

    #[test]
    fn sshd_starts_under_the_node_limits() {
        let dir = NodeDir::new(PathBuf::from("/base/n1"));
        let limits = ResourceLimits {
            max_virtual_memory_kib: Some(1024),
            nice: Some(30),
            ..ResourceLimits::default()
        };
        let command = sshd_command(Path::new("/usr/sbin/sshd"), &dir, &limits);
        assert_eq!(command[2], "ulimit -v 1024 && exec nice -n 19 \"$@\"");
        assert_eq!(command[4..6], ["/usr/sbin/sshd", "-f"]);
        let plain = sshd_command(
            Path::new("/usr/sbin/sshd"),
            &dir,
            &ResourceLimits::default(),
        );
        assert_eq!(plain[2], "exec \"$@\"");
    }
}
