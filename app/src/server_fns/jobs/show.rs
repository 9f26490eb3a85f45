//! Everything the job page shows when first rendered; the page then follows the
//! job's event stream from the last event included here.

use leptos::prelude::*;

use super::JobPage;
use crate::error::UiError;

/// Most output lines the first render includes; older ones are behind a link.
pub const INITIAL_EVENTS: i64 = 5_000;

#[server(prefix = "/sfn", endpoint = "job-page")]
pub async fn load_job_page(cluster_id: String, job_id: String) -> Result<JobPage, UiError> {
    use engine::service::{PageRequest, MAX_PAGE};

    let caller = crate::session::caller().await?;
    let service = crate::session::service()?;
    let job = service.job(&caller, &job_id).await?;
    if job.cluster_id != cluster_id {
        return Err(UiError::NotFound(format!("job {job_id:?}")));
    }
    // A delete's job outlives its cluster: its page still shows, without the
    // cluster's details.
    let cluster = match service.cluster(&caller, &cluster_id).await {
        Ok(cluster) => Some(cluster),
        Err(engine::service::ServiceError::NotFound(_)) if job.operation == "delete" => None,
        Err(error) => return Err(error.into()),
    };
    let mut tasks = Vec::new();
    let mut offset = 0;
    loop {
        let page = service
            .job_tasks(
                &caller,
                &job_id,
                PageRequest {
                    offset,
                    limit: MAX_PAGE,
                },
            )
            .await?;
        let fetched = page.items.len() as u32;
        tasks.extend(page.items);
        offset += fetched;
        if fetched == 0 || u64::from(offset) >= page.total {
            break;
        }
    }
    // Only the newest events are read: a long job's page costs no more than a short one's.
    let (events, events_truncated) = service
        .job_last_events(&caller, &job_id, INITIAL_EVENTS)
        .await?;
    let hostnames = cluster
        .iter()
        .flat_map(|cluster| &cluster.nodes)
        .filter_map(|node| {
            let number = u32::try_from(node.number).ok()?;
            Some((number, node.hostname.clone()?))
        })
        .collect();
    Ok(JobPage {
        cluster_id,
        cluster_name: cluster.as_ref().map_or_else(
            || "(deleted cluster)".to_owned(),
            |cluster| cluster.cluster.name.clone(),
        ),
        job,
        tasks,
        dag: service.job_plan(&caller, &job_id).await?,
        events,
        events_truncated,
        hostnames,
        links: cluster
            .iter()
            .flat_map(|cluster| cluster.links.iter().cloned())
            .collect(),
    })
}
