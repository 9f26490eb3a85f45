//! The OS users local nodes run their commands as when the server runs as root.
//!
//! Each tenant gets one unprivileged user, named from its id (`corral-` and the first 10
//! hex digits of the id's SHA-256, so any id makes a valid, fixed-length name); nodes of
//! no tenant share `corral-node`. A user is made on first use with `useradd` and never
//! gets a password, sudo or a home of its own: every node has its own HOME, which sshd
//! sets per node. Several Corral processes (server, workers, tests) may make the same user
//! at once, so "already exists" is success and a failed `useradd` is retried; within one
//! process the work is serialised and the result kept, so the users file is read once per
//! user and process, not per node.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::provider::ProviderError;
use crate::sync::lock_unpoisoned;

/// The user of nodes made for no tenant.
pub const SHARED_USER: &str = "corral-node";

/// Where `useradd` lives on Debian and most distributions (sbin is often not on PATH).
const USERADD_CANDIDATES: &[&str] = &["/usr/sbin/useradd", "/sbin/useradd"];

/// `useradd`'s exit status when the name is taken (by another process's `useradd`).
const USERADD_EXISTS: i32 = 9;

/// Attempts at `useradd`: a concurrent `useradd` elsewhere holds the users file's lock
/// for a few milliseconds, and ours then fails instead of waiting.
const USERADD_ATTEMPTS: u32 = 8;

const PASSWD: &str = "/etc/passwd";

/// A node user as the users file has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeUser {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

/// Users this process made or found. Entries go in whole, so a panicking holder cannot
/// leave the map half-changed.
static KNOWN: Mutex<BTreeMap<String, NodeUser>> = Mutex::new(BTreeMap::new());

/// Held while looking up and making a user, so concurrent creates of one tenant's first
/// nodes run `useradd` once.
static MAKING: Mutex<()> = Mutex::new(());

/// The node user for nodes of `tenant_id`.
pub fn name_for(tenant_id: Option<&str>) -> String {
    match tenant_id {
        None => SHARED_USER.to_owned(),
        Some(tenant) => {
            let digest = Sha256::digest(tenant.as_bytes());
            let hex = hex::encode(digest);
            format!("corral-{}", &hex[..10])
        }
    }
}

/// The user `name` (for nodes of `tenant_id`), made if it does not exist yet.
pub async fn ensure(
    name: &str,
    tenant_id: Option<&str>,
    node: &str,
) -> Result<NodeUser, ProviderError> {
    if let Some(user) = lock_unpoisoned(&KNOWN).get(name) {
        return Ok(user.clone());
    }
    let comment = comment_for(tenant_id);
    let (owned_name, owned_node) = (name.to_owned(), node.to_owned());
    // `useradd` and the users file are blocking work: off the async workers.
    tokio::task::spawn_blocking(move || ensure_blocking(&owned_name, &comment, &owned_node))
        .await
        // Only a panicking set-up fails to join.
        .map_err(|error| ProviderError::NodeUser {
            node: node.to_owned(),
            user: name.to_owned(),
            detail: format!("setting the user up failed: {error}"),
        })?
}

fn ensure_blocking(name: &str, comment: &str, node: &str) -> Result<NodeUser, ProviderError> {
    let _making = lock_unpoisoned(&MAKING);
    if let Some(user) = lock_unpoisoned(&KNOWN).get(name) {
        return Ok(user.clone());
    }
    let failed = |detail: String| ProviderError::NodeUser {
        node: node.to_owned(),
        user: name.to_owned(),
        detail,
    };
    let mut last_failure = String::new();
    for attempt in 0..=USERADD_ATTEMPTS {
        if let Some(user) = lookup(Path::new(PASSWD), name)? {
            check_unprivileged(&user).map_err(failed)?;
            lock_unpoisoned(&KNOWN).insert(name.to_owned(), user.clone());
            return Ok(user);
        }
        if attempt == USERADD_ATTEMPTS {
            break;
        }
        match useradd(name, comment) {
            // Made here or by another process: the next lookup finds it.
            Ok(()) => {}
            Err(UseraddFailure::Missing(detail)) => return Err(failed(detail)),
            Err(UseraddFailure::Failed(detail)) => {
                last_failure = detail;
                std::thread::sleep(Duration::from_millis(20 * u64::from(attempt + 1)));
            }
        }
    }
    Err(failed(if last_failure.is_empty() {
        format!(
            "useradd reports that it exists, but {PASSWD} does not list it (is it a network \
             account?); remove it or let {PASSWD} hold it"
        )
    } else {
        format!("useradd failed {USERADD_ATTEMPTS} times, last: {last_failure}")
    }))
}

/// Refuses a user that would hand nodes the server's or root's privileges, whoever made it.
fn check_unprivileged(user: &NodeUser) -> Result<(), String> {
    let server = rustix::process::geteuid().as_raw();
    if user.uid == 0 || user.gid == 0 || user.uid == server {
        Err(format!(
            "it exists with uid {} and gid {}, which are root's or this server's; nodes must \
             not run with those: remove the user (`userdel {}`) and Corral makes it anew",
            user.uid, user.gid, user.name
        ))
    } else {
        Ok(())
    }
}

/// The users file's comment field (`:` and newlines would break it).
fn comment_for(tenant_id: Option<&str>) -> String {
    let tenant = tenant_id.map_or_else(
        || "no tenant".to_owned(),
        |tenant| {
            tenant
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                .take(64)
                .collect()
        },
    );
    format!("Corral local nodes ({tenant})")
}

enum UseraddFailure {
    /// No `useradd` on this machine: retrying will not help.
    Missing(String),
    Failed(String),
}

fn useradd(name: &str, comment: &str) -> Result<(), UseraddFailure> {
    let Some(useradd) = locate_useradd() else {
        return Err(UseraddFailure::Missing(format!(
            "useradd was not found (looked for {} and on PATH); install it with \
             `apt-get install passwd`",
            USERADD_CANDIDATES.join(", ")
        )));
    };
    let output = Command::new(&useradd)
        .args(["--system", "--user-group", "--no-create-home"])
        // Only where sshd starts a session; each node's HOME is its own (sshd_config
        // sets it). `/` always exists, so sshd never complains that it cannot go there.
        .args(["--home-dir", "/", "--shell", "/bin/bash"])
        // `*` matches no password, so nobody logs in with one; useradd's default `!`
        // would mark the account locked, and sshd (without PAM) then refuses keys too.
        .args(["--password", "*", "--comment", comment])
        .arg(name)
        .stdin(Stdio::null())
        .output()
        .map_err(|error| {
            UseraddFailure::Failed(format!("running {} failed: {error}", useradd.display()))
        })?;
    match output.status.code() {
        Some(0) | Some(USERADD_EXISTS) => Ok(()),
        _ => Err(UseraddFailure::Failed(format!(
            "useradd failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ))),
    }
}

fn locate_useradd() -> Option<PathBuf> {
    USERADD_CANDIDATES
        .iter()
        .map(PathBuf::from)
        .chain(
            std::env::var_os("PATH")
                .into_iter()
                .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
                .map(|dir| dir.join("useradd")),
        )
        .find(|candidate| candidate.is_file())
}

/// The user `name` in the users file at `passwd`, if it is there.
fn lookup(passwd: &Path, name: &str) -> Result<Option<NodeUser>, ProviderError> {
    let text = std::fs::read_to_string(passwd).map_err(|source| ProviderError::Io {
        action: "reading",
        path: passwd.to_owned(),
        source,
    })?;
    Ok(parse_passwd(&text, name))
}

/// `name:password:uid:gid:comment:home:shell` lines; the first one of `name` counts, as
/// for the system's own lookups.
fn parse_passwd(text: &str, name: &str) -> Option<NodeUser> {
    text.lines().find_map(|line| {
        let mut fields = line.split(':');
        if fields.next()? != name {
            return None;
        }
        let _password = fields.next()?;
        Some(NodeUser {
            name: name.to_owned(),
            uid: fields.next()?.trim().parse().ok()?,
            gid: fields.next()?.trim().parse().ok()?,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_fixed_short_and_tenant_specific() {
        let a = name_for(Some("tenant-a"));
        assert_eq!(a, name_for(Some("tenant-a")));
        assert_ne!(a, name_for(Some("tenant-b")));
        assert!(a.starts_with("corral-") && a.len() == 17, "{a}");
        assert!(a[7..].chars().all(|c| c.is_ascii_hexdigit()), "{a}");
        // Even an id no users file would take makes a valid name.
        assert_eq!(name_for(Some("a:b\nc d")).len(), 17);
        assert_eq!(name_for(None), SHARED_USER);
    }

    #[test]
    fn passwd_lines_give_uid_and_gid() {
        let text = "root:x:0:0:root:/root:/bin/bash\n\
                    corral-node:x:998:997:Corral local nodes:/:/bin/bash\n\
                    broken:x:notanumber:1::/:/bin/sh\n";
        assert_eq!(
            parse_passwd(text, "corral-node"),
            Some(NodeUser {
                name: "corral-node".to_owned(),
                uid: 998,
                gid: 997
            })
        );
        assert_eq!(parse_passwd(text, "corral"), None);
        assert_eq!(parse_passwd(text, "broken"), None);
    }

    #[test]
    fn root_is_never_a_node_user() {
        let root = NodeUser {
            name: "corral-node".to_owned(),
            uid: 0,
            gid: 0,
        };
        let message = check_unprivileged(&root).unwrap_err();
        assert!(message.contains("userdel corral-node"), "{message}");
    }

    #[test]
    fn comments_keep_only_safe_characters() {
        assert_eq!(
            comment_for(Some("t:1\nx")),
            "Corral local nodes (t1x)".to_owned()
        );
        assert_eq!(comment_for(None), "Corral local nodes (no tenant)");
    }
}
