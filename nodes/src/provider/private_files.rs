//! Files of secrets kept on disk, and the directories that hold them: the providers' key
//! directories (client private keys), each local node's directory (its host and client
//! keys, its record) and the server's data directory (the database, the secret key).
//! One place makes them all, so they all get the same guarantee.
//!
//! [`create_private_dir`] leaves a directory of mode 0700 owned by this process's
//! effective user, whatever the umask and whether it existed before (with looser
//! modes, from an older version or an operator's `mkdir`): the files in it are read by
//! this process alone, and local nodes run as other OS users of the same machine. One
//! another user owns is refused rather than chmodded, since its owner could open it
//! again at any time (and root may chmod anything). [`write_private_file`] writes a file
//! of mode 0600, whole or not at all, so a connection never loads half a key.

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::ProviderError;

/// The mode of a private directory: its owner may list, enter and write it, nobody else
/// anything.
const PRIVATE_DIR: u32 = 0o700;
/// The mode of a private file: its owner may read and write it.
const PRIVATE_FILE: u32 = 0o600;

/// The `map_err` of a file operation on `path` that failed doing `action`.
fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ProviderError {
    let path = path.to_owned();
    move |source| ProviderError::Io {
        action,
        path,
        source,
    }
}

/// What an existing directory needs to be private to user `me`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DirVerdict {
    /// Owned by `me` with exactly 0700: nothing to do (the usual case, no write).
    Private,
    /// Owned by `me` with other modes: chmod 0700.
    Restrict,
    /// Owned by another user, who could open it again: refused.
    ForeignOwner,
}

/// Whether a directory of `owner` with `mode` (permission bits and more) is private to
/// user `me`, or can be made so.
fn verdict(owner: u32, mode: u32, me: u32) -> DirVerdict {
    if owner != me {
        DirVerdict::ForeignOwner
    } else if mode & 0o7777 == PRIVATE_DIR {
        DirVerdict::Private
    } else {
        DirVerdict::Restrict
    }
}

/// Makes `dir` (and its missing parents, 0700 too) and leaves it 0700 and owned by this
/// process's effective user, also when it already existed with looser modes; an
/// existing directory of another user is an error (see the module's overview).
pub fn create_private_dir(dir: &Path) -> Result<(), ProviderError> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(PRIVATE_DIR)
        .create(dir)
        .map_err(io("cannot create the private directory", dir))?;
    let metadata = std::fs::metadata(dir).map_err(io("cannot read the owner and mode of", dir))?;
    let me = rustix::process::geteuid().as_raw();
    match verdict(metadata.uid(), metadata.mode(), me) {
        DirVerdict::Private => Ok(()),
        DirVerdict::Restrict => {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(PRIVATE_DIR))
                .map_err(io("cannot make private the directory", dir))
        }
        DirVerdict::ForeignOwner => Err(ProviderError::Io {
            action: "cannot keep secrets in",
            path: dir.to_owned(),
            source: std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "it is owned by user {}, not by this process's user {me}, so it \
                     cannot be kept private to this process",
                    metadata.uid()
                ),
            ),
        }),
    }
}

/// Writes `bytes` to `path` readable by the owner only, replacing it atomically so a
/// connection never loads half a key.
pub fn write_private_file(path: &Path, bytes: &[u8]) -> Result<(), ProviderError> {
    use std::os::unix::fs::OpenOptionsExt;
    let temporary = path.with_extension(format!("tmp-{}", uuid::Uuid::new_v4().simple()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(PRIVATE_FILE)
        .open(&temporary)
        .map_err(io("cannot write the key", &temporary))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(io("cannot write the key", &temporary))?;
    std::fs::rename(&temporary, path).map_err(io("cannot write the key", path))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode_of(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().mode() & 0o7777
    }

    #[test]
    fn a_directory_is_private_only_to_its_owner() {
        let cases = [
            // (owner, mode, me, verdict)
            (1000, 0o40700, 1000, DirVerdict::Private),
            (1000, 0o40755, 1000, DirVerdict::Restrict),
            (1000, 0o40500, 1000, DirVerdict::Restrict),
            (1000, 0o41700, 1000, DirVerdict::Restrict),
            (0, 0o40700, 0, DirVerdict::Private),
            (1001, 0o40700, 1000, DirVerdict::ForeignOwner),
            // root can chmod a user's dir, but that user could open it again.
            (1000, 0o40755, 0, DirVerdict::ForeignOwner),
        ];
        for (owner, mode, me, expected) in cases {
            assert_eq!(
                verdict(owner, mode, me),
                expected,
                "owner {owner}, mode {mode:o}, me {me}"
            );
        }
    }

    #[test]
    fn dirs_are_0700_and_files_0600() {
        let root = tempfile::tempdir().unwrap();
        // New, with a missing parent.
        let keys = root.path().join("data/keys");
        create_private_dir(&keys).unwrap();
        assert_eq!(mode_of(&keys), 0o700);
        assert_eq!(mode_of(&root.path().join("data")), 0o700);
        // Existing with looser modes, and again (nothing to change).
        std::fs::set_permissions(&keys, std::fs::Permissions::from_mode(0o755)).unwrap();
        create_private_dir(&keys).unwrap();
        assert_eq!(mode_of(&keys), 0o700);
        create_private_dir(&keys).unwrap();
        assert_eq!(mode_of(&keys), 0o700);

        let key = keys.join("node-1");
        write_private_file(&key, b"first").unwrap();
        assert_eq!(mode_of(&key), 0o600);
        // Replaced whole, still 0600, and no temporary file left beside it.
        write_private_file(&key, b"second").unwrap();
        assert_eq!(mode_of(&key), 0o600);
        assert_eq!(std::fs::read(&key).unwrap(), b"second");
        assert_eq!(std::fs::read_dir(&keys).unwrap().count(), 1);
    }

    #[test]
    fn a_file_in_the_way_is_an_error() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("not-a-dir");
        std::fs::write(&path, "x").unwrap();
        let error = create_private_dir(&path).unwrap_err().to_string();
        assert!(error.contains("not-a-dir"), "{error}");
    }
}
