//! Counts the metrics endpoint reads from the database at each scrape: the state of the
//! whole control plane, the same whichever process answers (a process's own work is
//! counted in memory, see the engine's `metrics`).
//!
//! Each count is one grouped query that stays cheap as history grows: jobs by state
//! read the jobs table (one row per job), tasks are counted for unfinished jobs only,
//! nodes for clusters that are not deleted.

use api_types::{JobState, NodeState, ServiceHealth, TaskState};

use super::{Backend, Store, StoreError};

/// The control plane's state at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gauges {
    pub jobs: Vec<(JobState, i64)>,
    /// Tasks of jobs that are not finished (queued, running or cancelling).
    pub active_tasks: Vec<(TaskState, i64)>,
    /// Ready tasks whose backoff has passed: what a free worker would claim now.
    pub claimable: i64,
    /// Nodes of live clusters by provider type (as the node's record names it).
    pub nodes: Vec<(String, NodeState, i64)>,
    /// The last health check of every checked service on every node.
    pub service_health: Vec<(ServiceHealth, i64)>,
}

impl Store {
    /// Reads every count of [`Gauges`] at `now_ms`.
    pub async fn gauges(&self, now_ms: i64) -> Result<Gauges, StoreError> {
        let jobs = sqlx::query_as("SELECT state, COUNT(*) FROM jobs GROUP BY state")
            .fetch_all(&self.pool)
            .await?;
        let active_tasks = sqlx::query_as(
            "SELECT t.state, COUNT(*) FROM tasks t JOIN jobs j ON j.id = t.job_id \
             WHERE j.state IN ('queued', 'running', 'cancelling') GROUP BY t.state",
        )
        .fetch_all(&self.pool)
        .await?;
        // The claim query's own condition, on the index it walks (`tasks_ready`).
        let claimable = sqlx::query_scalar(
            "SELECT COUNT(*) FROM tasks t JOIN jobs j ON j.id = t.job_id \
             WHERE t.state = 'ready' AND t.not_before_ms <= $1 \
               AND j.state IN ('queued', 'running')",
        )
        .bind(now_ms)
        .fetch_one(&self.pool)
        .await?;
        let provider = match self.backend() {
            Backend::Sqlite => "json_extract(n.provider_json, '$.provider')",
            Backend::Postgres => "(n.provider_json::json ->> 'provider')",
        };
        let nodes = sqlx::query_as(&format!(
            "SELECT {provider} AS provider, n.state, COUNT(*) FROM nodes n \
             JOIN clusters c ON c.id = n.cluster_id \
             WHERE c.state <> 'deleted' AND n.provider_json IS NOT NULL \
             GROUP BY 1, n.state"
        ))
        .fetch_all(&self.pool)
        .await?;
        let service_health =
            sqlx::query_as("SELECT health, COUNT(*) FROM service_health GROUP BY health")
                .fetch_all(&self.pool)
                .await?;
        Ok(Gauges {
            jobs,
            active_tasks,
            claimable,
            nodes,
            service_health,
        })
    }
}
