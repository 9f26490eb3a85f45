//! Reading the files of a catalog directory as `corral catalog import` sends them: what
//! is inside the directory is never followed through a symbolic link, and no file is
//! read past the most the server would take.
//!
//! Why: the import uploads what it reads (resources become files on nodes, readable by
//! the tenant), so a link in `scripts/` pointing at the CLI's own token file, or at
//! anything else the user can read, would publish it. A link is refused with an error
//! naming it, whatever it points to; a file that is too big is refused from its size
//! before a byte of it is read (a sparse terabyte costs nothing to make).
//!
//! The path the user names on the command line is theirs to choose and may itself be a
//! link; everything found inside it may not.

use std::fs::{File, FileType, Metadata};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use anyhow::{bail, Context};

/// What a directory entry is, as the import treats it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    /// A symbolic link: refused, never followed.
    Link,
    /// A socket, a FIFO, a device: nothing to import.
    Other,
}

impl EntryKind {
    /// The kind of a directory entry's type (`DirEntry::file_type` does not follow
    /// links).
    pub fn of_type(file_type: FileType) -> Self {
        if file_type.is_symlink() {
            Self::Link
        } else if file_type.is_dir() {
            Self::Dir
        } else if file_type.is_file() {
            Self::File
        } else {
            Self::Other
        }
    }
}

/// Whether the links to files are followed: only for the path named on the command
/// line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    Follow,
    Refuse,
}

/// What `path` is, without following it (`None`: nothing is there); a link is an
/// error naming it.
pub fn entry_kind(path: &Path) -> anyhow::Result<Option<EntryKind>> {
    match std::fs::symlink_metadata(path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error).with_context(|| format!("cannot read {}", path.display())),
        Ok(metadata) => refuse_link(path, EntryKind::of_type(metadata.file_type())).map(Some),
    }
}

/// `kind`, or the error for a link at `path`.
pub fn refuse_link(path: &Path, kind: EntryKind) -> anyhow::Result<EntryKind> {
    if kind == EntryKind::Link {
        bail!(
            "{}: is a symbolic link; catalog import does not follow links (copy the file \
             into the directory instead)",
            path.display()
        );
    }
    Ok(kind)
}

/// Refuses a file of `len` bytes when at most `max` may be sent.
fn check_size(path: &Path, len: u64, max: usize) -> anyhow::Result<()> {
    if len > max as u64 {
        bail!(
            "{}: {len} bytes; a file imported may have at most {max}",
            path.display()
        );
    }
    Ok(())
}

/// The bytes of the regular file at `path`, refused when it is bigger than `max`
/// (checked before reading) or, with [`Links::Refuse`], when it is a link.
///
/// The file is opened and then checked to be the very file that was looked at without
/// following links (same device and inode), so a link swapped in between the look and
/// the open is refused too.
pub fn read_capped(path: &Path, max: usize, links: Links) -> anyhow::Result<Vec<u8>> {
    let looked = match links {
        Links::Refuse => {
            let metadata = std::fs::symlink_metadata(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            refuse_link(path, EntryKind::of_type(metadata.file_type()))?;
            Some(metadata)
        }
        Links::Follow => None,
    };
    let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let opened = file
        .metadata()
        .with_context(|| format!("cannot read {}", path.display()))?;
    if let Some(looked) = &looked {
        if !same_file(looked, &opened) {
            bail!(
                "{}: changed while it was read (replaced by a link?); nothing was sent",
                path.display()
            );
        }
    }
    if !opened.is_file() {
        bail!("{}: is not a regular file", path.display());
    }
    check_size(path, opened.len(), max)?;
    // A file that grows after the check still stops at one byte past the most.
    let mut bytes = Vec::with_capacity(usize::try_from(opened.len()).unwrap_or(0));
    file.take(max as u64 + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    check_size(path, bytes.len() as u64, max)?;
    Ok(bytes)
}

fn same_file(one: &Metadata, other: &Metadata) -> bool {
    one.dev() == other.dev() && one.ino() == other.ino()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn entries_are_told_apart_without_following_links() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink("/nonexistent", &dangling).unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let dir_link = dir.path().join("dir-link");
        std::os::unix::fs::symlink(&sub, &dir_link).unwrap();
        let missing = dir.path().join("missing");
        for (path, expected) in [
            (&file, Some(EntryKind::File)),
            (&sub, Some(EntryKind::Dir)),
            (&missing, None),
        ] {
            assert_eq!(entry_kind(path).unwrap(), expected, "{}", path.display());
        }
        for path in [&link, &dangling, &dir_link] {
            let error = entry_kind(path).unwrap_err().to_string();
            assert!(
                error.contains(&path.display().to_string()) && error.contains("symbolic link"),
                "{error}"
            );
        }
    }

    #[test]
    fn sizes_are_checked_against_the_most() {
        let path = Path::new("f");
        for (len, max, ok) in [
            (0, 0, true),
            (10, 10, true),
            (11, 10, false),
            (u64::MAX, 10, false),
        ] {
            assert_eq!(check_size(path, len, max).is_ok(), ok, "{len} of {max}");
        }
    }

    #[test]
    fn a_link_is_refused_and_a_big_file_is_refused_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("token");
        std::fs::write(&secret, "secret-token").unwrap();
        let link = dir.path().join("web.sh");
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        let error = read_capped(&link, 100, Links::Refuse)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("web.sh") && error.contains("symbolic link"),
            "{error}"
        );
        assert!(!error.contains("secret-token"));
        // The command line's own path may be a link.
        assert_eq!(
            read_capped(&link, 100, Links::Follow).unwrap(),
            b"secret-token"
        );

        // A terabyte, sparse: reading it would not end; its size refuses it at once.
        let huge = dir.path().join("huge.sh");
        File::create(&huge).unwrap().set_len(1 << 40).unwrap();
        let error = read_capped(&huge, 1024, Links::Refuse)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("huge.sh") && error.contains("1099511627776 bytes"),
            "{error}"
        );
        assert_eq!(
            read_capped(&secret, 12, Links::Refuse).unwrap(),
            b"secret-token"
        );
        assert!(read_capped(&secret, 11, Links::Refuse).is_err());
        let error = read_capped(dir.path(), 100, Links::Refuse)
            .unwrap_err()
            .to_string();
        assert!(error.contains("not a regular file"), "{error}");
    }
}
