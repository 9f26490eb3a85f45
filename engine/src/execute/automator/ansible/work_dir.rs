//! The run's work dir, written by this process before the tenant's user can touch it.
//!
//! When Corral is root the controller runs as the tenant's node user, whose processes
//! (left running by a shell step, say) may race anything root does by path. So root
//! never writes into a directory that user can write: the work dir is root's (mode
//! 0750, group the tenant's), every file is created anew in it (`O_CREAT | O_EXCL |
//! O_NOFOLLOW`, mode 0640) and handed over by group, read-only. The user can read the
//! run's files and change none of them, nor add, rename or link any. The one directory
//! the user may write is `playbook/` when the playbook is an archive: it is unpacked
//! there inside the sandbox, and root only reads its listing afterwards.
//!
//! When Corral is not root everything is its own user's, mode 0600/0700 (ssh refuses a
//! key file its owner's group may read).

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The directory the playbook (or the unpacked archive) is in.
pub(super) const PLAYBOOK_DIR: &str = "playbook";

/// Who the controller runs as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Controller {
    /// This process's user: the files are its own.
    ThisUser,
    /// The tenant's node user (uid, gid), this process being root.
    TenantUser { uid: u32, gid: u32 },
}

impl Controller {
    pub(super) fn of(user: Option<(u32, u32)>) -> Self {
        match user {
            Some((uid, gid)) => Self::TenantUser { uid, gid },
            None => Self::ThisUser,
        }
    }

    /// The mode of a file the controller reads: by group when it is another user.
    fn file_mode(self) -> u32 {
        match self {
            Self::ThisUser => 0o600,
            Self::TenantUser { .. } => 0o640,
        }
    }

    fn dir_mode(self) -> u32 {
        match self {
            Self::ThisUser => 0o700,
            Self::TenantUser { .. } => 0o750,
        }
    }
}

/// The run's private directory, removed when dropped.
pub(super) struct WorkDir {
    dir: tempfile::TempDir,
    pub(super) controller: Controller,
}

impl WorkDir {
    pub(super) fn new(controller: Controller) -> std::io::Result<Self> {
        // Made by this process, mode 0700 from the start, under a sticky /tmp: nobody
        // else can replace it.
        let dir = tempfile::Builder::new()
            .prefix("corral-ansible-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()?;
        let work = Self { dir, controller };
        work.hand_over_dir(work.dir.path(), Access::Read)?;
        let playbook = work.path(PLAYBOOK_DIR);
        std::fs::DirBuilder::new().mode(0o700).create(&playbook)?;
        work.hand_over_dir(&playbook, Access::Read)?;
        Ok(work)
    }

    pub(super) fn root(&self) -> &Path {
        self.dir.path()
    }

    pub(super) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Lets the controller unpack an archive into `playbook/`, its own from now on.
    pub(super) fn open_playbook_dir(&self) -> std::io::Result<()> {
        self.hand_over_dir(&self.path(PLAYBOOK_DIR), Access::Write)
    }

    /// Creates `name` (a new file, never a link followed) with `bytes`, readable by the
    /// controller only.
    pub(super) fn write(&self, name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
        let path = self.path(name);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .mode(self.controller.file_mode())
            .open(&path)?;
        file.write_all(bytes)?;
        if let Controller::TenantUser { gid, .. } = self.controller {
            // On the open file: whatever happens to the name, this is the file we made.
            std::os::unix::fs::fchown(&file, None, Some(gid))?;
            file.set_permissions(std::fs::Permissions::from_mode(self.controller.file_mode()))?;
        }
        Ok(path)
    }

    /// Lets the controller's user into `dir` (made by this process, in a directory only
    /// this process can write): to read, by group; to write, as its owner.
    fn hand_over_dir(&self, dir: &Path, access: Access) -> std::io::Result<()> {
        let Controller::TenantUser { uid, gid } = self.controller else {
            return Ok(());
        };
        let owner = match access {
            Access::Read => None,
            Access::Write => Some(uid),
        };
        std::os::unix::fs::lchown(dir, owner, Some(gid))?;
        let mode = match access {
            Access::Read => self.controller.dir_mode(),
            Access::Write => 0o700,
        };
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode))
    }

    /// Makes the relay's socket (bound by this process in the work dir) one the
    /// controller can connect to.
    pub(super) fn hand_over_socket(&self, socket: &Path) -> std::io::Result<()> {
        if let Controller::TenantUser { gid, .. } = self.controller {
            std::os::unix::fs::lchown(socket, None, Some(gid))?;
            std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o660))?;
        } else {
            std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy)]
enum Access {
    Read,
    Write,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn files_are_new_private_and_never_written_through_a_link() {
        let work = WorkDir::new(Controller::ThisUser).unwrap();
        let written = work.write("vars.yml", b"{}").unwrap();
        let meta = std::fs::symlink_metadata(&written).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o600);
        assert_eq!(std::fs::read(&written).unwrap(), b"{}");
        // A name already there, as a file or as a link, is an error, never a write.
        assert!(work.write("vars.yml", b"again").is_err());
        let target = work.path("target");
        std::fs::write(&target, b"kept").unwrap();
        std::os::unix::fs::symlink(&target, work.path("inventory.json")).unwrap();
        assert!(work.write("inventory.json", b"planted").is_err());
        assert_eq!(std::fs::read(&target).unwrap(), b"kept");
        assert_eq!(
            std::fs::symlink_metadata(work.root()).unwrap().mode() & 0o777,
            0o700
        );
    }

    #[test]
    fn modes_follow_who_runs_the_controller() {
        let tenant = Controller::TenantUser { uid: 1, gid: 1 };
        assert_eq!((tenant.file_mode(), tenant.dir_mode()), (0o640, 0o750));
        let this = Controller::ThisUser;
        assert_eq!((this.file_mode(), this.dir_mode()), (0o600, 0o700));
    }
}
