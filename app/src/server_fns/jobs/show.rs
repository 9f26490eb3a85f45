//! Everything the job page shows when first rendered, read in parts sized for a
//! thousand-node job: one page of its tasks (filtered in the database), its tasks
//! counted by step and state, the last lines of its output; the whole DAG only for a
//! job small enough to draw. The page then follows the job's event stream from the
//! newest event when read, and reads the counts again while tasks change.

use api_types::TaskGroupView;
use leptos::prelude::*;

use super::{JobPage, JobPageQuery};
use crate::error::UiError;

/// Output lines of a failed task the failure panel shows.
#[cfg(feature = "ssr")]
const FAILED_TASK_LINES: i64 = 40;

#[server(prefix = "/sfn", endpoint = "job-page")]
pub async fn load_job_page(
    cluster_id: String,
    job_id: String,
    // A query with no value set is sent as no field at all: it means the defaults.
    #[server(default)] query: JobPageQuery,
) -> Result<JobPage, UiError> {
    use std::collections::BTreeSet;

    use api_types::{JobId, JobState, Page, TaskRecordId, TaskState};
    use engine::queue::TaskFilter;
    use engine::service::PageRequest;

    use super::{
        FailedTask, JobPicture, TaskListing, LOG_LINES, PICTURE_MAX_TASKS, TASKS_PER_PAGE,
    };

    let job_id = JobId::from(job_id);
    let listing = TaskListing::from_query(&query)?;
    let caller = crate::session::caller().await?;
    let service = crate::session::service()?;
    let job = service.job(&caller, &job_id).await?;
    if job.cluster_id != cluster_id {
        return Err(UiError::NotFound(format!("job {job_id:?}")));
    }
    // First: every change after it reaches the page over the stream, so what is read
    // below is at least this new and nothing in between is missed.
    let last_event_id = service.job_last_event_id(&caller, &job_id).await?;
    // A delete's job outlives its cluster: its page still shows, without the
    // cluster's details.
    let cluster = match service.cluster_outline(&caller, &cluster_id).await {
        Ok(cluster) => Some(cluster),
        Err(engine::service::ServiceError::NotFound(_))
            if job.operation == api_types::Operation::Delete =>
        {
            None
        }
        Err(error) => return Err(error.into()),
    };
    let filter = TaskFilter {
        state: listing.state,
        node: listing.node,
        action: listing.action,
        service: listing.service.clone(),
    };
    let groups = service.job_task_groups(&caller, &job_id).await?;
    let total: u64 = groups.iter().map(TaskGroupView::total).sum();
    let picture = if total <= PICTURE_MAX_TASKS {
        let every = service
            .job_tasks_filtered(
                &caller,
                &job_id,
                &TaskFilter::default(),
                PageRequest {
                    offset: 0,
                    limit: u32::try_from(PICTURE_MAX_TASKS).unwrap_or(u32::MAX),
                },
            )
            .await?;
        Some(JobPicture {
            dag: service.job_plan(&caller, &job_id).await?,
            tasks: every.items,
        })
    } else {
        None
    };
    // An unfiltered table lists a page of the tasks the picture already holds (every
    // task, in plan order): read them once.
    let tasks = match &picture {
        Some(picture) if filter == TaskFilter::default() => {
            let page = picture
                .tasks
                .iter()
                .skip(usize::try_from(listing.offset()).unwrap_or(usize::MAX))
                .take(usize::try_from(TASKS_PER_PAGE).unwrap_or(usize::MAX))
                .cloned()
                .collect();
            Page {
                items: page,
                total: u64::try_from(picture.tasks.len()).unwrap_or(u64::MAX),
                offset: listing.offset(),
                limit: TASKS_PER_PAGE,
            }
        }
        _ => {
            service
                .job_tasks_filtered(
                    &caller,
                    &job_id,
                    &filter,
                    PageRequest {
                        offset: listing.offset(),
                        limit: TASKS_PER_PAGE,
                    },
                )
                .await?
        }
    };
    let (output, output_older) = service
        .job_output(&caller, &job_id, listing.before, LOG_LINES as i64)
        .await?;
    let failure = if matches!(job.state, JobState::Failed | JobState::Cancelled) {
        let failed = TaskFilter {
            state: Some(TaskState::Failed),
            ..TaskFilter::default()
        };
        let first = service
            .job_tasks_filtered(
                &caller,
                &job_id,
                &failed,
                PageRequest {
                    offset: 0,
                    limit: 1,
                },
            )
            .await?;
        match first.items.into_iter().next() {
            Some(task) => {
                let output = service
                    .task_output(
                        &caller,
                        &job_id,
                        &TaskRecordId::from(task.id.as_str()),
                        FAILED_TASK_LINES,
                    )
                    .await?
                    .into_iter()
                    .map(|event| event.data.trim_end().to_owned())
                    .collect();
                Some(FailedTask { task, output })
            }
            None => None,
        }
    } else {
        None
    };
    // Only the nodes the page names: a thousand-node cluster's list stays on the server.
    let named: BTreeSet<u32> = tasks
        .items
        .iter()
        .chain(picture.iter().flat_map(|picture| &picture.tasks))
        .chain(failure.iter().map(|failure| &failure.task))
        .map(|task| task.node)
        .collect();
    let hostnames = cluster
        .iter()
        .flat_map(|cluster| &cluster.nodes)
        .filter_map(|node| {
            let number = u32::try_from(node.number).ok()?;
            named.contains(&number).then_some(())?;
            Some((number, node.hostname.clone()?))
        })
        .collect();
    Ok(JobPage {
        cluster_id,
        cluster_name: cluster.as_ref().map_or_else(
            || "(deleted cluster)".to_owned(),
            |cluster| cluster.name.clone(),
        ),
        job,
        listing,
        tasks_matching: tasks.total,
        tasks: tasks.items,
        groups,
        picture,
        output,
        output_older,
        last_event_id,
        failure,
        hostnames,
        links: cluster
            .iter()
            .flat_map(|cluster| cluster.links.iter().cloned())
            .collect(),
    })
}

/// The job's tasks counted by step and state, read again while the job runs.
#[server(prefix = "/sfn", endpoint = "job-task-groups")]
pub async fn load_task_groups(job_id: String) -> Result<Vec<TaskGroupView>, UiError> {
    let caller = crate::session::caller().await?;
    let service = crate::session::service()?;
    Ok(service
        .job_task_groups(&caller, &api_types::JobId::from(job_id))
        .await?)
}
