//! Users' SSH public keys, and which keys (and which clusters) a cluster's nodes or a
//! key change concern (the tenant's switch that puts its admins' keys on every cluster
//! is [`super::tenants::TenantSwitch::AdminKeysOnAllClusters`]). Keys are kept as checked OpenSSH lines (see the engine's `accounts::ssh_keys`).

use super::{conflict_on_unique, Store, StoreError};
use crate::found::OrNotFound;

/// The most keys one user keeps: enough for every workstation, small enough that an
/// `authorized_keys` block stays short.
pub const MAX_KEYS_PER_USER: i64 = 20;

/// A stored key.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct UserKey {
    pub id: String,
    pub user_id: String,
    pub public_key: String,
    pub fingerprint: String,
    pub created_at_ms: i64,
}

/// A key that goes on a cluster's nodes, with whose it is.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ClusterKey {
    pub username: String,
    pub public_key: String,
    pub fingerprint: String,
}

/// A cluster whose nodes hold a user's keys.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct KeyedCluster {
    pub id: String,
    pub name: String,
}

/// Whether a key was kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyAdded {
    Added,
    /// The user already has [`MAX_KEYS_PER_USER`] keys; nothing was added.
    Full,
}

const COLUMNS: &str = "id, user_id, public_key, fingerprint, created_at_ms";

/// The cluster states whose nodes a key change concerns: those with nodes, including
/// busy and failed ones (their sync is refused, and the caller learns why).
const KEYED_STATES: &str = "('active', 'failed', 'creating', 'updating')";

impl Store {
    /// The user's keys, oldest first.
    pub async fn user_keys(&self, user_id: &str) -> Result<Vec<UserKey>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM user_ssh_keys WHERE user_id = $1 ORDER BY created_at_ms, id"
        ))
        .bind(user_id)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Keeps a key for the user: a key the user already has is a conflict naming its
    /// fingerprint, and past [`MAX_KEYS_PER_USER`] nothing is added (counted in the
    /// write's own transaction).
    pub async fn add_user_key(&self, key: &UserKey) -> Result<KeyAdded, StoreError> {
        let _turn = self.write_turn().await;
        let mut tx = self.pool.begin().await?;
        let held: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM user_ssh_keys WHERE user_id = $1")
            .bind(&key.user_id)
            .fetch_one(&mut *tx)
            .await?;
        if held >= MAX_KEYS_PER_USER {
            return Ok(KeyAdded::Full);
        }
        conflict_on_unique(
            sqlx::query(&format!(
                "INSERT INTO user_ssh_keys ({COLUMNS}) VALUES ($1, $2, $3, $4, $5)"
            ))
            .bind(&key.id)
            .bind(&key.user_id)
            .bind(&key.public_key)
            .bind(&key.fingerprint)
            .bind(key.created_at_ms)
            .execute(&mut *tx)
            .await,
            || format!("key {}", key.fingerprint),
        )?;
        tx.commit().await?;
        Ok(KeyAdded::Added)
    }

    /// Removes one of the user's keys by id; another user's key is not found.
    pub async fn remove_user_key(&self, user_id: &str, id: &str) -> Result<UserKey, StoreError> {
        // In a transaction: SQLite commits a lone `DELETE ... RETURNING` read this way
        // only when the statement is reset, where sqlx does not report a failed commit
        // (a full disk), and a key said removed must be gone.
        let (_turn, mut tx) = self.begin_write().await?;
        let key: Option<UserKey> = sqlx::query_as(&format!(
            "DELETE FROM user_ssh_keys WHERE id = $1 AND user_id = $2 RETURNING {COLUMNS}"
        ))
        .bind(id)
        .bind(user_id)
        .fetch_optional(&mut *tx)
        .await?;
        tx.commit().await?;
        key.or_not_found(|| format!("key {id:?}"))
    }

    /// The keys that go on the cluster's nodes: its owner's, and, where its tenant
    /// says so, those of the tenant's admins; each key once.
    pub async fn cluster_keys(&self, cluster_id: &str) -> Result<Vec<ClusterKey>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT u.username, k.public_key, k.fingerprint \
             FROM clusters c JOIN tenants t ON t.id = c.tenant_id \
             JOIN users u ON u.id = c.owner_id \
                 OR (t.admin_keys_on_all_clusters <> 0 AND u.tenant_id = c.tenant_id \
                     AND u.role IN ('tenant-admin', 'superadmin')) \
             JOIN user_ssh_keys k ON k.user_id = u.id \
             WHERE c.id = $1 ORDER BY u.username, k.created_at_ms, k.id",
        )
        .bind(cluster_id)
        .fetch_all(&self.pool)
        .await?)
    }

    /// The clusters with nodes that hold the user's keys: those the user owns and, for
    /// an admin of a tenant that puts its admins' keys everywhere, every cluster of the
    /// tenant; those with a job under way or a failed one are listed too, so the user
    /// learns they were not synced.
    pub async fn keyed_clusters(&self, user_id: &str) -> Result<Vec<KeyedCluster>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "SELECT c.id, c.name FROM clusters c \
             JOIN users u ON u.id = $1 JOIN tenants t ON t.id = c.tenant_id \
             WHERE c.state IN {KEYED_STATES} AND (c.owner_id = u.id \
                 OR (t.admin_keys_on_all_clusters <> 0 AND c.tenant_id = u.tenant_id \
                     AND u.role IN ('tenant-admin', 'superadmin'))) \
             ORDER BY c.name",
        ))
        .bind(user_id)
        .fetch_all(&self.pool)
        .await?)
    }

    /// The tenant's clusters with nodes (as [`Store::keyed_clusters`] counts them), for
    /// a change of its admin-keys setting.
    pub async fn tenant_keyed_clusters(
        &self,
        tenant_id: &str,
    ) -> Result<Vec<KeyedCluster>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "SELECT id, name FROM clusters WHERE tenant_id = $1 \
             AND state IN {KEYED_STATES} ORDER BY name"
        ))
        .bind(tenant_id)
        .fetch_all(&self.pool)
        .await?)
    }
}
