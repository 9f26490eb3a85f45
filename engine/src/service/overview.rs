//! The admin overview of the caller's tenant (admins only): clusters and nodes per
//! state, the catalog's size, users and quotas, and what the workers are doing (jobs
//! per state, tasks running now and the workers running them, the latest failed tasks).

use std::collections::BTreeMap;

use api_types::{ClusterRef, ClusterState, JobState, OverviewView};
use domain::catalog::EntityKind;
use sqlx::Row;

use super::{ActivityView, Caller, FailedTaskView, Service, ServiceError};

impl Service {
    pub async fn overview(&self, caller: &Caller) -> Result<OverviewView, ServiceError> {
        caller.require_tenant_admin(caller.tenant_id())?;
        let tenant = self.tenant(caller, caller.tenant_id()).await?;
        let clusters: Vec<_> = self
            .store
            .list_clusters(caller.tenant_id())
            .await?
            .into_iter()
            .filter(|cluster| cluster.state.is_live())
            .map(super::ClusterView::from)
            .collect();
        let mut by_state: BTreeMap<ClusterState, u64> = ClusterState::ALL
            .iter()
            .filter(|state| state.is_live())
            .map(|state| (*state, 0))
            .collect();
        for cluster in &clusters {
            *by_state.entry(cluster.state).or_default() += 1;
        }
        let reference = |cluster: &super::ClusterView| ClusterRef {
            id: cluster.id.clone(),
            name: cluster.name.clone(),
            state: cluster.state,
        };
        let catalog_rows = self.store.current_catalog(caller.tenant_id()).await?;
        let catalog = EntityKind::ALL
            .iter()
            .map(|kind| {
                let count = catalog_rows
                    .iter()
                    .filter(|revision| revision.kind == kind.key())
                    .count();
                (kind.key().to_owned(), count as u64)
            })
            .collect();
        Ok(OverviewView {
            clusters_by_state: by_state.into_iter().collect(),
            nodes: clusters.iter().map(|cluster| cluster.size as u64).sum(),
            active_nodes: clusters
                .iter()
                .filter(|cluster| cluster.state == ClusterState::Active)
                .map(|cluster| cluster.size as u64)
                .sum(),
            catalog,
            users: self.usernames_of(caller.tenant_id()).await?.len() as u64,
            busy: clusters
                .iter()
                .filter(|cluster| cluster.state.is_busy())
                .map(reference)
                .collect(),
            failed: clusters
                .iter()
                .filter(|cluster| cluster.state == ClusterState::Failed)
                .map(reference)
                .collect(),
            activity: self.activity(caller).await?,
            tenant,
        })
    }

    pub async fn activity(&self, caller: &Caller) -> Result<ActivityView, ServiceError> {
        caller.require_tenant_admin(caller.tenant_id())?;
        let tenant = caller.tenant_id();
        let pool = self.store.pool();
        let jobs_by_state = sqlx::query(
            "SELECT state, COUNT(*) AS n FROM jobs WHERE tenant_id = $1 GROUP BY state ORDER BY state",
        )
        .bind(tenant)
        .fetch_all(pool)
        .await
        .map_err(ServiceError::internal)?
        .iter()
        .map(|row| {
            let state: String = row.try_get("state").map_err(ServiceError::internal)?;
            let state = state.parse::<JobState>().map_err(ServiceError::internal)?;
            Ok((state, row.try_get("n").map_err(ServiceError::internal)?))
        })
        .collect::<Result<Vec<(JobState, i64)>, ServiceError>>()?;
        let running = sqlx::query(
            "SELECT COUNT(*) AS n, COUNT(DISTINCT lease_owner) AS workers FROM tasks \
             WHERE tenant_id = $1 AND state = 'running'",
        )
        .bind(tenant)
        .fetch_one(pool)
        .await
        .map_err(ServiceError::internal)?;
        let failed_tasks = sqlx::query(
            "SELECT job_id, cluster_id, node, service, action, error, finished_at_ms FROM tasks \
             WHERE tenant_id = $1 AND state = 'failed' \
             ORDER BY finished_at_ms DESC, id LIMIT 10",
        )
        .bind(tenant)
        .fetch_all(pool)
        .await
        .map_err(ServiceError::internal)?
        .iter()
        .map(|row| {
            Ok(FailedTaskView {
                job_id: row.try_get("job_id")?,
                cluster_id: row.try_get("cluster_id")?,
                node: row.try_get("node")?,
                service: row.try_get("service")?,
                action: row.try_get("action")?,
                error: row.try_get("error")?,
                finished_at_ms: row.try_get("finished_at_ms")?,
            })
        })
        .collect::<Result<Vec<_>, sqlx::Error>>()
        .map_err(ServiceError::internal)?;
        Ok(ActivityView {
            jobs_by_state,
            running_tasks: running.try_get("n").map_err(ServiceError::internal)?,
            busy_workers: running.try_get("workers").map_err(ServiceError::internal)?,
            failed_tasks,
        })
    }
}
