//! What a plugin resource is: its kinds, a stored version, an upload, and why an
//! operation on one can fail.

use std::fmt;

use sha2::{Digest, Sha256};

use crate::StoreError;

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

// A `kind` column reads as the kind it names (the store's rows derive `sqlx::FromRow`).
impl sqlx::Type<sqlx::Any> for ResourceKind {
    fn type_info() -> sqlx::any::AnyTypeInfo {
        <&str as sqlx::Type<sqlx::Any>>::type_info()
    }

    fn compatible(ty: &sqlx::any::AnyTypeInfo) -> bool {
        <&str as sqlx::Type<sqlx::Any>>::compatible(ty)
    }
}

impl<'r> sqlx::Decode<'r, sqlx::Any> for ResourceKind {
    fn decode(value: sqlx::any::AnyValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
        Ok(Self::parse(<&str as sqlx::Decode<'r, sqlx::Any>>::decode(
            value,
        )?)?)
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

/// One stored version.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ResourceVersion {
    pub tenant_id: String,
    pub kind: ResourceKind,
    pub name: String,
    pub version: i64,
    pub sha256: String,
    pub size_bytes: i64,
    #[sqlx(try_from = "crate::IntFlag")]
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

pub fn check_name(kind: ResourceKind, name: &str) -> Result<(), ResourceError> {
    if !domain::catalog::automator::is_resource_name(name) {
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

impl ResourceVersion {
    /// Whether `bytes` are this version's, by its SHA-256.
    pub fn is_made_of(&self, bytes: &[u8]) -> bool {
        hex::encode(Sha256::digest(bytes)) == self.sha256
    }
}
