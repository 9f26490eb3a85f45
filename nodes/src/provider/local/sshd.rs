//! Running OpenSSH's own tools for a local node: `ssh-keygen` for keys, `sshd` itself.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use super::files::{self, NodeDir};
use super::procs;
use crate::provider::{ProviderError, ResourceLimits};

/// Where Debian and most distributions put sshd; PATH rarely holds sbin for other users.
const SSHD_CANDIDATES: &[&str] = &["/usr/sbin/sshd", "/usr/local/sbin/sshd", "/sbin/sshd"];

/// sshd must be run by absolute path (it re-executes itself for every connection).
pub fn locate_sshd() -> Result<PathBuf, ProviderError> {
    SSHD_CANDIDATES
        .iter()
        .map(PathBuf::from)
        .chain(search_path("sshd"))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| ProviderError::SshdMissing {
            looked_for: SSHD_CANDIDATES.join(", ") + " and PATH",
        })
}

pub fn locate_tool(name: &str) -> Result<PathBuf, ProviderError> {
    search_path(name)
        .into_iter()
        .chain([Path::new("/usr/bin").join(name)])
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| ProviderError::ToolMissing {
            tool: name.to_owned(),
        })
}

fn search_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// Makes an unencrypted ed25519 key pair at `path` and `path.pub`.
pub async fn generate_key(
    keygen: &Path,
    path: &Path,
    comment: &str,
    node: &str,
) -> Result<(), ProviderError> {
    let output = Command::new(keygen)
        .args(["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .await
        .map_err(|source| ProviderError::Io {
            action: "running",
            path: keygen.to_owned(),
            source,
        })?;
    if output.status.success() {
        Ok(())
    } else {
        Err(ProviderError::ToolFailed {
            tool: "ssh-keygen".to_owned(),
            node: node.to_owned(),
            detail: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        })
    }
}

/// A port on `host` (a loopback address) that was free a moment ago (sshd binding it may
/// still race with another process; [`start`] reports that as [`StartFailure::PortTaken`]
/// so the caller can retry).
pub fn free_port(host: &str) -> Result<u16, ProviderError> {
    std::net::TcpListener::bind((host, 0))
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .map_err(|source| ProviderError::Io {
            action: "finding a free port on",
            path: PathBuf::from(host),
            source,
        })
}

#[derive(Debug)]
pub enum StartFailure {
    PortTaken,
    Failed(ProviderError),
}

/// Starts the node's sshd (it daemonizes into its own session) and waits until it has
/// written its pid file, which it does only after binding its port.
pub async fn start(
    sshd: &Path,
    dir: &NodeDir,
    node: &str,
    limits: &ResourceLimits,
) -> Result<i32, StartFailure> {
    let io = |action, path: PathBuf| {
        move |source| {
            StartFailure::Failed(ProviderError::Io {
                action,
                path,
                source,
            })
        }
    };
    for stale in [dir.pid_file(), dir.log_file()] {
        match std::fs::remove_file(&stale) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                return Err(io("removing", stale)(error));
            }
            _ => {}
        }
    }
    let command = files::sshd_command(sshd, dir, limits);
    let status = Command::new(&command[0])
        .args(&command[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .await
        .map_err(io("running", sshd.to_owned()))?;
    if !status.status.success() {
        let detail = format!(
            "{} exited with {}: {}{}",
            sshd.display(),
            status.status,
            String::from_utf8_lossy(&status.stderr).trim(),
            read_log(dir)
        );
        return Err(classify(node, detail));
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(pid) = read_pid(dir) {
            if procs::is_node_sshd(pid, &dir.sshd_config()) {
                return Ok(pid);
            }
        }
        let log = read_log(dir);
        if !log.is_empty()
            && read_pid(dir).is_none()
            && procs::find_node_sshd(&dir.sshd_config()).is_none()
        {
            return Err(classify(node, log));
        }
        if tokio::time::Instant::now() > deadline {
            return Err(StartFailure::Failed(ProviderError::SshdStart {
                node: node.to_owned(),
                detail: format!("no pid file after 10 s; log: {log:?}"),
            }));
        }
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
}

fn classify(node: &str, detail: String) -> StartFailure {
    if detail.contains("Address already in use") || detail.contains("Cannot bind any address") {
        StartFailure::PortTaken
    } else {
        StartFailure::Failed(ProviderError::SshdStart {
            node: node.to_owned(),
            detail,
        })
    }
}

pub fn read_pid(dir: &NodeDir) -> Option<i32> {
    std::fs::read_to_string(dir.pid_file())
        .ok()?
        .trim()
        .parse()
        .ok()
}

fn read_log(dir: &NodeDir) -> String {
    std::fs::read_to_string(dir.log_file())
        .unwrap_or_default()
        .trim()
        .to_owned()
}
