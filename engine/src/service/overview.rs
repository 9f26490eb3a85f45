//! Aggregates for the admin overview that no other call gives cheaply: jobs per
//! state, tasks running now and the workers running them, and the latest failed
//! tasks, all for the caller's tenant (admins only).

use sqlx::Row;

use api_types::JobState;

use super::{ActivityView, Caller, FailedTaskView, Service, ServiceError};

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
