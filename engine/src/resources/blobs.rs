//! Each process's cache of the resource bytes it has read from the database.

use std::path::PathBuf;

use super::ResourceVersion;

/// Where a process caches resource bytes it has read from the database.
pub trait BlobStore: Send + Sync {
    fn put(&self, key: &str, bytes: &[u8]) -> std::io::Result<()>;
    fn get(&self, key: &str) -> std::io::Result<Vec<u8>>;
}

/// Cached blobs as files under a directory (`<data dir>/resources`).
#[derive(Debug, Clone)]
pub struct DirectoryBlobs {
    root: PathBuf,
}

impl DirectoryBlobs {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }
}

impl BlobStore for DirectoryBlobs {
    fn put(&self, key: &str, bytes: &[u8]) -> std::io::Result<()> {
        let path = self.root.join(key);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        // Written aside and renamed: a crash never leaves half a resource under its name.
        let partial = path.with_extension("partial");
        std::fs::write(&partial, bytes)?;
        std::fs::rename(partial, path)
    }

    fn get(&self, key: &str) -> std::io::Result<Vec<u8>> {
        std::fs::read(self.root.join(key))
    }
}

/// Where `resource`'s bytes are cached.
pub(super) fn blob_key(resource: &ResourceVersion) -> String {
    format!(
        "{}/{}/{}/{}",
        resource.tenant_id, resource.kind, resource.name, resource.version
    )
}
