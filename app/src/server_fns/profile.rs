//! The signed-in user's own page, `/profile`: who they are, the SSH public keys they
//! keep (which Corral puts on the nodes of their clusters), and for a tenant's admins
//! whether the admins' keys go on every cluster of the tenant.
//!
//! A change (a key added or removed, the admins' switch flipped) starts `sync-keys`
//! jobs. The server function keeps what it did in the session as a one-time notice,
//! which the page's next load shows and clears: a browser without JavaScript gets back
//! only a redirect to the page, and a notice made from the query string would let any
//! link put words of its own on the page.

pub mod add_key;
pub mod admin_keys;
pub mod load;
#[cfg(feature = "ssr")]
mod notice;
pub mod remove_key;

use api_types::{KeySync, Role, UserKeyView};
use serde::{Deserialize, Serialize};

/// Everything the profile page shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfilePage {
    pub username: String,
    /// The tenant's name.
    pub tenant: String,
    pub role: Role,
    /// Oldest first.
    pub keys: Vec<UserKeyView>,
    /// The most keys one user keeps.
    pub max_keys: i64,
    /// For the tenant's admins: whether the admins' keys go on every cluster of the
    /// tenant (`None` for everyone else, who sees no switch).
    pub admin_keys_on_all_clusters: Option<bool>,
    /// What the last change did, shown once.
    pub notice: Option<KeyNotice>,
}

/// What a change on the profile page did, and the clusters it synced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyNotice {
    pub change: KeyChangeKind,
    pub clusters: Vec<KeySync>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum KeyChangeKind {
    /// A key was kept (its fingerprint).
    Added(String),
    /// A key was taken off (its fingerprint).
    Removed(String),
    /// The tenant admins' switch was turned on (`true`) or off.
    AdminKeys(bool),
}

/// The form field of the key line, as the service names it in its problems.
pub const KEY_FIELD: &str = "public_key";
