//! Files of secrets a provider keeps on disk (client private keys): a directory only
//! the owner may enter, and files only the owner may read, written whole or not at all.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::ProviderError;
use crate::ssh::ClientKeyPair;

/// The `map_err` of a file operation on `path` that failed doing `action`.
fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ProviderError {
    let path = path.to_owned();
    move |source| ProviderError::Io {
        action,
        path,
        source,
    }
}

/// Makes `dir` (and its parents) and leaves it open to its owner only, also when it
/// already existed with looser modes.
pub(crate) fn create_private_dir(dir: &Path) -> Result<(), ProviderError> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io("cannot create the key directory", dir))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .map_err(io("cannot restrict the key directory", dir))
}

/// Writes `bytes` to `path` readable by the owner only, replacing it atomically so a
/// connection never loads half a key.
pub(crate) fn write_private_file(path: &Path, bytes: &[u8]) -> Result<(), ProviderError> {
    use std::os::unix::fs::OpenOptionsExt;
    let temporary = path.with_extension(format!("tmp-{}", uuid::Uuid::new_v4().simple()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&temporary)
        .map_err(io("cannot write the key", &temporary))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(io("cannot write the key", &temporary))?;
    std::fs::rename(&temporary, path).map_err(io("cannot write the key", path))
}

/// A provider's one client key pair in `dir` (made on first use, `comment` ending its
/// public line): its private key's path and its public line for `authorized_keys`.
pub(crate) fn client_key(dir: &Path, comment: &str) -> Result<(PathBuf, String), ProviderError> {
    create_private_dir(dir)?;
    let private = dir.join("client_ed25519");
    let public = dir.join("client_ed25519.pub");
    if !private.is_file() || !public.is_file() {
        let pair = ClientKeyPair::generate(comment).map_err(|error| ProviderError::ClientKey {
            dir: dir.to_owned(),
            detail: error.to_string(),
        })?;
        std::fs::write(&public, format!("{}\n", pair.public_openssh))
            .map_err(io("cannot write the key", &public))?;
        write_private_file(&private, pair.private_openssh.as_bytes())?;
    }
    let line = std::fs::read_to_string(&public).map_err(io("cannot read the key", &public))?;
    Ok((private, line.trim().to_owned()))
}
