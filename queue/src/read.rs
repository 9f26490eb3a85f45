//! Reading jobs and tasks back: for the UI, and for planning a rollback (the failed
//! job's DAG and the tasks it completed).

use std::collections::BTreeSet;

use api_types::{JobId, Operation, TaskAction, TaskRecordId};
use domain::plan::{TaskDag, TaskId};
use sqlx::any::AnyRow;
use sqlx::{Any, FromRow, Row, Transaction};

use super::types::PlanStep;
use super::{JobState, Queue, QueueError, TaskState};
use domain::names::ServiceName;
use domain::plan::Action;
use store::{column_value, IntFlag};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Job {
    pub id: JobId,
    pub tenant_id: String,
    pub cluster_id: String,
    pub operation: Operation,
    pub state: JobState,
    pub tasks_total: i64,
    pub tasks_succeeded: i64,
    pub created_at_ms: i64,
    pub started_at_ms: Option<i64>,
    pub finished_at_ms: Option<i64>,
    pub error: Option<String>,
    /// A forced delete (see [`crate::ClusterEffects::forced`]).
    #[sqlx(try_from = "IntFlag")]
    pub forced: bool,
}

/// A task row as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRecord {
    pub id: TaskRecordId,
    pub job_id: JobId,
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

impl Queue {
    pub async fn job(&self, job_id: &JobId) -> Result<Job, QueueError> {
        sqlx::query_as(&format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = $1"))
            .bind(job_id.as_str())
            .fetch_optional(self.store.pool())
            .await?
            .ok_or_else(|| QueueError::NotFound(format!("job {job_id}")))
    }
}

/// What a job was submitted to do to its cluster: the layouts before and after (as
/// stored, JSON) and whether its failed teardown steps are passed over (a forced
/// delete, a node replacement). Fixed at submit.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct JobLayouts {
    pub from_layout_json: Option<String>,
    pub to_layout_json: Option<String>,
    #[sqlx(try_from = "IntFlag")]
    pub forced: bool,
}

impl JobLayouts {
    /// Whether the job is a forced delete: forced, and its target has no node (a node
    /// replacement is forced too, and keeps its nodes).
    pub fn is_forced_delete(&self) -> bool {
        self.forced
            && self
                .to_layout_json
                .as_deref()
                .and_then(|json| serde_json::from_str::<domain::layout::Layout>(json).ok())
                .is_none_or(|layout| layout.nodes.is_empty())
    }
}

impl Queue {
    pub async fn job_layouts(&self, job_id: &JobId) -> Result<JobLayouts, QueueError> {
        sqlx::query_as(
            "SELECT d.from_layout_json, d.to_layout_json, j.forced \
             FROM jobs j LEFT JOIN job_documents d ON d.job_id = j.id WHERE j.id = $1",
        )
        .bind(job_id.as_str())
        .fetch_optional(self.store.pool())
        .await?
        .ok_or_else(|| QueueError::NotFound(format!("job {job_id}")))
    }
}

/// The catalog definitions a job runs instead of its cluster's snapshot (see
/// [`super::ClusterEffects::catalog_json`]): Coopr bundles, `None` where the job runs
/// the cluster's own. Fixed at submit.
#[derive(Debug, Clone, Default, PartialEq, Eq, sqlx::FromRow)]
pub struct JobCatalogs {
    pub catalog_json: Option<String>,
    pub stop_catalog_json: Option<String>,
}

impl JobCatalogs {
    /// Whether the job moves services to other definitions than they run now.
    pub fn changes_definitions(&self) -> bool {
        self.catalog_json.is_some() || self.stop_catalog_json.is_some()
    }
}

impl Queue {
    pub async fn job_catalogs(&self, job_id: &JobId) -> Result<JobCatalogs, QueueError> {
        Ok(sqlx::query_as(
            "SELECT catalog_json, stop_catalog_json FROM job_documents WHERE job_id = $1",
        )
        .bind(job_id.as_str())
        .fetch_optional(self.store.pool())
        .await?
        .unwrap_or_default())
    }

    /// Who asked for `job_id` (`None`: Corral itself, e.g. an expired lease's delete). Its
    /// new machines are made with this user's own credentials where the provider takes
    /// them, never with another user's.
    pub async fn job_requested_by(&self, job_id: &JobId) -> Result<Option<String>, QueueError> {
        sqlx::query_scalar::<_, Option<String>>("SELECT requested_by FROM jobs WHERE id = $1")
            .bind(job_id.as_str())
            .fetch_optional(self.store.pool())
            .await?
            .ok_or_else(|| QueueError::NotFound(format!("job {job_id}")))
    }
}

/// Which of a cluster's jobs (`jobs j`) is its newest: what [`Queue::newest_job`] and
/// [`Queue::newest_job_id`] both mean by it (the rollback rule reads one, the job page the other).
const NEWEST_OF_JOBS_J: &str = "ORDER BY j.created_at_ms DESC, j.id DESC LIMIT 1";

/// The newest job's id and state, with its layouts.
#[derive(sqlx::FromRow)]
struct NewestJob {
    id: JobId,
    state: JobState,
    #[sqlx(flatten)]
    layouts: JobLayouts,
}

impl Queue {
    /// The cluster's newest job (id and state) with its layouts, if it has had any.
    pub async fn newest_job(
        &self,
        cluster_id: &str,
    ) -> Result<Option<(JobId, JobState, JobLayouts)>, QueueError> {
        let newest: Option<NewestJob> = sqlx::query_as(&format!(
            "SELECT j.id, j.state, d.from_layout_json, d.to_layout_json, j.forced \
             FROM jobs j LEFT JOIN job_documents d ON d.job_id = j.id \
             WHERE j.cluster_id = $1 {NEWEST_OF_JOBS_J}"
        ))
        .bind(cluster_id)
        .fetch_optional(self.store.pool())
        .await?;
        Ok(newest.map(|job| (job.id, job.state, job.layouts)))
    }

    /// The id of the cluster's newest job, if it has had any (what [`Queue::newest_job`] reads
    /// first, without the layouts).
    pub async fn newest_job_id(&self, cluster_id: &str) -> Result<Option<JobId>, QueueError> {
        Ok(sqlx::query_scalar(&format!(
            "SELECT j.id FROM jobs j WHERE j.cluster_id = $1 {NEWEST_OF_JOBS_J}"
        ))
        .bind(cluster_id)
        .fetch_optional(self.store.pool())
        .await?)
    }

    /// The cluster's jobs that are not finished, newest first: (id, state), read inside
    /// the caller's transaction.
    pub async fn unfinished_jobs_in(
        &self,
        tx: &mut Transaction<'static, Any>,
        cluster_id: &str,
    ) -> Result<Vec<(JobId, JobState)>, QueueError> {
        Ok(sqlx::query_as(
            "SELECT id, state FROM jobs WHERE cluster_id = $1 \
             AND state IN ('queued', 'running', 'cancelling') ORDER BY created_at_ms DESC",
        )
        .bind(cluster_id)
        .fetch_all(&mut **tx)
        .await?)
    }
}

impl Queue {
    pub async fn cluster_jobs(&self, cluster_id: &str) -> Result<Vec<Job>, QueueError> {
        Ok(sqlx::query_as(&format!(
            "SELECT {JOB_COLUMNS} FROM jobs WHERE cluster_id = $1 ORDER BY created_at_ms DESC, id"
        ))
        .bind(cluster_id)
        .fetch_all(self.store.pool())
        .await?)
    }
}

const TASK_COLUMNS: &str = "id, job_id, number, node, service, action, state, attempts, \
     max_attempts, idempotent, not_before_ms, lease_owner, lease_expires_ms, started_at_ms, \
     finished_at_ms, error";

// Written out rather than derived: the task's place in the plan (number, node,
// service, action) is read as the planner's own types, which the derive cannot reach.
impl<'r> FromRow<'r, AnyRow> for TaskRecord {
    fn from_row(row: &'r AnyRow) -> Result<Self, sqlx::Error> {
        let step = PlanStep::from_row(row)?;
        Ok(TaskRecord {
            id: row.try_get("id")?,
            job_id: row.try_get("job_id")?,
            number: step.number,
            node: step.node,
            service: step.service,
            action: step.action,
            state: row.try_get("state")?,
            attempts: row.try_get("attempts")?,
            max_attempts: row.try_get("max_attempts")?,
            idempotent: row.try_get::<IntFlag, _>("idempotent")?.into(),
            not_before_ms: row.try_get("not_before_ms")?,
            lease_owner: row.try_get("lease_owner")?,
            lease_expires_ms: row.try_get("lease_expires_ms")?,
            started_at_ms: row.try_get("started_at_ms")?,
            finished_at_ms: row.try_get("finished_at_ms")?,
            error: row.try_get("error")?,
        })
    }
}

impl Queue {
    /// Every task of the job, in plan order.
    pub async fn job_tasks(&self, job_id: &JobId) -> Result<Vec<TaskRecord>, QueueError> {
        Ok(sqlx::query_as(&format!(
            "SELECT {TASK_COLUMNS} FROM tasks WHERE job_id = $1 ORDER BY number"
        ))
        .bind(job_id.as_str())
        .fetch_all(self.store.pool())
        .await?)
    }
}

/// Which of a job's tasks a listing keeps: each condition that is set must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskFilter {
    pub state: Option<TaskState>,
    /// The node number.
    pub node: Option<u32>,
    pub action: Option<TaskAction>,
    /// A service name: tasks without a service never match one.
    pub service: Option<String>,
}

/// A value bound to a [`TaskFilter`]'s condition.
enum Bound<'a> {
    Text(&'a str),
    Number(i64),
}

impl TaskFilter {
    /// The conditions after `job_id = $1` (` AND state = $2 ...`) and their values in
    /// bind order.
    fn conditions(&self) -> (String, Vec<Bound<'_>>) {
        let mut set: Vec<(&str, Bound<'_>)> = Vec::new();
        if let Some(state) = self.state {
            set.push(("state", Bound::Text(state.as_str())));
        }
        if let Some(node) = self.node {
            set.push(("node", Bound::Number(i64::from(node))));
        }
        if let Some(action) = self.action {
            set.push(("action", Bound::Text(action.as_str())));
        }
        if let Some(service) = &self.service {
            set.push(("service", Bound::Text(service)));
        }
        let sql = set
            .iter()
            .enumerate()
            .map(|(index, (column, _))| format!(" AND {column} = ${}", index + 2))
            .collect();
        (sql, set.into_iter().map(|(_, value)| value).collect())
    }
}

impl Queue {
    /// One page of the job's tasks that `filter` keeps, in plan order, with how many it
    /// keeps: what the job page's task table reads of a 15,000-task job.
    pub async fn job_tasks_filtered(
        &self,
        job_id: &JobId,
        filter: &TaskFilter,
        offset: u32,
        limit: u32,
    ) -> Result<(Vec<TaskRecord>, u64), QueueError> {
        let (conditions, values) = filter.conditions();
        let next = values.len() + 2;
        let listing = format!(
            "SELECT {TASK_COLUMNS} FROM tasks WHERE job_id = $1{conditions} ORDER BY number \
             LIMIT ${next} OFFSET ${}",
            next + 1
        );
        let mut query = sqlx::query_as(&listing).bind(job_id.as_str());
        for value in &values {
            query = match value {
                Bound::Text(text) => query.bind(*text),
                Bound::Number(number) => query.bind(*number),
            };
        }
        let tasks = query
            .bind(i64::from(limit))
            .bind(i64::from(offset))
            .fetch_all(self.store.pool())
            .await?;
        let counting = format!("SELECT COUNT(*) FROM tasks WHERE job_id = $1{conditions}");
        let mut count = sqlx::query_scalar(&counting).bind(job_id.as_str());
        for value in &values {
            count = match value {
                Bound::Text(text) => count.bind(*text),
                Bound::Number(number) => count.bind(*number),
            };
        }
        let total: i64 = count.fetch_one(self.store.pool()).await?;
        Ok((tasks, u64::try_from(total).unwrap_or(0)))
    }
}

/// How many of a job's tasks of one step are in one state.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct StepStateCount {
    pub action: TaskAction,
    pub service: Option<String>,
    pub state: TaskState,
    pub tasks: i64,
    /// The lowest task number among them.
    pub first_number: i64,
}

impl Queue {
    /// The job's tasks counted by step (action, service) and state, in one pass over its
    /// tasks: a thousand-node job's summary without reading its tasks.
    pub async fn job_step_counts(&self, job_id: &JobId) -> Result<Vec<StepStateCount>, QueueError> {
        Ok(sqlx::query_as(
            "SELECT action, service, state, COUNT(*) AS tasks, MIN(number) AS first_number \
             FROM tasks WHERE job_id = $1 GROUP BY action, service, state",
        )
        .bind(job_id.as_str())
        .fetch_all(self.store.pool())
        .await?)
    }

    /// The DAG the job was submitted with (the `failed` input of a rollback plan).
    pub async fn job_plan(&self, job_id: &JobId) -> Result<TaskDag, QueueError> {
        let plan_json: String =
            sqlx::query_scalar("SELECT plan_json FROM job_documents WHERE job_id = $1")
                .bind(job_id.as_str())
                .fetch_optional(self.store.pool())
                .await?
                .ok_or_else(|| QueueError::NotFound(format!("job {job_id}")))?;
        serde_json::from_str(&plan_json).map_err(|err| QueueError::CorruptPlan {
            job_id: job_id.clone(),
            reason: err.to_string(),
        })
    }

    /// Ids of the job's succeeded tasks (the `completed` input of a rollback plan).
    pub async fn completed_tasks(&self, job_id: &JobId) -> Result<BTreeSet<TaskId>, QueueError> {
        let numbers: Vec<i64> = sqlx::query_scalar(
            "SELECT number FROM tasks WHERE job_id = $1 AND state = 'succeeded' ORDER BY number",
        )
        .bind(job_id.as_str())
        .fetch_all(self.store.pool())
        .await?;
        numbers
            .into_iter()
            .map(|number| Ok(TaskId(column_value("number", u32::try_from(number))?)))
            .collect::<Result<_, sqlx::Error>>()
            .map_err(QueueError::from)
    }
}

/// One recorded attempt of a task.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
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

impl Queue {
    /// The id of the job `task_id` belongs to.
    pub async fn task_job_id(&self, task_id: &TaskRecordId) -> Result<JobId, QueueError> {
        sqlx::query_scalar("SELECT job_id FROM tasks WHERE id = $1")
            .bind(task_id.as_str())
            .fetch_optional(self.store.pool())
            .await?
            .ok_or_else(|| QueueError::NotFound(format!("task {task_id}")))
    }

    /// A task's attempts, first first: what failed and why.
    pub async fn task_attempts(&self, task_id: &TaskRecordId) -> Result<Vec<Attempt>, QueueError> {
        Ok(sqlx::query_as(
        "SELECT attempt, worker_id, outcome, started_at_ms, finished_at_ms, exit_code, stdout, \
         stderr, error FROM task_attempts WHERE task_id = $1 ORDER BY attempt",
    )
    .bind(task_id.as_str())
    .fetch_all(self.store.pool())
    .await?)
    }
}

type FailedTaskRow = (
    String,
    String,
    i64,
    Option<String>,
    TaskAction,
    Option<String>,
    Option<i64>,
);

impl Queue {
    /// What a tenant's workers are doing: jobs per state, tasks running now and the
    /// workers (lease owners) running them, and the ten latest failed tasks.
    pub async fn tenant_activity(
        &self,
        tenant_id: &str,
    ) -> Result<api_types::ActivityView, QueueError> {
        let pool = self.store.pool();
        let jobs_by_state: Vec<(JobState, i64)> = sqlx::query_as(
        "SELECT state, COUNT(*) AS n FROM jobs WHERE tenant_id = $1 GROUP BY state ORDER BY state",
    )
    .bind(tenant_id)
    .fetch_all(pool)
    .await?;
        let (running_tasks, busy_workers): (i64, i64) = sqlx::query_as(
            "SELECT COUNT(*) AS n, COUNT(DISTINCT lease_owner) AS workers FROM tasks \
             WHERE tenant_id = $1 AND state = 'running'",
        )
        .bind(tenant_id)
        .fetch_one(pool)
        .await?;
        // Read as a tuple in the view's field order (one row type less to keep in step).
        let failed_tasks: Vec<FailedTaskRow> = sqlx::query_as(
            "SELECT job_id, cluster_id, node, service, action, error, finished_at_ms FROM tasks \
             WHERE tenant_id = $1 AND state = 'failed' \
             ORDER BY finished_at_ms DESC, id LIMIT 10",
        )
        .bind(tenant_id)
        .fetch_all(pool)
        .await?;
        Ok(api_types::ActivityView {
            jobs_by_state,
            running_tasks,
            busy_workers,
            failed_tasks: failed_tasks
                .into_iter()
                .map(
                    |(job_id, cluster_id, node, service, action, error, finished_at_ms)| {
                        api_types::FailedTaskView {
                            job_id,
                            cluster_id,
                            node,
                            service,
                            action,
                            error,
                            finished_at_ms,
                        }
                    },
                )
                .collect(),
        })
    }
}
