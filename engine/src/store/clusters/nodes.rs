//! Nodes of a cluster, one row per layout node number.
//!
//! A node is recorded (with its provider record) as soon as the provider made it, so
//! a retried create finds it instead of leaking a second machine.

use crate::store::{Listing, Store, StoreError};
pub use api_types::NodeState;

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
}

/// A node's recorded facts; saving it again for the same number replaces them.
#[derive(Debug, Clone)]
pub struct NodeRecord {
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
     provider_json, state, created_at_ms, updated_at_ms";

impl Store {
    /// Inserts the node or updates the one with the same cluster and number.
    pub async fn save_node(&self, record: &NodeRecord, now_ms: i64) -> Result<(), StoreError> {
        let _turn = self.write_turn().await;
        sqlx::query(
            "INSERT INTO nodes (id, cluster_id, number, hostname, hardwaretype, imagetype, \
             services_json, provider_json, state, created_at_ms, updated_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) \
             ON CONFLICT (cluster_id, number) DO UPDATE SET hostname = excluded.hostname, \
             hardwaretype = excluded.hardwaretype, imagetype = excluded.imagetype, \
             services_json = excluded.services_json, provider_json = excluded.provider_json, \
             state = excluded.state, updated_at_ms = excluded.updated_at_ms",
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
        .execute(&self.pool)
        .await?;
        self.bump_nodes_version(&record.cluster_id).await
    }

    /// Counts writes to the cluster's nodes in `StepCluster::nodes_version`, the write first
    /// and then the number: node rows read after seeing version `v` are at least as new
    /// as every write counted in `v`.
    async fn bump_nodes_version(&self, cluster_id: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE clusters SET nodes_version = nodes_version + 1 WHERE id = $1")
            .bind(cluster_id)
            .execute(&self.pool)
            .await?;
        Ok(())
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

    /// Nodes of clusters not yet deleted, across tenants (for re-adoption at start).
    pub async fn live_nodes(&self) -> Result<Vec<Node>, StoreError> {
        sqlx::query_as(&format!(
            "SELECT {} FROM nodes n JOIN clusters c ON c.id = n.cluster_id \
             WHERE c.state <> 'deleted' ORDER BY n.cluster_id, n.number",
            COLUMNS
                .split(", ")
                .map(|column| format!("n.{column}"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::from)
    }

    pub async fn delete_node(&self, cluster_id: &str, number: i64) -> Result<(), StoreError> {
        let _turn = self.write_turn().await;
        sqlx::query("DELETE FROM nodes WHERE cluster_id = $1 AND number = $2")
            .bind(cluster_id)
            .bind(number)
            .execute(&self.pool)
            .await?;
        self.bump_nodes_version(cluster_id).await
    }
}
