//! Reading jobs and tasks back: for the UI, and for planning a rollback (the failed
//! job's DAG and the tasks it completed).

use std::collections::BTreeSet;

use domain::plan::{TaskDag, TaskId};
use sqlx::{Any, Row, Transaction};

use super::types::{parse_action, parse_service, parse_word, to_u32};
use super::{JobState, QueueError, TaskState};
use crate::store::Store;
use domain::names::ServiceName;
use domain::plan::Action;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub id: String,
    pub tenant_id: String,
    pub cluster_id: String,
    pub operation: String,
    pub state: JobState,
    pub tasks_total: i64,
    pub tasks_succeeded: i64,
    pub created_at_ms: i64,
    pub started_at_ms: Option<i64>,
    pub finished_at_ms: Option<i64>,
    pub error: Option<String>,
    /// A forced delete (see [`crate::queue::ClusterEffects::forced`]).
    pub forced: bool,
}

/// A task row as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRecord {
    pub id: String,
    pub job_id: String,
    pub number: TaskId,
    pub node: u32,
    pub service: Option<ServiceName>,
    pub action: Action,
    pub state: TaskState,
    pub attempts: i64,
    pub max_attempts: i64,
    pub idempotent: bool,
    pub not_before_ms: i64,
    pub lease_owner: Option<String>,
    pub lease_expires_ms: Option<i64>,
    pub started_at_ms: Option<i64>,
    pub finished_at_ms: Option<i64>,
    pub error: Option<String>,
}

const JOB_COLUMNS: &str = "id, tenant_id, cluster_id, operation, state, tasks_total, \
     tasks_succeeded, created_at_ms, started_at_ms, finished_at_ms, error, forced";

fn job_from_row(row: &sqlx::any::AnyRow) -> Result<Job, QueueError> {
    Ok(Job {
        id: row.try_get("id")?,
        tenant_id: row.try_get("tenant_id")?,
        cluster_id: row.try_get("cluster_id")?,
        operation: row.try_get("operation")?,
        state: parse_word::<JobState>(&row.try_get::<String, _>("state")?)?,
        tasks_total: row.try_get("tasks_total")?,
        tasks_succeeded: row.try_get("tasks_succeeded")?,
        created_at_ms: row.try_get("created_at_ms")?,
        started_at_ms: row.try_get("started_at_ms")?,
        finished_at_ms: row.try_get("finished_at_ms")?,
        error: row.try_get("error")?,
        forced: row.try_get::<i64, _>("forced")? != 0,
    })
}

pub async fn job(store: &Store, job_id: &str) -> Result<Job, QueueError> {
    let row = sqlx::query(&format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = $1"))
        .bind(job_id)
        .fetch_optional(store.pool())
        .await?
        .ok_or_else(|| QueueError::NotFound(format!("job {job_id}")))?;
    job_from_row(&row)
}

/// A cluster's jobs, newest first.
/// What a job was submitted to do to its cluster: the layouts before and after (as
/// stored, JSON) and whether it is a forced delete. Fixed at submit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobLayouts {
    pub from_layout_json: Option<String>,
    pub to_layout_json: Option<String>,
    pub forced: bool,
}

pub async fn job_layouts(store: &Store, job_id: &str) -> Result<JobLayouts, QueueError> {
    let row =
        sqlx::query("SELECT from_layout_json, to_layout_json, forced FROM jobs WHERE id = $1")
            .bind(job_id)
            .fetch_optional(store.pool())
            .await?
            .ok_or_else(|| QueueError::NotFound(format!("job {job_id}")))?;
    layouts_from_row(&row)
}

fn layouts_from_row(row: &sqlx::any::AnyRow) -> Result<JobLayouts, QueueError> {
    Ok(JobLayouts {
        from_layout_json: row.try_get("from_layout_json")?,
        to_layout_json: row.try_get("to_layout_json")?,
        forced: row.try_get::<i64, _>("forced")? != 0,
    })
}

/// The cluster's newest job (id and state) with its layouts, if it has had any.
pub async fn newest_job(
    store: &Store,
    cluster_id: &str,
) -> Result<Option<(String, JobState, JobLayouts)>, QueueError> {
    let Some(row) = sqlx::query(
        "SELECT id, state, from_layout_json, to_layout_json, forced FROM jobs \
         WHERE cluster_id = $1 ORDER BY created_at_ms DESC, id DESC LIMIT 1",
    )
    .bind(cluster_id)
    .fetch_optional(store.pool())
    .await?
    else {
        return Ok(None);
    };
    Ok(Some((
        row.try_get("id")?,
        parse_word::<JobState>(&row.try_get::<String, _>("state")?)?,
        layouts_from_row(&row)?,
    )))
}

/// The cluster's jobs that are not finished, newest first: (id, state), read inside
/// the caller's transaction.
pub(crate) async fn unfinished_jobs_in(
    tx: &mut Transaction<'static, Any>,
    cluster_id: &str,
) -> Result<Vec<(String, JobState)>, QueueError> {
    sqlx::query(
        "SELECT id, state FROM jobs WHERE cluster_id = $1 \
         AND state IN ('queued', 'running', 'cancelling') ORDER BY created_at_ms DESC",
    )
    .bind(cluster_id)
    .fetch_all(&mut **tx)
    .await?
    .iter()
    .map(|row| {
        Ok((
            row.try_get("id")?,
            parse_word::<JobState>(&row.try_get::<String, _>("state")?)?,
        ))
    })
    .collect()
}

pub async fn cluster_jobs(store: &Store, cluster_id: &str) -> Result<Vec<Job>, QueueError> {
    sqlx::query(&format!(
        "SELECT {JOB_COLUMNS} FROM jobs WHERE cluster_id = $1 ORDER BY created_at_ms DESC, id"
    ))
    .bind(cluster_id)
    .fetch_all(store.pool())
    .await?
    .iter()
    .map(job_from_row)
    .collect()
}

/// The job's tasks in plan order.
const TASK_COLUMNS: &str = "id, job_id, number, node, service, action, state, attempts, \
     max_attempts, idempotent, not_before_ms, lease_owner, lease_expires_ms, started_at_ms, \
     finished_at_ms, error";

fn task_from_row(row: &sqlx::any::AnyRow) -> Result<TaskRecord, QueueError> {
    Ok(TaskRecord {
        id: row.try_get("id")?,
        job_id: row.try_get("job_id")?,
        number: TaskId(to_u32("task number", row.try_get("number")?)?),
        node: to_u32("node number", row.try_get("node")?)?,
        service: parse_service(row.try_get("service")?)?,
        action: parse_action(&row.try_get::<String, _>("action")?)?,
        state: parse_word::<TaskState>(&row.try_get::<String, _>("state")?)?,
        attempts: row.try_get("attempts")?,
        max_attempts: row.try_get("max_attempts")?,
        idempotent: row.try_get::<i64, _>("idempotent")? != 0,
        not_before_ms: row.try_get("not_before_ms")?,
        lease_owner: row.try_get("lease_owner")?,
        lease_expires_ms: row.try_get("lease_expires_ms")?,
        started_at_ms: row.try_get("started_at_ms")?,
        finished_at_ms: row.try_get("finished_at_ms")?,
        error: row.try_get("error")?,
    })
}

/// Every task of the job, in plan order.
pub async fn job_tasks(store: &Store, job_id: &str) -> Result<Vec<TaskRecord>, QueueError> {
    sqlx::query(&format!(
        "SELECT {TASK_COLUMNS} FROM tasks WHERE job_id = $1 ORDER BY number"
    ))
    .bind(job_id)
    .fetch_all(store.pool())
    .await?
    .iter()
    .map(task_from_row)
    .collect()
}

/// One page of the job's tasks in plan order (`limit` from `offset`), with how many
/// the job has: what a page of a thousand-node job reads.
pub async fn job_tasks_page(
    store: &Store,
    job_id: &str,
    offset: u32,
    limit: u32,
) -> Result<(Vec<TaskRecord>, u64), QueueError> {
    let tasks = sqlx::query(&format!(
        "SELECT {TASK_COLUMNS} FROM tasks WHERE job_id = $1 ORDER BY number \
         LIMIT $2 OFFSET $3"
    ))
    .bind(job_id)
    .bind(i64::from(limit))
    .bind(i64::from(offset))
    .fetch_all(store.pool())
    .await?
    .iter()
    .map(task_from_row)
    .collect::<Result<Vec<_>, _>>()?;
    let total: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM tasks WHERE job_id = $1")
        .bind(job_id)
        .fetch_one(store.pool())
        .await?;
    Ok((tasks, u64::try_from(total).unwrap_or(0)))
}

/// The DAG the job was submitted with (the `failed` input of a rollback plan).
pub async fn job_plan(store: &Store, job_id: &str) -> Result<TaskDag, QueueError> {
    let plan_json: String = sqlx::query_scalar("SELECT plan_json FROM jobs WHERE id = $1")
        .bind(job_id)
        .fetch_optional(store.pool())
        .await?
        .ok_or_else(|| QueueError::NotFound(format!("job {job_id}")))?;
    serde_json::from_str(&plan_json).map_err(|err| QueueError::CorruptPlan {
        job_id: job_id.to_owned(),
        reason: err.to_string(),
    })
}

/// Ids of the job's succeeded tasks (the `completed` input of a rollback plan).
pub async fn completed_tasks(store: &Store, job_id: &str) -> Result<BTreeSet<TaskId>, QueueError> {
    let numbers: Vec<i64> = sqlx::query_scalar(
        "SELECT number FROM tasks WHERE job_id = $1 AND state = 'succeeded' ORDER BY number",
    )
    .bind(job_id)
    .fetch_all(store.pool())
    .await?;
    numbers
        .into_iter()
        .map(|number| Ok(TaskId(to_u32("task number", number)?)))
        .collect()
}

/// One recorded attempt of a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub attempt: i64,
    pub worker_id: String,
    /// The task state the attempt left (`succeeded`, `failed`, `ready` for a retry, ...).
    pub outcome: String,
    pub started_at_ms: i64,
    pub finished_at_ms: i64,
    pub exit_code: Option<i64>,
    pub stdout: String,
    pub stderr: String,
    pub error: Option<String>,
}

/// The id of the job `task_id` belongs to.
pub async fn task_job_id(store: &Store, task_id: &str) -> Result<String, QueueError> {
    sqlx::query_scalar("SELECT job_id FROM tasks WHERE id = $1")
        .bind(task_id)
        .fetch_optional(store.pool())
        .await?
        .ok_or_else(|| QueueError::NotFound(format!("task {task_id}")))
}

/// A task's attempts, first first: what failed and why.
pub async fn task_attempts(store: &Store, task_id: &str) -> Result<Vec<Attempt>, QueueError> {
    sqlx::query(
        "SELECT attempt, worker_id, outcome, started_at_ms, finished_at_ms, exit_code, stdout, \
         stderr, error FROM task_attempts WHERE task_id = $1 ORDER BY attempt",
    )
    .bind(task_id)
    .fetch_all(store.pool())
    .await?
    .iter()
    .map(|row| {
        Ok(Attempt {
            attempt: row.try_get("attempt")?,
            worker_id: row.try_get("worker_id")?,
            outcome: row.try_get("outcome")?,
            started_at_ms: row.try_get("started_at_ms")?,
            finished_at_ms: row.try_get("finished_at_ms")?,
            exit_code: row.try_get("exit_code")?,
            stdout: row.try_get("stdout")?,
            stderr: row.try_get("stderr")?,
            error: row.try_get("error")?,
        })
    })
    .collect()
}

/// What a tenant's workers are doing: jobs per state, tasks running now and the
/// workers (lease owners) running them, and the ten latest failed tasks.
pub async fn tenant_activity(
    store: &Store,
    tenant_id: &str,
) -> Result<api_types::ActivityView, QueueError> {
    let pool = store.pool();
    let jobs_by_state = sqlx::query(
        "SELECT state, COUNT(*) AS n FROM jobs WHERE tenant_id = $1 GROUP BY state ORDER BY state",
    )
    .bind(tenant_id)
    .fetch_all(pool)
    .await?
    .iter()
    .map(|row| {
        Ok((
            parse_word::<JobState>(&row.try_get::<String, _>("state")?)?,
            row.try_get("n")?,
        ))
    })
    .collect::<Result<Vec<(JobState, i64)>, QueueError>>()?;
    let running = sqlx::query(
        "SELECT COUNT(*) AS n, COUNT(DISTINCT lease_owner) AS workers FROM tasks \
         WHERE tenant_id = $1 AND state = 'running'",
    )
    .bind(tenant_id)
    .fetch_one(pool)
    .await?;
    let failed_tasks = sqlx::query(
        "SELECT job_id, cluster_id, node, service, action, error, finished_at_ms FROM tasks \
         WHERE tenant_id = $1 AND state = 'failed' \
         ORDER BY finished_at_ms DESC, id LIMIT 10",
    )
    .bind(tenant_id)
    .fetch_all(pool)
    .await?
    .iter()
    .map(|row| {
        Ok(api_types::FailedTaskView {
            job_id: row.try_get("job_id")?,
            cluster_id: row.try_get("cluster_id")?,
            node: row.try_get("node")?,
            service: row.try_get("service")?,
            action: row.try_get("action")?,
            error: row.try_get("error")?,
            finished_at_ms: row.try_get("finished_at_ms")?,
        })
    })
    .collect::<Result<Vec<_>, QueueError>>()?;
    Ok(api_types::ActivityView {
        jobs_by_state,
        running_tasks: running.try_get("n")?,
        busy_workers: running.try_get("workers")?,
        failed_tasks,
    })
}
