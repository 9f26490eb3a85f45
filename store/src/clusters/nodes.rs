//! Nodes of a cluster, one row per layout node number.
//!
//! A node is recorded (with its provider record) as soon as the provider made it, so
//! a retried create finds it instead of leaking a second machine.

use crate::WorkerScope;
use crate::{Backend, Listing, Store, StoreError};
pub use api_types::{NodePresence, NodeState};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Node {
    pub id: String,
    pub cluster_id: String,
    pub number: i64,
    pub hostname: Option<String>,
    pub hardwaretype: String,
    pub imagetype: String,
    pub services_json: String,
    pub provider_json: Option<String>,
    pub state: NodeState,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    /// What the provider last said of the machine, and since when (see
    /// [`Store::record_presence`]).
    pub presence: Option<NodePresence>,
    pub presence_since_ms: Option<i64>,
}

/// A node's recorded facts, as its row stores them; saving it again for the same number
/// replaces them. (The provider's `NodeRecord` is what a provider reports of a machine.)
#[derive(Debug, Clone)]
pub struct NodeRow {
    pub cluster_id: String,
    pub number: i64,
    pub hostname: Option<String>,
    pub hardwaretype: String,
    pub imagetype: String,
    pub services_json: String,
    pub provider_json: Option<String>,
    pub state: NodeState,
}

const COLUMNS: &str = "id, cluster_id, number, hostname, hardwaretype, imagetype, services_json, \
     provider_json, state, created_at_ms, updated_at_ms, presence, presence_since_ms";

impl Store {
    /// Inserts the node or updates the one with the same cluster and number.
    pub async fn save_node(&self, record: &NodeRow, now_ms: i64) -> Result<(), StoreError> {
        let (_turn, mut tx) = self.begin_write().await?;
        let version = bump_nodes_version(&mut tx, &record.cluster_id).await?;
        sqlx::query(
            "INSERT INTO nodes (id, cluster_id, number, hostname, hardwaretype, imagetype, \
             services_json, provider_json, state, created_at_ms, updated_at_ms, version) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11) \
             ON CONFLICT (cluster_id, number) DO UPDATE SET hostname = excluded.hostname, \
             hardwaretype = excluded.hardwaretype, imagetype = excluded.imagetype, \
             services_json = excluded.services_json, provider_json = excluded.provider_json, \
             state = excluded.state, updated_at_ms = excluded.updated_at_ms, \
             version = excluded.version",
        )
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(&record.cluster_id)
        .bind(record.number)
        .bind(&record.hostname)
        .bind(&record.hardwaretype)
        .bind(&record.imagetype)
        .bind(&record.services_json)
        .bind(&record.provider_json)
        .bind(record.state.as_str())
        .bind(now_ms)
        .bind(version)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// The cluster's node rows written after `version` (a `StepCluster::nodes_version`
    /// read earlier), and how many nodes it has now: with the rows read at `version`,
    /// everything needed to tell whether a node was deleted since (then
    /// [`Store::node_numbers`] says which) without reading every row again.
    pub async fn nodes_changed_since(
        &self,
        cluster_id: &str,
        version: i64,
    ) -> Result<(Vec<Node>, i64), StoreError> {
        // Both reads from one snapshot: between two snapshots a node could be deleted
        // and another made, and the count would hide the deletion.
        let mut tx = self.pool.begin().await?;
        if self.backend == Backend::Postgres {
            sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                .execute(&mut *tx)
                .await?;
        }
        let changed = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM nodes WHERE cluster_id = $1 AND version > $2"
        ))
        .bind(cluster_id)
        .bind(version)
        .fetch_all(&mut *tx)
        .await?;
        let count = sqlx::query_scalar("SELECT COUNT(*) FROM nodes WHERE cluster_id = $1")
            .bind(cluster_id)
            .fetch_one(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok((changed, count))
    }

    /// The numbers of the cluster's nodes.
    pub async fn node_numbers(&self, cluster_id: &str) -> Result<Vec<i64>, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT number FROM nodes WHERE cluster_id = $1")
                .bind(cluster_id)
                .fetch_all(&self.pool)
                .await?,
        )
    }

    pub async fn list_nodes(&self, cluster_id: &str) -> Result<Vec<Node>, StoreError> {
        let listing = Listing {
            columns: COLUMNS,
            from: "nodes WHERE cluster_id = $1",
            order: "number",
            params: &[cluster_id],
        };
        self.listed(&listing).await
    }

    /// Nodes of clusters not yet deleted, of the tenants `scope` serves (for
    /// re-adoption at start): adopting runs the node's provider, a plugin with its
    /// tenant's credentials among them, so a worker dedicated to some tenants must never
    /// touch another's nodes, and a shared worker never the nodes of a tenant served by
    /// dedicated workers only.
    pub async fn live_nodes(&self, scope: &WorkerScope) -> Result<Vec<Node>, StoreError> {
        let Some(served) = scope.served_condition("c.tenant_id", 1) else {
            return Ok(Vec::new());
        };
        let sql = format!(
            "SELECT {} FROM nodes n JOIN clusters c ON c.id = n.cluster_id \
             WHERE c.state <> 'deleted' AND {served} ORDER BY n.cluster_id, n.number",
            COLUMNS
                .split(", ")
                .map(|column| format!("n.{column}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let mut query = sqlx::query_as(&sql);
        for tenant in scope.tenant_ids() {
            query = query.bind(tenant);
        }
        query.fetch_all(&self.pool).await.map_err(StoreError::from)
    }

    /// Records what the provider now says of the machines of the cluster's nodes
    /// `changed` (node number, answer), in one write turn however many there are (a
    /// new 200-node cluster's first answers would otherwise queue 200 writes behind its
    /// jobs). A row is written only when its answer differs from the stored one, so
    /// `presence_since_ms` says since when it holds. Returns how many rows changed.
    pub async fn record_presence(
        &self,
        cluster_id: &str,
        changed: &[(i64, NodePresence)],
        now_ms: i64,
    ) -> Result<u64, StoreError> {
        if changed.is_empty() {
            return Ok(0);
        }
        let (_turn, mut tx) = self.begin_write().await?;
        let mut written = 0;
        for (number, presence) in changed {
            written += sqlx::query(
                "UPDATE nodes SET presence = $3, presence_since_ms = $4 \
                 WHERE cluster_id = $1 AND number = $2 \
                 AND (presence IS NULL OR presence <> $3)",
            )
            .bind(cluster_id)
            .bind(number)
            .bind(presence.as_str())
            .bind(now_ms)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        }
        tx.commit().await?;
        Ok(written)
    }

    pub async fn delete_node(&self, cluster_id: &str, number: i64) -> Result<(), StoreError> {
        let (_turn, mut tx) = self.begin_write().await?;
        bump_nodes_version(&mut tx, cluster_id).await?;
        sqlx::query("DELETE FROM nodes WHERE cluster_id = $1 AND number = $2")
            .bind(cluster_id)
            .bind(number)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }
}

/// Counts a write to the cluster's nodes in `StepCluster::nodes_version`, in the
/// transaction of the write, and returns the new version (0 for a cluster that is
/// gone). Versions grow by one per write, and the write and its count commit together
/// (the cluster's row stays locked until then), so node rows read after seeing version
/// `v` are at least as new as every write counted in `v`, and a row whose `version` is
/// `v` or less was written no later than that.
async fn bump_nodes_version(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    cluster_id: &str,
) -> Result<i64, StoreError> {
    let version: Option<i64> = sqlx::query_scalar(
        "UPDATE clusters SET nodes_version = nodes_version + 1 WHERE id = $1 \
         RETURNING nodes_version",
    )
    .bind(cluster_id)
    .fetch_optional(&mut **tx)
    .await?;
    Ok(version.unwrap_or_default())
}
