//! Plugin resources: scripts, archives and files a tenant uploads for its services'
//! actions, every upload a new version, one version per name staged for nodes.
//!
//! Rows (`plugin_resources`) say what exists; the bytes live in the database too
//! (`plugin_resource_blobs`, written in the same transaction as the row, so a row never
//! points at nothing), because any process sharing the database may bootstrap a node.
//! Each process keeps the bytes it has read in a [`BlobStore`] (a local directory),
//! checked against the row's SHA-256 before use. Bootstrap copies the staged versions
//! onto each node under `$HOME/corral/resources/<kind>/<name>`.

mod blobs;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::store::resource_types::check_name;
pub use crate::store::resource_types::{
    ResourceError, ResourceKind, ResourceVersion, Upload, MAX_RESOURCE_BYTES,
};
use crate::store::Store;
use blobs::blob_key;
pub use blobs::{BlobStore, DirectoryBlobs};

/// The resource rows plus their bytes, with this process's cache of the bytes.
#[derive(Clone)]
pub struct ResourceFiles {
    cache: Arc<dyn BlobStore>,
}

impl fmt::Debug for ResourceFiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceFiles").finish_non_exhaustive()
    }
}

impl ResourceFiles {
    pub fn new(cache: Arc<dyn BlobStore>) -> Self {
        Self { cache }
    }

    /// Resources cached in `<dir>` on the local file system.
    pub fn in_directory(dir: impl Into<PathBuf>) -> Self {
        Self::new(Arc::new(DirectoryBlobs::new(dir)))
    }

    /// Stores `bytes` as the next version of `upload.kind/name` (not staged).
    pub async fn upload(
        &self,
        store: &Store,
        upload: &Upload<'_>,
        bytes: &[u8],
        now_ms: i64,
    ) -> Result<ResourceVersion, ResourceError> {
        check_name(upload.kind, upload.name)?;
        if bytes.len() > MAX_RESOURCE_BYTES {
            return Err(ResourceError::TooLarge { size: bytes.len() });
        }
        let sha256 = hex::encode(Sha256::digest(bytes));
        let resource = store
            .insert_resource_version(upload, sha256, bytes, now_ms)
            .await?;
        // Only a cache: the database is what makes the upload.
        if let Err(error) = self.cache.put(&blob_key(&resource), bytes) {
            tracing::warn!(%error, resource = %blob_key(&resource), "caching an upload failed");
        }
        Ok(resource)
    }

    /// Makes `version` the one nodes get (unstaging any other). Staging the staged
    /// version again changes nothing.
    pub async fn stage(
        &self,
        store: &Store,
        tenant_id: &str,
        kind: ResourceKind,
        name: &str,
        version: i64,
    ) -> Result<(), ResourceError> {
        if !store
            .stage_resource_version(tenant_id, kind, name, version)
            .await?
        {
            return Err(ResourceError::NotFound {
                kind,
                name: name.to_owned(),
                version,
            });
        }
        Ok(())
    }

    /// Gives tenant `to` the staged version of each of tenant `from`'s resources (same
    /// version numbers, staged), so a catalog copied from `from` finds its scripts;
    /// returns how many. Meant for a tenant that has no resources yet.
    pub async fn copy_staged(
        &self,
        store: &Store,
        from: &str,
        to: &str,
        now_ms: i64,
    ) -> Result<u64, ResourceError> {
        Ok(store.copy_staged_resources(from, to, now_ms).await?)
    }

    /// Puts into the database the bytes of resources it has no bytes for, where this
    /// process's cache holds them unchanged: resources uploaded before the database kept
    /// bytes become usable by every process. Returns how many were put in.
    pub async fn keep_cached_bytes_in_database(&self, store: &Store) -> Result<u64, ResourceError> {
        let without_bytes = store.resources_without_bytes().await?;
        let mut kept = 0;
        for resource in without_bytes {
            let Ok(bytes) = self.cache.get(&blob_key(&resource)) else {
                continue;
            };
            if !resource.is_made_of(&bytes) {
                continue;
            }
            kept += store
                .insert_missing_resource_bytes(&resource, &bytes)
                .await?;
        }
        Ok(kept)
    }

    /// Every version of every resource of the tenant.
    pub async fn list(
        &self,
        store: &Store,
        tenant_id: &str,
    ) -> Result<Vec<ResourceVersion>, ResourceError> {
        Ok(store.list_resources(tenant_id).await?)
    }

    /// The staged version of each resource of the tenant: what nodes get.
    pub async fn staged(
        &self,
        store: &Store,
        tenant_id: &str,
    ) -> Result<Vec<ResourceVersion>, ResourceError> {
        Ok(store.staged_resources(tenant_id).await?)
    }

    /// The resource's bytes: from this process's cache when it holds them unchanged,
    /// else from the database (and then cached). Resources uploaded before the database
    /// kept bytes are in the cache directory of the process that took them, until that
    /// process starts again (see [`ResourceFiles::keep_cached_bytes_in_database`]).
    pub async fn read(
        &self,
        store: &Store,
        resource: &ResourceVersion,
    ) -> Result<Vec<u8>, ResourceError> {
        let key = blob_key(resource);
        let missing = || ResourceError::BytesMissing {
            kind: resource.kind,
            name: resource.name.clone(),
            version: resource.version,
        };
        if let Ok(bytes) = self.cache.get(&key) {
            if resource.is_made_of(&bytes) {
                return Ok(bytes);
            }
        }
        let bytes = store.resource_bytes(resource).await?.ok_or_else(missing)?;
        if !resource.is_made_of(&bytes) {
            return Err(missing());
        }
        if let Err(error) = self.cache.put(&key, &bytes) {
            tracing::warn!(%error, resource = %key, "caching a resource failed");
        }
        Ok(bytes)
    }
}
