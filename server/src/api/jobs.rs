//! `/api/v1/jobs`: status, tasks, attempts with output, events from an offset,
//! cancel and retry, and the live event stream.

mod feed;
mod stream;
mod stream_limit;

pub use feed::JobFeeds;
pub use stream_limit::DEFAULT_STREAMS_PER_USER;

pub use stream::{__path_stream, stream};

use api_types::{JobId, TaskRecordId};
use axum::extract::State;
use axum::Json;
use engine::service::{AttemptView, EventView, JobView, Page, PageRequest, TaskView};
use serde::Deserialize;
use utoipa::IntoParams;

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiPath, ApiQuery, Authenticated};
use crate::http::AppState;

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Id of the last event already seen (0 = from the start).
    #[serde(default)]
    pub after: i64,
    /// At most this many events (1-1000, default 500).
    #[serde(default = "default_event_limit")]
    pub limit: i64,
}

fn default_event_limit() -> i64 {
    500
}

#[utoipa::path(get, path = "/jobs/{id}", operation_id = "show_job", tag = "jobs",
    params(("id" = String, Path, description = "Job id")),
    responses((status = 200, body = JobView), (status = 404, body = ErrorBody)))]
pub async fn show(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<JobId>,
) -> Result<Json<JobView>, ApiError> {
    Ok(Json(state.service.job(&caller, &id).await?))
}

/// The job's tasks in plan order.
#[utoipa::path(get, path = "/jobs/{id}/tasks", tag = "jobs",
    params(("id" = String, Path, description = "Job id"), PageRequest),
    responses((status = 200, body = Page<TaskView>), (status = 404, body = ErrorBody)))]
pub async fn tasks(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<JobId>,
    ApiQuery(page): ApiQuery<PageRequest>,
) -> Result<Json<Page<TaskView>>, ApiError> {
    Ok(Json(state.service.job_tasks(&caller, &id, page).await?))
}

/// A task's attempts with their output: what failed and why.
#[utoipa::path(get, path = "/jobs/{id}/tasks/{task_id}/attempts", tag = "jobs",
    params(("id" = String, Path, description = "Job id"),
           ("task_id" = String, Path, description = "Task id")),
    responses((status = 200, body = Vec<AttemptView>), (status = 404, body = ErrorBody)))]
pub async fn attempts(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath((id, task_id)): ApiPath<(JobId, TaskRecordId)>,
) -> Result<Json<Vec<AttemptView>>, ApiError> {
    Ok(Json(
        state.service.task_attempts(&caller, &id, &task_id).await?,
    ))
}

/// Events (output chunks, state changes) after an id, oldest first.
#[utoipa::path(get, path = "/jobs/{id}/events", tag = "jobs",
    params(("id" = String, Path, description = "Job id"), EventsQuery),
    responses((status = 200, body = Vec<EventView>), (status = 404, body = ErrorBody),
              (status = 422, body = ErrorBody)))]
pub async fn events(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<JobId>,
    ApiQuery(query): ApiQuery<EventsQuery>,
) -> Result<Json<Vec<EventView>>, ApiError> {
    Ok(Json(
        state
            .service
            .job_events(&caller, &id, query.after, query.limit)
            .await?,
    ))
}

/// Stop the job; running steps are killed. Safe to call twice.
#[utoipa::path(post, path = "/jobs/{id}/cancel", tag = "jobs",
    params(("id" = String, Path, description = "Job id")),
    responses((status = 200, body = JobView), (status = 404, body = ErrorBody)))]
pub async fn cancel(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<JobId>,
) -> Result<Json<JobView>, ApiError> {
    Ok(Json(state.service.cancel_job(&caller, &id).await?))
}

/// Run a failed or cancelled job again from where it stopped. Safe to call twice.
#[utoipa::path(post, path = "/jobs/{id}/retry", tag = "jobs",
    params(("id" = String, Path, description = "Job id")),
    responses((status = 200, body = JobView), (status = 404, body = ErrorBody),
              (status = 409, body = ErrorBody)))]
pub async fn retry(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<JobId>,
) -> Result<Json<JobView>, ApiError> {
    Ok(Json(state.service.retry_job(&caller, &id).await?))
}
