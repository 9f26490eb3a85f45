//! Plugin resources: scripts, archives and files a tenant uploads for its services'
//! actions, every upload a new version, one version per name staged for nodes.
//!
//! Rows (`plugin_resources`) say what exists; the bytes live in the database too
//! (`plugin_resource_blobs`, written in the same transaction as the row, so a row never
//! points at nothing), because any process sharing the database may bootstrap a node.
//! Each process keeps the bytes it has read in a [`BlobStore`] (a local directory),
//! checked against the row's SHA-256 before use. Bootstrap copies the staged versions
//! onto each node under `$HOME/corral/resources/<kind>/<name>`.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use sha2::{Digest, Sha256};
use sqlx::Row;

use crate::store::{Store, StoreError};

/// Largest resource accepted (archives of cookbooks or data, not images).
pub const MAX_RESOURCE_BYTES: usize = 64 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ResourceKind {
    /// Run by `shell` actions (`script` field); made executable on the node.
    Scripts,
    /// `.tar`, `.tar.gz`, `.tgz`: unpacked on the node next to the archive (`NAME.d/`).
    Archives,
    /// Copied as they are.
    Files,
}

impl ResourceKind {
    pub const ALL: [ResourceKind; 3] = [
        ResourceKind::Scripts,
        ResourceKind::Archives,
        ResourceKind::Files,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ResourceKind::Scripts => "scripts",
            ResourceKind::Archives => "archives",
            ResourceKind::Files => "files",
        }
    }

    pub fn parse(raw: &str) -> Result<Self, ResourceError> {
        Self::ALL
            .into_iter()
            .find(|kind| kind.as_str() == raw)
            .ok_or_else(|| ResourceError::UnknownKind(raw.to_owned()))
    }
}

impl fmt::Display for ResourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ResourceError {
    #[error("unknown resource kind {0:?}: use scripts, archives or files")]
    UnknownKind(String),
    #[error(
        "invalid resource name {0:?}: use 1-128 letters, digits, '.', '_' or '-', not starting \
         with '.'"
    )]
    InvalidName(String),
    #[error("resource is {size} bytes; the limit is {MAX_RESOURCE_BYTES}")]
    TooLarge { size: usize },
    #[error("archive {0:?} must end in .tar, .tar.gz or .tgz")]
    NotAnArchive(String),
    #[error("{kind}/{name} version {version} not found")]
    NotFound {
        kind: ResourceKind,
        name: String,
        version: i64,
    },
    #[error(
        "{kind}/{name} version {version}: its bytes are neither in the database nor in this \
         server's cache (it was uploaded to another server before they were kept in the \
         database); upload it again and stage the new version"
    )]
    BytesMissing {
        kind: ResourceKind,
        name: String,
        version: i64,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for ResourceError {
    fn from(error: sqlx::Error) -> Self {
        ResourceError::Store(StoreError::from(error))
    }
}

/// One stored version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceVersion {
    pub tenant_id: String,
    pub kind: ResourceKind,
    pub name: String,
    pub version: i64,
    pub sha256: String,
    pub size_bytes: i64,
    pub staged: bool,
    pub created_at_ms: i64,
}

/// Who uploads what: the resource a new version is for.
#[derive(Debug, Clone, Copy)]
pub struct Upload<'a> {
    pub tenant_id: &'a str,
    pub kind: ResourceKind,
    pub name: &'a str,
    pub author_id: Option<&'a str>,
}

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

const COLUMNS: &str = "tenant_id, kind, name, version, sha256, size_bytes, staged, created_at_ms";

fn from_row(row: &sqlx::any::AnyRow) -> Result<ResourceVersion, ResourceError> {
    Ok(ResourceVersion {
        tenant_id: row.try_get("tenant_id")?,
        kind: ResourceKind::parse(&row.try_get::<String, _>("kind")?)?,
        name: row.try_get("name")?,
        version: row.try_get("version")?,
        sha256: row.try_get("sha256")?,
        size_bytes: row.try_get("size_bytes")?,
        staged: row.try_get::<i64, _>("staged")? != 0,
        created_at_ms: row.try_get("created_at_ms")?,
    })
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
        let Upload {
            tenant_id,
            kind,
            name,
            author_id,
        } = *upload;
        check_name(kind, name)?;
        if bytes.len() > MAX_RESOURCE_BYTES {
            return Err(ResourceError::TooLarge { size: bytes.len() });
        }
        let sha256 = hex(&Sha256::digest(bytes));
        let (_turn, mut tx) = store.begin_write().await?;
        let newest: Option<i64> = sqlx::query_scalar(
            "SELECT MAX(version) FROM plugin_resources \
             WHERE tenant_id = $1 AND kind = $2 AND name = $3",
        )
        .bind(tenant_id)
        .bind(kind.as_str())
        .bind(name)
        .fetch_one(&mut *tx)
        .await?;
        let resource = ResourceVersion {
            tenant_id: tenant_id.to_owned(),
            kind,
            name: name.to_owned(),
            version: newest.unwrap_or(0) + 1,
            sha256,
            size_bytes: i64::try_from(bytes.len()).unwrap_or(i64::MAX),
            staged: false,
            created_at_ms: now_ms,
        };
        let inserted = sqlx::query(&format!(
            "INSERT INTO plugin_resources ({COLUMNS}, author_id) \
             VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $8)"
        ))
        .bind(&resource.tenant_id)
        .bind(kind.as_str())
        .bind(&resource.name)
        .bind(resource.version)
        .bind(&resource.sha256)
        .bind(resource.size_bytes)
        .bind(now_ms)
        .bind(author_id)
        .execute(&mut *tx)
        .await;
        crate::store::conflict_on_unique(inserted, || {
            format!("version {} of {kind}/{name}", resource.version)
        })?;
        sqlx::query(
            "INSERT INTO plugin_resource_blobs (tenant_id, kind, name, version, bytes) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&resource.tenant_id)
        .bind(kind.as_str())
        .bind(&resource.name)
        .bind(resource.version)
        .bind(bytes)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        // Only a cache: the transaction above is what makes the upload.
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
        let (_turn, mut tx) = store.begin_write().await?;
        let exists: Option<i64> = sqlx::query_scalar(
            "SELECT version FROM plugin_resources \
             WHERE tenant_id = $1 AND kind = $2 AND name = $3 AND version = $4",
        )
        .bind(tenant_id)
        .bind(kind.as_str())
        .bind(name)
        .bind(version)
        .fetch_optional(&mut *tx)
        .await?;
        if exists.is_none() {
            return Err(ResourceError::NotFound {
                kind,
                name: name.to_owned(),
                version,
            });
        }
        sqlx::query(
            "UPDATE plugin_resources SET staged = CASE WHEN version = $4 THEN 1 ELSE 0 END \
             WHERE tenant_id = $1 AND kind = $2 AND name = $3 AND (staged = 1 OR version = $4)",
        )
        .bind(tenant_id)
        .bind(kind.as_str())
        .bind(name)
        .bind(version)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
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
        let (_turn, mut tx) = store.begin_write().await?;
        let copied = sqlx::query(
            "INSERT INTO plugin_resources (tenant_id, kind, name, version, sha256, size_bytes, \
             staged, author_id, created_at_ms) \
             SELECT $2, kind, name, version, sha256, size_bytes, 1, NULL, $3 \
             FROM plugin_resources WHERE tenant_id = $1 AND staged = 1",
        )
        .bind(from)
        .bind(to)
        .bind(now_ms)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        sqlx::query(
            "INSERT INTO plugin_resource_blobs (tenant_id, kind, name, version, bytes) \
             SELECT $2, b.kind, b.name, b.version, b.bytes FROM plugin_resource_blobs b \
             JOIN plugin_resources r ON r.tenant_id = b.tenant_id AND r.kind = b.kind \
               AND r.name = b.name AND r.version = b.version \
             WHERE r.tenant_id = $1 AND r.staged = 1",
        )
        .bind(from)
        .bind(to)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(copied)
    }

    /// Puts into the database the bytes of resources it has no bytes for, where this
    /// process's cache holds them unchanged: resources uploaded before the database kept
    /// bytes become usable by every process. Returns how many were put in.
    pub async fn keep_cached_bytes_in_database(&self, store: &Store) -> Result<u64, ResourceError> {
        let without_bytes = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM plugin_resources r WHERE NOT EXISTS \
             (SELECT 1 FROM plugin_resource_blobs b WHERE b.tenant_id = r.tenant_id \
              AND b.kind = r.kind AND b.name = r.name AND b.version = r.version)"
        ))
        .fetch_all(store.pool())
        .await?
        .iter()
        .map(from_row)
        .collect::<Result<Vec<_>, _>>()?;
        let mut kept = 0;
        for resource in without_bytes {
            let Ok(bytes) = self.cache.get(&blob_key(&resource)) else {
                continue;
            };
            if !resource.is_made_of(&bytes) {
                continue;
            }
            let (_turn, mut tx) = store.begin_write().await?;
            kept += sqlx::query(
                "INSERT INTO plugin_resource_blobs (tenant_id, kind, name, version, bytes) \
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
            )
            .bind(&resource.tenant_id)
            .bind(resource.kind.as_str())
            .bind(&resource.name)
            .bind(resource.version)
            .bind(bytes)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            tx.commit().await?;
        }
        Ok(kept)
    }

    /// Every version of every resource of the tenant.
    pub async fn list(
        &self,
        store: &Store,
        tenant_id: &str,
    ) -> Result<Vec<ResourceVersion>, ResourceError> {
        sqlx::query(&format!(
            "SELECT {COLUMNS} FROM plugin_resources WHERE tenant_id = $1 \
             ORDER BY kind, name, version"
        ))
        .bind(tenant_id)
        .fetch_all(store.pool())
        .await?
        .iter()
        .map(from_row)
        .collect()
    }

    /// The staged version of each resource of the tenant: what nodes get.
    pub async fn staged(
        &self,
        store: &Store,
        tenant_id: &str,
    ) -> Result<Vec<ResourceVersion>, ResourceError> {
        sqlx::query(&format!(
            "SELECT {COLUMNS} FROM plugin_resources WHERE tenant_id = $1 AND staged = 1 \
             ORDER BY kind, name"
        ))
        .bind(tenant_id)
        .fetch_all(store.pool())
        .await?
        .iter()
        .map(from_row)
        .collect()
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
        let bytes: Vec<u8> = sqlx::query_scalar(
            "SELECT bytes FROM plugin_resource_blobs \
             WHERE tenant_id = $1 AND kind = $2 AND name = $3 AND version = $4",
        )
        .bind(&resource.tenant_id)
        .bind(resource.kind.as_str())
        .bind(&resource.name)
        .bind(resource.version)
        .fetch_optional(store.pool())
        .await?
        .ok_or_else(missing)?;
        if !resource.is_made_of(&bytes) {
            return Err(missing());
        }
        if let Err(error) = self.cache.put(&key, &bytes) {
            tracing::warn!(%error, resource = %key, "caching a resource failed");
        }
        Ok(bytes)
    }
}

fn check_name(kind: ResourceKind, name: &str) -> Result<(), ResourceError> {
    if !crate::execute::is_resource_name(name) {
        return Err(ResourceError::InvalidName(name.to_owned()));
    }
    if kind == ResourceKind::Archives
        && ![".tar", ".tar.gz", ".tgz"]
            .iter()
            .any(|suffix| name.ends_with(suffix))
    {
        return Err(ResourceError::NotAnArchive(name.to_owned()));
    }
    Ok(())
}

fn blob_key(resource: &ResourceVersion) -> String {
    format!(
        "{}/{}/{}/{}",
        resource.tenant_id, resource.kind, resource.name, resource.version
    )
}

impl ResourceVersion {
    /// Whether `bytes` are this version's, by its SHA-256.
    fn is_made_of(&self, bytes: &[u8]) -> bool {
        hex(&Sha256::digest(bytes)) == self.sha256
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
