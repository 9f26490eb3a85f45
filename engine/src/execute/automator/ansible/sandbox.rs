//! The confinement of the Ansible controller: `bwrap` (Debian's bubblewrap) arguments
//! that give a playbook's controller side (lookups, templates, `delegate_to: localhost`
//! tasks, and the archive's unpacking) a view of this host with nothing of it to take.
//!
//! Inside: the system (`/usr`, `/etc`) read-only; a private `/tmp` and home on tmpfs;
//! the run's work dir at [`WORK`], read-only (its `playbook/` writable only while an
//! archive is unpacked); its own user, pid, IPC, UTS, cgroup and network namespaces.
//! No network at all: the one way out is the relay socket in the work dir, which Corral
//! connects to the step's node and nowhere else (see `relay`). So a playbook reaches
//! neither this host's loopback services nor its files, whichever tenant wrote it.
//!
//! The sandbox runs as the tenant's node user when Corral is root (bubblewrap then
//! makes an unprivileged user namespace), so nothing inside is root on the host. When
//! its leader dies the whole pid namespace goes with it: a persistent SSH master or a
//! process a playbook left behind cannot outlive the step.

use std::ffi::OsString;
use std::path::Path;

/// The program, from Debian's `bubblewrap`.
pub(super) const BWRAP: &str = "bwrap";

/// Where the work dir is seen inside the sandbox.
pub(super) const WORK: &str = "/corral";

/// The controller's home (and Ansible's), a private tmpfs.
pub(super) const HOME: &str = "/tmp/home";

/// What of the work dir the sandboxed program may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Writable {
    /// Nothing: the playbook run.
    Nothing,
    /// `playbook/`: an archive being unpacked into it.
    PlaybookDir,
}

/// How a top-level entry of this host's root is reproduced inside: Debian's merged
/// `/usr` makes `/bin`, `/lib`… links into `/usr`, which the sandbox recreates as links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum SystemEntry {
    Link { path: String, target: String },
    Directory(String),
    Absent,
}

/// The system entries the controller needs (programs, libraries, Python, `/etc` for
/// users, ssh's and Python's settings).
pub(super) const SYSTEM_ENTRIES: [&str; 6] = ["/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64"];

/// Reads what each of [`SYSTEM_ENTRIES`] is on this host.
pub(super) fn system_entries() -> Vec<SystemEntry> {
    SYSTEM_ENTRIES
        .iter()
        .map(|path| match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => match std::fs::read_link(path) {
                Ok(target) => SystemEntry::Link {
                    path: (*path).to_owned(),
                    target: target.to_string_lossy().into_owned(),
                },
                Err(_) => SystemEntry::Absent,
            },
            Ok(meta) if meta.is_dir() => SystemEntry::Directory((*path).to_owned()),
            _ => SystemEntry::Absent,
        })
        .collect()
}

/// `bwrap`'s arguments, up to and including the `--` before the confined program.
pub(super) fn arguments(system: &[SystemEntry], work: &Path, writable: Writable) -> Vec<OsString> {
    let mut args: Vec<OsString> = [
        "--unshare-all",
        "--die-with-parent",
        // A session of its own: nothing inside can push input into a terminal of ours.
        "--new-session",
        "--cap-drop",
        "ALL",
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    for entry in system {
        match entry {
            SystemEntry::Link { path, target } => {
                args.extend(["--symlink".into(), target.into(), path.into()]);
            }
            SystemEntry::Directory(path) => {
                args.extend(["--ro-bind".into(), path.into(), path.into()]);
            }
            SystemEntry::Absent => {}
        }
    }
    args.extend(
        [
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", HOME,
        ]
        .into_iter()
        .map(OsString::from),
    );
    args.extend(["--ro-bind".into(), work.into(), WORK.into()]);
    if writable == Writable::PlaybookDir {
        args.extend([
            "--bind".into(),
            work.join(super::work_dir::PLAYBOOK_DIR).into(),
            format!("{WORK}/{}", super::work_dir::PLAYBOOK_DIR).into(),
        ]);
    }
    args.extend(["--chdir".into(), WORK.into(), "--".into()]);
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(args: &[OsString]) -> String {
        args.iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn the_sandbox_sees_the_system_read_only_and_the_work_dir_as_told() {
        let merged_usr = vec![
            SystemEntry::Directory("/usr".into()),
            SystemEntry::Directory("/etc".into()),
            SystemEntry::Link {
                path: "/bin".into(),
                target: "usr/bin".into(),
            },
            SystemEntry::Absent,
        ];
        let common = "--unshare-all --die-with-parent --new-session --cap-drop ALL \
                      --ro-bind /usr /usr --ro-bind /etc /etc --symlink usr/bin /bin \
                      --proc /proc --dev /dev --tmpfs /tmp --dir /tmp/home \
                      --ro-bind /tmp/corral-ansible-x /corral";
        for (writable, expected) in [
            (Writable::Nothing, format!("{common} --chdir /corral --")),
            (
                Writable::PlaybookDir,
                format!(
                    "{common} --bind /tmp/corral-ansible-x/playbook /corral/playbook \
                     --chdir /corral --"
                ),
            ),
        ] {
            assert_eq!(
                text(&arguments(
                    &merged_usr,
                    Path::new("/tmp/corral-ansible-x"),
                    writable
                )),
                expected
            );
        }
    }

    #[test]
    fn nothing_of_the_host_is_writable_and_no_network_is_shared() {
        let args = text(&arguments(
            &system_entries(),
            Path::new("/w"),
            Writable::Nothing,
        ));
        // `--unshare-all` takes the network namespace too; `--share-net` would undo it.
        assert!(args.contains("--unshare-all") && !args.contains("--share-net"));
        // The only writable binds are tmpfs (private) ones.
        assert!(!args.contains("--bind "), "{args}");
        assert!(!args.contains("--dev-bind"), "{args}");
    }
}
