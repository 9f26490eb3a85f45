//! Users' own SSH public keys: kept on their profile, put by Corral on the nodes of
//! their clusters (and, where the tenant says so, tenant admins' keys on every cluster
//! of the tenant) when a node is bootstrapped; a `sync-keys` change puts the current
//! keys on a live cluster, and adding or removing a key starts one on each cluster it
//! concerns.

use serde::{Deserialize, Serialize};

/// A public key to keep.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct UserKeyRequest {
    /// One OpenSSH public key line (`ssh-ed25519 AAAA… comment`), as in a `.pub` file;
    /// no options, no private key.
    pub public_key: String,
}

/// A key on a user's profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UserKeyView {
    pub id: String,
    /// `SHA256:…`, as `ssh-keygen -l` prints it.
    pub fingerprint: String,
    /// `ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`, …
    pub algorithm: String,
    /// The key line's comment (often `user@host`); may be empty.
    pub comment: String,
    /// The line as it goes into `authorized_keys`.
    pub public_key: String,
    pub created_at_ms: i64,
}

/// What adding or removing a key did: the key (when added), and the `sync-keys` jobs
/// that put the change on the clusters it concerns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UserKeyChange {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<UserKeyView>,
    pub clusters: Vec<KeySync>,
}

/// One cluster a key change concerns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct KeySync {
    pub cluster_id: String,
    pub cluster_name: String,
    /// The `sync-keys` job started on it, when one could be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    /// Why no job was started (the cluster is busy), and what to do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A key a `sync-keys` change (or a node's bootstrap) puts on a cluster's nodes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClusterKeyView {
    /// Whose key it is.
    pub username: String,
    pub fingerprint: String,
    pub comment: String,
}

/// Whether the tenant's admins' keys go on every cluster of the tenant, besides each
/// cluster owner's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AdminKeysSetting {
    pub admin_keys_on_all_clusters: bool,
}
