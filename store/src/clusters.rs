//! Clusters: a tenant's named set of nodes built from a pinned template version.
//!
//! The layout and config are stored as JSON; the template is copied in (name,
//! version, JSON) so a catalog edit never changes a running cluster under it. The
//! list a tenant pages through is [`listing`].

pub mod lease;
pub mod listing;
pub mod nodes;

use sqlx::{Any, Transaction};

use super::{conflict_on_unique, Backend, Listing, RowLock, Store, StoreError};
use crate::found::OrNotFound;
pub use api_types::{ClusterState, LeaseWarning};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Cluster {
    pub id: String,
    pub tenant_id: String,
    pub name: String,
    pub template_name: String,
    pub template_version: i64,
    pub template_json: String,
    pub owner_id: Option<String>,
    pub state: ClusterState,
    pub layout_json: String,
    pub config_json: String,
    /// The Coopr bundle of catalog entities the cluster was built from.
    pub catalog_json: String,
    /// The catalog provider's name.
    pub provider: String,
    pub lease_expires_ms: Option<i64>,
    /// Set while its services are stopped because the lease ended (the template's
    /// grace): when the janitor deletes it unless the lease is extended first.
    pub lease_deletes_at_ms: Option<i64>,
    /// The warnings of the lease's current end sent so far.
    pub lease_warned: Option<LeaseWarning>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}

/// What a step needs of its cluster: the row without its layout, template and catalog
/// snapshot. Those can be large, and every task of a job would read them at once; steps
/// get them from the job and from the snapshot read by [`Store::catalog_snapshot`],
/// parsed once per version.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct StepCluster {
    pub id: String,
    pub tenant_id: String,
    pub name: String,
    pub owner_id: Option<String>,
    pub config_json: String,
    /// The catalog provider's name.
    pub provider: String,
    /// Grows after every write to the cluster's nodes (which bumps it after writing).
    pub nodes_version: i64,
    /// Grows with every write of the catalog snapshot.
    pub catalog_version: i64,
}

/// What creating a cluster needs; ids and times are filled in by the store.
#[derive(Debug, Clone)]
pub struct NewCluster {
    pub tenant_id: String,
    pub name: String,
    pub template_name: String,
    pub template_version: i64,
    pub template_json: String,
    pub owner_id: Option<String>,
    pub state: ClusterState,
    pub layout_json: String,
    pub config_json: String,
    pub catalog_json: String,
    pub provider: String,
    pub lease_expires_ms: Option<i64>,
}

/// The columns a new cluster is written with (the lease marks start empty), as a macro
/// so that [`COLUMNS`] can extend it.
macro_rules! new_columns {
    () => {
        "id, tenant_id, name, template_name, template_version, template_json, owner_id, \
         state, layout_json, config_json, catalog_json, provider, lease_expires_ms, \
         created_at_ms, updated_at_ms"
    };
}
const NEW_COLUMNS: &str = new_columns!();
const COLUMNS: &str = concat!(new_columns!(), ", lease_deletes_at_ms, lease_warned");

impl Store {
    pub async fn create_cluster(
        &self,
        new: &NewCluster,
        now_ms: i64,
    ) -> Result<Cluster, StoreError> {
        let mut tx = self.pool.begin().await?;
        let cluster = insert_cluster(&mut tx, new, now_ms).await?;
        tx.commit().await?;
        Ok(cluster)
    }

    pub async fn cluster(&self, id: &str) -> Result<Cluster, StoreError> {
        sqlx::query_as(&format!("SELECT {COLUMNS} FROM clusters WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .or_not_found(|| format!("cluster {id}"))
    }

    /// The cluster as a step sees it (see [`StepCluster`]).
    pub async fn step_cluster(&self, id: &str) -> Result<StepCluster, StoreError> {
        sqlx::query_as(
            "SELECT id, tenant_id, name, owner_id, config_json, provider, nodes_version, \
             catalog_version FROM clusters WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .or_not_found(|| format!("cluster {id}"))
    }

    /// The cluster's catalog snapshot (Coopr bundle JSON).
    pub async fn catalog_snapshot(&self, id: &str) -> Result<String, StoreError> {
        sqlx::query_scalar("SELECT catalog_json FROM clusters WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .or_not_found(|| format!("cluster {id}"))
    }

    /// The tenant's live (not deleted) cluster of that name; live names are unique.
    pub async fn cluster_by_name(
        &self,
        tenant_id: &str,
        name: &str,
    ) -> Result<Cluster, StoreError> {
        sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM clusters WHERE tenant_id = $1 AND name = $2 \
             AND state <> 'deleted'"
        ))
        .bind(tenant_id)
        .bind(name)
        .fetch_optional(&self.pool)
        .await?
        .or_not_found(|| format!("cluster {name:?}"))
    }

    pub async fn list_clusters(&self, tenant_id: &str) -> Result<Vec<Cluster>, StoreError> {
        let listing = Listing {
            columns: COLUMNS,
            from: "clusters WHERE tenant_id = $1",
            order: "name",
            params: &[tenant_id],
        };
        self.listed(&listing).await
    }

    /// Ids of the clusters in `state` whose lease ended before `now_ms`, the longest
    /// expired first, at most `limit` (active ones to delete, failed ones whose delete
    /// must be forced).
    pub async fn expired_cluster_ids(
        &self,
        state: ClusterState,
        now_ms: i64,
        limit: i64,
    ) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT id FROM clusters WHERE state = $1 AND lease_expires_ms IS NOT NULL \
             AND lease_expires_ms < $2 ORDER BY lease_expires_ms LIMIT $3",
        )
        .bind(state.as_str())
        .bind(now_ms)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Clusters whose lease needs the janitor now (see the engine's `operations::lease`):
    /// a warning due before `hour_from_now`/`day_from_now`, an end passed, or a lease
    /// stop's grace over; the soonest end first, at most `limit`. Those already
    /// warned, or stopped and still in their grace, are left out.
    pub async fn leases_due(
        &self,
        now_ms: i64,
        hour_from_now: i64,
        day_from_now: i64,
        limit: i64,
    ) -> Result<Vec<Cluster>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM clusters \
             WHERE state IN ('active', 'failed', 'creating', 'updating') \
             AND lease_expires_ms IS NOT NULL AND lease_expires_ms < $3 \
             AND (lease_deletes_at_ms IS NULL OR lease_deletes_at_ms <= $1) \
             AND NOT (lease_expires_ms > $1 AND COALESCE(lease_warned, '') = 'hour') \
             AND NOT (lease_expires_ms > $2 AND COALESCE(lease_warned, '') = 'day') \
             ORDER BY lease_expires_ms LIMIT $4"
        ))
        .bind(now_ms)
        .bind(hour_from_now)
        .bind(day_from_now)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Records a new state and layout (after a job changed the cluster).
    pub async fn update_cluster(
        &self,
        id: &str,
        state: ClusterState,
        layout_json: &str,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE clusters SET state = $2, layout_json = $3, updated_at_ms = $4 WHERE id = $1",
        )
        .bind(id)
        .bind(state.as_str())
        .bind(layout_json)
        .bind(now_ms)
        .execute(&self.pool)
        .await?
        .or_not_found(|| format!("cluster {id}"))
    }
}

impl Store {
    /// Sets (or clears) when the cluster's lease ends; the warnings sent of the old
    /// end no longer apply. A cluster its lease stopped is left alone (false): it
    /// starts again through the engine's `operations::lease::resume`.
    pub async fn set_cluster_lease(
        &self,
        id: &str,
        lease_expires_ms: Option<i64>,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE clusters SET lease_expires_ms = $2, lease_warned = NULL \
             WHERE id = $1 AND lease_deletes_at_ms IS NULL",
        )
        .bind(id)
        .bind(lease_expires_ms)
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            // Gone, or stopped by its lease.
            self.cluster(id).await?;
            return Ok(false);
        }
        Ok(true)
    }
}

/// The cluster's state, read with its row locked for the rest of `tx` (PostgreSQL), so
/// checks made on it hold until the transaction commits.
pub async fn lock_cluster_state(
    tx: &mut Transaction<'static, Any>,
    backend: Backend,
    id: &str,
) -> Result<ClusterState, StoreError> {
    sqlx::query_scalar(&format!(
        "SELECT state FROM clusters WHERE id = $1{}",
        backend.lock_clause(RowLock::Wait)
    ))
    .bind(id)
    .fetch_optional(&mut **tx)
    .await?
    .or_not_found(|| format!("cluster {id}"))
}

/// Replaces the cluster's catalog snapshot and config inside `tx` (a change that
/// brings catalog edits or new config), bumping the snapshot's version.
pub async fn update_catalog_and_config(
    tx: &mut Transaction<'static, Any>,
    id: &str,
    catalog_json: &str,
    config_json: &str,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE clusters SET catalog_json = $2, config_json = $3, \
         catalog_version = catalog_version + 1 WHERE id = $1",
    )
    .bind(id)
    .bind(catalog_json)
    .bind(config_json)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Inserts a new cluster inside the caller's transaction (with its first job, say).
pub async fn insert_cluster(
    tx: &mut Transaction<'static, Any>,
    new: &NewCluster,
    now_ms: i64,
) -> Result<Cluster, StoreError> {
    let cluster = Cluster {
        id: uuid::Uuid::new_v4().to_string(),
        tenant_id: new.tenant_id.clone(),
        name: new.name.clone(),
        template_name: new.template_name.clone(),
        template_version: new.template_version,
        template_json: new.template_json.clone(),
        owner_id: new.owner_id.clone(),
        state: new.state,
        layout_json: new.layout_json.clone(),
        config_json: new.config_json.clone(),
        catalog_json: new.catalog_json.clone(),
        provider: new.provider.clone(),
        lease_expires_ms: new.lease_expires_ms,
        lease_deletes_at_ms: None,
        lease_warned: None,
        created_at_ms: now_ms,
        updated_at_ms: now_ms,
    };
    let result = sqlx::query(&format!(
        "INSERT INTO clusters ({NEW_COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)"
    ))
    .bind(&cluster.id)
    .bind(&cluster.tenant_id)
    .bind(&cluster.name)
    .bind(&cluster.template_name)
    .bind(cluster.template_version)
    .bind(&cluster.template_json)
    .bind(&cluster.owner_id)
    .bind(cluster.state.as_str())
    .bind(&cluster.layout_json)
    .bind(&cluster.config_json)
    .bind(&cluster.catalog_json)
    .bind(&cluster.provider)
    .bind(cluster.lease_expires_ms)
    .bind(cluster.created_at_ms)
    .bind(cluster.updated_at_ms)
    .execute(&mut **tx)
    .await;
    conflict_on_unique(result, || format!("cluster {:?}", new.name))?;
    Ok(cluster)
}

/// The cluster's row as `tx` sees it.
pub async fn cluster_in(
    tx: &mut Transaction<'static, Any>,
    id: &str,
) -> Result<Cluster, StoreError> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM clusters WHERE id = $1"))
        .bind(id)
        .fetch_optional(&mut **tx)
        .await?
        .or_not_found(|| format!("cluster {id}"))
}
