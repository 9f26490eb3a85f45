//! The monitor's table: each checked service on each node of a live cluster, with what
//! its last check found and when the next one is due.
//!
//! A check is claimed by one conditional `UPDATE` (due, and not claimed by a process
//! whose claim still runs), so several processes sharing the database never run the
//! same check at the same moment; a process that dies mid-check loses its claim when
//! `claimed_until_ms` passes.

use api_types::{ClusterState, HookEvent, ServiceHealth};

use super::hooks::HealthChange;
use super::{Store, StoreError};
use crate::WorkerScope;

/// One row of `service_health`.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct HealthRow {
    pub cluster_id: String,
    pub node_number: i64,
    pub service: String,
    pub health: ServiceHealth,
    pub detail: Option<String>,
    pub checked_at_ms: Option<i64>,
    pub next_check_ms: i64,
    /// When the service was first found down since it last answered; `None` while up
    /// or unknown.
    pub down_since_ms: Option<i64>,
}

const COLUMNS: &str = "cluster_id, node_number, service, health, detail, checked_at_ms, \
                       next_check_ms, down_since_ms";

/// Which check: a service on a node of a cluster.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CheckKey {
    pub cluster_id: String,
    pub node_number: i64,
    pub service: String,
}

impl Store {
    /// Every cluster not deleted, with its state and when its row last changed: what
    /// the monitor reconciles its checks against.
    pub async fn monitored_clusters(&self) -> Result<Vec<(String, ClusterState, i64)>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT id, state, updated_at_ms FROM clusters WHERE state <> 'deleted' ORDER BY id",
        )
        .fetch_all(&self.pool)
        .await?)
    }

    /// [`Self::monitored_clusters`] of the tenants `scope` serves: the clusters whose
    /// node providers a pool may run (a provider can be a tenant's plugin with its
    /// credentials, as for re-adoption: see [`Store::live_nodes`]). Clusters their lease
    /// stopped are left out: their services are stopped on purpose, which healing must
    /// not take for deaths.
    pub async fn served_clusters(
        &self,
        scope: &WorkerScope,
    ) -> Result<Vec<(String, ClusterState, i64)>, StoreError> {
        let Some(served) = scope.served_condition("tenant_id", 1) else {
            return Ok(Vec::new());
        };
        let sql = format!(
            "SELECT id, state, updated_at_ms FROM clusters WHERE state <> 'deleted' \
             AND lease_deletes_at_ms IS NULL AND {served} ORDER BY id"
        );
        let mut query = sqlx::query_as(&sql);
        for tenant in scope.tenant_ids() {
            query = query.bind(tenant);
        }
        Ok(query.fetch_all(&self.pool).await?)
    }

    /// The cluster's checks, by node and service.
    pub async fn cluster_health(&self, cluster_id: &str) -> Result<Vec<HealthRow>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM service_health WHERE cluster_id = $1 \
             ORDER BY node_number, service"
        ))
        .bind(cluster_id)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Makes the cluster's checks exactly `wanted`: new ones are due now and unknown,
    /// gone ones are dropped, and, when `due_now`, every kept one is due now (the cluster
    /// changed: what a job did is checked at once).
    pub async fn set_cluster_checks(
        &self,
        cluster_id: &str,
        wanted: &[(i64, String)],
        due_now: bool,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let existing = self.cluster_health(cluster_id).await?;
        // Several processes reconcile the same cluster: inserts that lose the race do
        // nothing (`ON CONFLICT`), deletes of rows already gone affect nothing.
        let (_turn, mut tx) = self.begin_write().await?;
        for row in &existing {
            let keep = wanted
                .iter()
                .any(|(node, service)| *node == row.node_number && *service == row.service);
            if !keep {
                sqlx::query(
                    "DELETE FROM service_health WHERE cluster_id = $1 AND node_number = $2 \
                     AND service = $3",
                )
                .bind(cluster_id)
                .bind(row.node_number)
                .bind(&row.service)
                .execute(&mut *tx)
                .await?;
            }
        }
        for (node, service) in wanted {
            let known = existing
                .iter()
                .any(|row| row.node_number == *node && row.service == *service);
            if !known {
                sqlx::query(
                    "INSERT INTO service_health (cluster_id, node_number, service, health, \
                     next_check_ms) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
                )
                .bind(cluster_id)
                .bind(node)
                .bind(service)
                .bind(ServiceHealth::Unknown.as_str())
                .bind(now_ms)
                .execute(&mut *tx)
                .await?;
            }
        }
        if due_now {
            sqlx::query("UPDATE service_health SET next_check_ms = $2 WHERE cluster_id = $1")
                .bind(cluster_id)
                .bind(now_ms)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Drops every check of clusters not in `live` (deleted, or no longer checked).
    pub async fn drop_checks_except(
        &self,
        live: &std::collections::HashSet<String>,
    ) -> Result<u64, StoreError> {
        let clusters: Vec<String> =
            sqlx::query_scalar("SELECT DISTINCT cluster_id FROM service_health")
                .fetch_all(&self.pool)
                .await?;
        let mut dropped = 0;
        for cluster in clusters.iter().filter(|id| !live.contains(id.as_str())) {
            dropped += sqlx::query("DELETE FROM service_health WHERE cluster_id = $1")
                .bind(cluster)
                .execute(&self.pool)
                .await?
                .rows_affected();
        }
        Ok(dropped)
    }

    /// Claims up to `limit` due checks until `claimed_until_ms`; another process's
    /// claim that has not run out is left alone.
    ///
    /// Only the checks of clusters `scope` serves: a check runs on the node over SSH
    /// from this process, as a step would. A cluster its lease stopped is not checked:
    /// its services are down on purpose, and its last results stay.
    pub async fn claim_due_checks(
        &self,
        scope: &WorkerScope,
        now_ms: i64,
        claimed_until_ms: i64,
        limit: i64,
    ) -> Result<Vec<CheckKey>, StoreError> {
        let Some(tenants_served) = scope.served_condition("tenant_id", 3) else {
            return Ok(Vec::new());
        };
        // EXISTS per due check, not `cluster_id IN (SELECT … FROM clusters)`: SQLite
        // built that list from every active cluster on each tick (7 ms at 2,000
        // clusters, for no due check at all); this looks up only the due checks'
        // clusters, by key. The unqualified columns inside are the cluster's.
        let sql = format!(
            "SELECT h.cluster_id, h.node_number, h.service FROM service_health h \
             WHERE h.next_check_ms <= $1 \
             AND (h.claimed_until_ms IS NULL OR h.claimed_until_ms < $1) \
             AND EXISTS (SELECT 1 FROM clusters WHERE clusters.id = h.cluster_id \
                         AND state = 'active' AND lease_deletes_at_ms IS NULL \
                         AND {tenants_served}) \
             ORDER BY h.next_check_ms LIMIT $2"
        );
        let mut query = sqlx::query_as(&sql).bind(now_ms).bind(limit);
        for tenant in scope.tenant_ids() {
            query = query.bind(tenant);
        }
        let due: Vec<(String, i64, String)> = query.fetch_all(&self.pool).await?;
        let mut claimed = Vec::new();
        for (cluster_id, node_number, service) in due {
            let done = sqlx::query(
                "UPDATE service_health SET claimed_until_ms = $4 WHERE cluster_id = $1 \
                 AND node_number = $2 AND service = $3 AND next_check_ms <= $5 \
                 AND (claimed_until_ms IS NULL OR claimed_until_ms < $5)",
            )
            .bind(&cluster_id)
            .bind(node_number)
            .bind(&service)
            .bind(claimed_until_ms)
            .bind(now_ms)
            .execute(&self.pool)
            .await?;
            if done.rows_affected() == 1 {
                claimed.push(CheckKey {
                    cluster_id,
                    node_number,
                    service,
                });
            }
        }
        Ok(claimed)
    }

    /// The last thing healing did or declined to do on the cluster, with when.
    pub async fn heal_note(&self, cluster_id: &str) -> Result<Option<(String, i64)>, StoreError> {
        let row: Option<(Option<String>, Option<i64>)> =
            sqlx::query_as("SELECT heal_note, heal_note_at_ms FROM clusters WHERE id = $1")
                .bind(cluster_id)
                .fetch_optional(&self.pool)
                .await?;
        Ok(row.and_then(|(note, at)| note.zip(at)))
    }

    /// Keeps `note` as the cluster's heal note unless it already is (its time stays
    /// when it first said so). The cluster's `updated_at_ms` is not touched: the
    /// monitor reads that as "the cluster changed, list its checks again".
    pub async fn set_heal_note(
        &self,
        cluster_id: &str,
        note: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let _turn = self.write_turn().await;
        let changed = sqlx::query(
            "UPDATE clusters SET heal_note = $2, heal_note_at_ms = $3 WHERE id = $1 \
             AND (heal_note IS NULL OR heal_note <> $2)",
        )
        .bind(cluster_id)
        .bind(note)
        .bind(now_ms)
        .execute(&self.pool)
        .await?;
        Ok(changed.rows_affected() > 0)
    }

    /// The owner's healing choice for the cluster: `None` when the template decides.
    pub async fn cluster_healing(&self, cluster_id: &str) -> Result<Option<bool>, StoreError> {
        let row: Option<(Option<i64>,)> =
            sqlx::query_as("SELECT healing FROM clusters WHERE id = $1")
                .bind(cluster_id)
                .fetch_optional(&self.pool)
                .await?;
        Ok(row.and_then(|(healing,)| healing).map(|flag| flag != 0))
    }

    /// The owners' healing choices of the live clusters that have one, by cluster id.
    pub async fn healing_choices(
        &self,
    ) -> Result<std::collections::HashMap<String, bool>, StoreError> {
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "SELECT id, healing FROM clusters WHERE healing IS NOT NULL AND state <> 'deleted'",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(id, healing)| (id, healing != 0))
            .collect())
    }

    /// Sets the owner's healing choice (`None`: back to the template's policy).
    pub async fn set_cluster_healing(
        &self,
        cluster_id: &str,
        healing: Option<bool>,
    ) -> Result<(), StoreError> {
        let _turn = self.write_turn().await;
        sqlx::query("UPDATE clusters SET healing = $2 WHERE id = $1")
            .bind(cluster_id)
            .bind(healing.map(i64::from))
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Records what a claimed check found and when the next one is due.
    ///
    /// A service that answered at its last check and no longer does (or the reverse)
    /// is told to the tenant's hooks (`health.down`, `health.up`) in the same
    /// transaction: the change is written by an update conditional on the state it
    /// changes from, so of two processes recording it, one sends the event, and a
    /// crash loses neither the state nor its deliveries. A first answer after `unknown`
    /// (a new cluster) is no change anyone is told of.
    pub async fn record_check(
        &self,
        key: &CheckKey,
        health: ServiceHealth,
        detail: Option<&str>,
        now_ms: i64,
        next_check_ms: i64,
    ) -> Result<(), StoreError> {
        let turn = match health {
            ServiceHealth::Down => Some((ServiceHealth::Up, HookEvent::HealthDown)),
            ServiceHealth::Up => Some((ServiceHealth::Down, HookEvent::HealthUp)),
            ServiceHealth::Unknown => None,
        };
        let (_turn, mut tx) = self.begin_write().await?;
        let last: Option<(ServiceHealth, Option<i64>)> = sqlx::query_as(
            "SELECT health, down_since_ms FROM service_health WHERE cluster_id = $1 \
             AND node_number = $2 AND service = $3",
        )
        .bind(&key.cluster_id)
        .bind(key.node_number)
        .bind(&key.service)
        .fetch_optional(&mut *tx)
        .await?;
        let changing = match (turn, last) {
            (Some((from, event)), Some((was, down_since_ms))) if was == from => {
                Some((from, event, down_since_ms))
            }
            _ => None,
        };
        // Conditional on the state read above ($8): another process that recorded the
        // same change meanwhile makes this update match nothing.
        let done = sqlx::query(
            "UPDATE service_health SET health = $4, detail = $5, checked_at_ms = $6, \
             next_check_ms = $7, claimed_until_ms = NULL, down_since_ms = CASE \
             WHEN $4 = 'down' THEN COALESCE(down_since_ms, $6) ELSE NULL END \
             WHERE cluster_id = $1 AND node_number = $2 AND service = $3 \
             AND ($8 IS NULL OR health = $8)",
        )
        .bind(&key.cluster_id)
        .bind(key.node_number)
        .bind(&key.service)
        .bind(health.as_str())
        .bind(detail)
        .bind(now_ms)
        .bind(next_check_ms)
        .bind(changing.map(|(from, _, _)| from.as_str()))
        .execute(&mut *tx)
        .await?;
        if let Some((_, event, down_since_ms)) = changing {
            if done.rows_affected() == 1 {
                let change = HealthChange {
                    event,
                    message: detail,
                    down_since_ms: down_since_ms.filter(|_| event == HookEvent::HealthUp),
                };
                super::hooks::record_health_change(&mut tx, key, &change, now_ms).await?;
            }
        }
        tx.commit().await?;
        Ok(())
    }
}
