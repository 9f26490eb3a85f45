//! Files of secrets a provider keeps on disk (client private keys): a directory only
//! the owner may enter, and files only the owner may read, written whole or not at all.

use std::io::Write;
use std::path::Path;

use super::ProviderError;

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
