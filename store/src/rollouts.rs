//! Rolling a template's new catalog revision out across its clusters (issue 40): the
//! owner's pin that keeps a cluster where it is, and the rollout rows (`rollouts`, one
//! per rollout, and `rollout_clusters`, one per cluster it lists). A rollout and all its
//! cluster rows are written in one transaction; the driver (the engine's `rollout`) moves
//! them on with conditional updates, so two processes driving the same rollout never
//! start one cluster twice.

use api_types::{RolloutClusterState, RolloutState};

use super::{Store, StoreError};
use crate::found::OrNotFound;

/// One row of `rollouts`.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Rollout {
    pub id: String,
    pub tenant_id: String,
    pub template: String,
    pub max_parallel: i64,
    pub state: RolloutState,
    pub reason: Option<String>,
    /// The user id whose upgrades these are.
    pub created_by: String,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}

/// One row of `rollout_clusters`, with the cluster's name.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct RolloutCluster {
    pub rollout_id: String,
    pub cluster_id: String,
    pub cluster_name: String,
    pub position: i64,
    pub state: RolloutClusterState,
    pub job_id: Option<String>,
    pub note: Option<String>,
    pub started_at_ms: Option<i64>,
    pub updated_at_ms: i64,
}

const ROLLOUT_COLUMNS: &str = "id, tenant_id, template, max_parallel, state, reason, \
                               created_by, created_at_ms, updated_at_ms";

const CLUSTER_COLUMNS: &str = "r.rollout_id, r.cluster_id, c.name AS cluster_name, r.position, \
                               r.state, r.job_id, r.note, r.started_at_ms, r.updated_at_ms";

impl Store {
    /// Whether the cluster's owner pinned it to its catalog revision.
    pub async fn cluster_pinned(&self, cluster_id: &str) -> Result<bool, StoreError> {
        let row: Option<(i64,)> = sqlx::query_as("SELECT pinned FROM clusters WHERE id = $1")
            .bind(cluster_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.is_some_and(|(pinned,)| pinned != 0))
    }

    /// Pins the cluster to its catalog revision, or unpins it.
    pub async fn set_cluster_pinned(
        &self,
        cluster_id: &str,
        pinned: bool,
    ) -> Result<(), StoreError> {
        let _turn = self.write_turn().await;
        sqlx::query("UPDATE clusters SET pinned = $2 WHERE id = $1")
            .bind(cluster_id)
            .bind(i64::from(pinned))
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Writes a running rollout and its clusters (`(cluster id, state)` in position
    /// order) in one transaction: all of it or nothing.
    pub async fn create_rollout(
        &self,
        rollout: &Rollout,
        clusters: &[(String, RolloutClusterState)],
    ) -> Result<(), StoreError> {
        let (_turn, mut tx) = self.begin_write().await?;
        sqlx::query(&format!(
            "INSERT INTO rollouts ({ROLLOUT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
        ))
        .bind(&rollout.id)
        .bind(&rollout.tenant_id)
        .bind(&rollout.template)
        .bind(rollout.max_parallel)
        .bind(rollout.state.as_str())
        .bind(rollout.reason.as_deref())
        .bind(&rollout.created_by)
        .bind(rollout.created_at_ms)
        .bind(rollout.updated_at_ms)
        .execute(&mut *tx)
        .await?;
        for (position, (cluster_id, state)) in clusters.iter().enumerate() {
            sqlx::query(
                "INSERT INTO rollout_clusters (rollout_id, cluster_id, position, state, \
                 updated_at_ms) VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(&rollout.id)
            .bind(cluster_id)
            .bind(i64::try_from(position).unwrap_or(i64::MAX))
            .bind(state.as_str())
            .bind(rollout.created_at_ms)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The rollout `id` of `tenant_id`.
    pub async fn rollout(&self, tenant_id: &str, id: &str) -> Result<Rollout, StoreError> {
        sqlx::query_as(&format!(
            "SELECT {ROLLOUT_COLUMNS} FROM rollouts WHERE id = $1 AND tenant_id = $2"
        ))
        .bind(id)
        .bind(tenant_id)
        .fetch_optional(&self.pool)
        .await?
        .or_not_found(|| format!("rollout {id}"))
    }

    /// The tenant's rollouts, newest first.
    pub async fn list_rollouts(&self, tenant_id: &str) -> Result<Vec<Rollout>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "SELECT {ROLLOUT_COLUMNS} FROM rollouts WHERE tenant_id = $1 \
             ORDER BY created_at_ms DESC, id LIMIT 500"
        ))
        .bind(tenant_id)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Every rollout that still has work to do (running or stopping), oldest first.
    pub async fn active_rollouts(&self) -> Result<Vec<Rollout>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "SELECT {ROLLOUT_COLUMNS} FROM rollouts WHERE state IN ($1, $2) \
             ORDER BY created_at_ms, id"
        ))
        .bind(RolloutState::Running.as_str())
        .bind(RolloutState::Stopping.as_str())
        .fetch_all(&self.pool)
        .await?)
    }

    /// The rollout's clusters in position order.
    pub async fn rollout_clusters(
        &self,
        rollout_id: &str,
    ) -> Result<Vec<RolloutCluster>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "SELECT {CLUSTER_COLUMNS} FROM rollout_clusters r JOIN clusters c ON c.id = r.cluster_id \
             WHERE r.rollout_id = $1 ORDER BY r.position"
        ))
        .bind(rollout_id)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Moves one cluster of a rollout from `from` to `to` (with its job and note when
    /// given, `started_at_ms` when it starts); false when it was no longer in `from`
    /// (another process moved it first).
    #[allow(clippy::too_many_arguments)]
    pub async fn move_rollout_cluster(
        &self,
        rollout_id: &str,
        cluster_id: &str,
        from: RolloutClusterState,
        to: RolloutClusterState,
        job_id: Option<&str>,
        note: Option<&str>,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let _turn = self.write_turn().await;
        let started = (to == RolloutClusterState::Running).then_some(now_ms);
        let done = sqlx::query(
            "UPDATE rollout_clusters SET state = $4, job_id = COALESCE($5, job_id), \
             note = COALESCE($6, note), started_at_ms = COALESCE($7, started_at_ms), \
             updated_at_ms = $8 \
             WHERE rollout_id = $1 AND cluster_id = $2 AND state = $3",
        )
        .bind(rollout_id)
        .bind(cluster_id)
        .bind(from.as_str())
        .bind(to.as_str())
        .bind(job_id)
        .bind(note)
        .bind(started)
        .bind(now_ms)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Moves the rollout from `from` to `to` with `reason` (kept when `None`); false
    /// when it was no longer in `from`.
    pub async fn move_rollout(
        &self,
        id: &str,
        from: RolloutState,
        to: RolloutState,
        reason: Option<&str>,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let _turn = self.write_turn().await;
        let done = sqlx::query(
            "UPDATE rollouts SET state = $3, reason = COALESCE($4, reason), updated_at_ms = $5 \
             WHERE id = $1 AND state = $2",
        )
        .bind(id)
        .bind(from.as_str())
        .bind(to.as_str())
        .bind(reason)
        .bind(now_ms)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() > 0)
    }
}
