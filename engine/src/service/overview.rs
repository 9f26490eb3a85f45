//! Aggregates for the admin overview that no other call gives cheaply: jobs per
//! state, tasks running now and the workers running them, and the latest failed
//! tasks, all for the caller's tenant (admins only).

use serde::Serialize;
use sqlx::Row;
use utoipa::ToSchema;

use super::{Caller, Service, ServiceError};

/// A failed task, for "needs attention".
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FailedTaskView {
    pub job_id: String,
    pub cluster_id: String,
    pub node: i64,
    pub service: Option<String>,
    pub action: String,
    pub error: Option<String>,
    pub finished_at_ms: Option<i64>,
}

/// What the tenant's workers are doing.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ActivityView {
    /// `(state, count)` for every job state the tenant has.
    pub jobs_by_state: Vec<(String, i64)>,
    pub running_tasks: i64,
    /// Distinct workers (lease owners) running the tenant's tasks now.
    pub busy_workers: i64,
    /// The latest failed tasks, newest first (at most ten).
    pub failed_tasks: Vec<FailedTaskView>,
}

impl Service {
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
        .map(|row| Ok((row.try_get("state")?, row.try_get("n")?)))
        .collect::<Result<Vec<(String, i64)>, sqlx::Error>>()
        .map_err(ServiceError::internal)?;
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
