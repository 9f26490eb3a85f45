//! Jobs and their tasks: status, the event stream from an offset, each task's
//! attempts with their output, cancel and retry. A job is visible to whoever sees its
//! cluster's tenant.

use super::{
    AttemptView, Caller, EventView, JobView, Page, PageRequest, Service, ServiceError,
    TaskGroupView, TaskStateCount, TaskView,
};
use crate::queue::{self, Job, JobId, JobState, TaskFilter, TaskRecordId};
use crate::store::now_ms;
use api_types::{AuditAction, Operation};

/// Most events one read returns.
pub const MAX_EVENTS: i64 = 1_000;

/// Whether a rollback of `job` may be offered, given it is its cluster's newest job:
/// it failed or was cancelled, and it did not delete the cluster (what
/// [`crate::operations::submit_change`] accepts).
fn may_roll_back(job: &JobView) -> bool {
    matches!(job.state, JobState::Failed | JobState::Cancelled)
        && job.operation != Operation::Delete
}

/// A cluster's jobs as views, newest first, the newest marked when it may be rolled back.
pub(super) fn cluster_job_views(jobs: Vec<Job>) -> Vec<JobView> {
    let mut views: Vec<JobView> = jobs.into_iter().map(JobView::from).collect();
    if let Some(newest) = views.first_mut() {
        newest.can_roll_back = may_roll_back(newest);
    }
    views
}

/// Steps in plan order (by their first task), each with its per-state counts in the
/// order of [`TaskState::ALL`].
fn task_groups(counts: Vec<queue::StepStateCount>) -> Vec<TaskGroupView> {
    let mut groups: Vec<TaskGroupView> = Vec::new();
    for count in counts {
        let first = u32::try_from(count.first_number).unwrap_or(u32::MAX);
        let tasks = u64::try_from(count.tasks).unwrap_or(0);
        let at = groups
            .iter()
            .position(|group| group.action == count.action && group.service == count.service);
        let group = match at {
            Some(at) => &mut groups[at],
            None => {
                groups.push(TaskGroupView {
                    action: count.action,
                    service: count.service,
                    first_number: first,
                    counts: Vec::new(),
                });
                let last = groups.len() - 1;
                &mut groups[last]
            }
        };
        group.first_number = group.first_number.min(first);
        group.counts.push(TaskStateCount {
            state: count.state,
            tasks,
        });
    }
    for group in &mut groups {
        group.counts.sort_by_key(|count| count.state);
    }
    groups.sort_by_key(|group| group.first_number);
    groups
}

impl Service {
    async fn visible_job(&self, caller: &Caller, id: &JobId) -> Result<Job, ServiceError> {
        let what = || format!("job {id:?}");
        let job = self.queue.job(id).await.map_err(|error| match error {
            queue::QueueError::NotFound(_) => ServiceError::NotFound(what()),
            other => other.into(),
        })?;
        caller.require_visible(&job.tenant_id, what)?;
        Ok(job)
    }

    pub async fn job(&self, caller: &Caller, id: &JobId) -> Result<JobView, ServiceError> {
        let job = self.visible_job(caller, id).await?;
        // The newest job as the engine's rollback rule reads it (one row, not the list).
        let newest = self.queue.newest_job_id(&job.cluster_id).await?;
        let mut view = JobView::from(job);
        view.can_roll_back =
            newest.is_some_and(|newest_id| newest_id == view.id && may_roll_back(&view));
        Ok(view)
    }

    /// The job's tasks in plan order.
    pub async fn job_tasks(
        &self,
        caller: &Caller,
        id: &JobId,
        page: PageRequest,
    ) -> Result<Page<TaskView>, ServiceError> {
        self.job_tasks_filtered(caller, id, &TaskFilter::default(), page)
            .await
    }

    /// One page of the job's tasks that `filter` keeps, in plan order.
    pub async fn job_tasks_filtered(
        &self,
        caller: &Caller,
        id: &JobId,
        filter: &TaskFilter,
        page: PageRequest,
    ) -> Result<Page<TaskView>, ServiceError> {
        let job = self.visible_job(caller, id).await?;
        page.check()?;
        let (tasks, total) = self
            .queue
            .job_tasks_filtered(&job.id, filter, page.offset, page.limit)
            .await?;
        Ok(page.of(tasks.into_iter().map(TaskView::from).collect(), total))
    }

    /// The job's tasks by step (action and service), each counted by state, in plan
    /// order.
    pub async fn job_task_groups(
        &self,
        caller: &Caller,
        id: &JobId,
    ) -> Result<Vec<TaskGroupView>, ServiceError> {
        let job = self.visible_job(caller, id).await?;
        let counts = self.queue.job_step_counts(&job.id).await?;
        Ok(task_groups(counts))
    }

    /// The job's last `limit` output events before event `before` (the newest when
    /// `None`), oldest first, and whether older output exists.
    pub async fn job_output(
        &self,
        caller: &Caller,
        id: &JobId,
        before: Option<i64>,
        limit: i64,
    ) -> Result<(Vec<EventView>, bool), ServiceError> {
        let job = self.visible_job(caller, id).await?;
        let limit = limit.clamp(1, MAX_EVENTS);
        let mut events = self.queue.last_output(&job.id, before, limit + 1).await?;
        let older = events.len() as i64 > limit;
        if older {
            events.remove(0);
        }
        Ok((events.into_iter().map(EventView::from).collect(), older))
    }

    /// The last `limit` output events of the job's task `task_id`, oldest first.
    pub async fn task_output(
        &self,
        caller: &Caller,
        job_id: &JobId,
        task_id: &TaskRecordId,
        limit: i64,
    ) -> Result<Vec<EventView>, ServiceError> {
        let job = self.visible_job(caller, job_id).await?;
        let limit = limit.clamp(1, MAX_EVENTS);
        Ok(self
            .queue
            .task_last_output(&job.id, task_id, limit)
            .await?
            .into_iter()
            .map(EventView::from)
            .collect())
    }

    /// The id of the job's newest event (0 before its first).
    pub async fn job_last_event_id(
        &self,
        caller: &Caller,
        id: &JobId,
    ) -> Result<i64, ServiceError> {
        let job = self.visible_job(caller, id).await?;
        Ok(self.queue.last_event_id(&job.id).await?)
    }

    /// The task DAG the job runs: each task with the tasks it waits for (task
    /// numbers match [`TaskView::number`]).
    pub async fn job_plan(
        &self,
        caller: &Caller,
        id: &JobId,
    ) -> Result<domain::plan::TaskDag, ServiceError> {
        let job = self.visible_job(caller, id).await?;
        Ok(self.queue.job_plan(&job.id).await?)
    }

    /// The attempts of one of the job's tasks.
    pub async fn task_attempts(
        &self,
        caller: &Caller,
        job_id: &JobId,
        task_id: &TaskRecordId,
    ) -> Result<Vec<AttemptView>, ServiceError> {
        let job = self.visible_job(caller, job_id).await?;
        let belongs = match self.queue.task_job_id(task_id).await {
            Ok(owner) => owner == job.id,
            Err(queue::QueueError::NotFound(_)) => false,
            Err(error) => return Err(error.into()),
        };
        if !belongs {
            return Err(ServiceError::NotFound(format!("task {task_id:?}")));
        }
        Ok(self
            .queue
            .task_attempts(task_id)
            .await?
            .into_iter()
            .map(AttemptView::from)
            .collect())
    }

    /// Events after id `after` (0 = from the start), at most `limit`.
    pub async fn job_events(
        &self,
        caller: &Caller,
        id: &JobId,
        after: i64,
        limit: i64,
    ) -> Result<Vec<EventView>, ServiceError> {
        if !(1..=MAX_EVENTS).contains(&limit) {
            return Err(ServiceError::invalid(format!(
                "limit must be between 1 and {MAX_EVENTS}"
            )));
        }
        let job = self.visible_job(caller, id).await?;
        Ok(self
            .queue
            .events_after(&job.id, after.max(0), limit)
            .await?
            .into_iter()
            .map(EventView::from)
            .collect())
    }

    /// The job's last `limit` events (oldest first), and whether older ones exist.
    pub async fn job_last_events(
        &self,
        caller: &Caller,
        id: &JobId,
        limit: i64,
    ) -> Result<(Vec<EventView>, bool), ServiceError> {
        let job = self.visible_job(caller, id).await?;
        let limit = limit.max(1);
        let mut events = self.queue.last_events(&job.id, limit + 1).await?;
        let truncated = events.len() as i64 > limit;
        if truncated {
            events.remove(0);
        }
        Ok((events.into_iter().map(EventView::from).collect(), truncated))
    }

    /// Stops the job: running steps are killed, nothing new starts. Idempotent.
    pub async fn cancel_job(&self, caller: &Caller, id: &JobId) -> Result<JobView, ServiceError> {
        let job = self.visible_job(caller, id).await?;
        self.queue.cancel_job(&job.id, now_ms()).await?;
        self.audit_job(caller, &job, AuditAction::JobCancel).await;
        Ok(self.queue.job(&job.id).await?.into())
    }

    /// Runs a failed or cancelled job again from where it stopped. Idempotent.
    pub async fn retry_job(&self, caller: &Caller, id: &JobId) -> Result<JobView, ServiceError> {
        let job = self.visible_job(caller, id).await?;
        self.check_retry_credentials(caller, &job).await?;
        self.queue.retry_job(&job.id, now_ms()).await?;
        self.wake_workers();
        self.audit_job(caller, &job, AuditAction::JobRetry).await;
        Ok(self.queue.job(&job.id).await?.into())
    }

    async fn audit_job(&self, caller: &Caller, job: &Job, action: AuditAction) {
        self.audit(
            caller,
            super::AuditRecord::new(&job.tenant_id, action, "job", job.id.as_str()),
        )
        .await;
    }
}
