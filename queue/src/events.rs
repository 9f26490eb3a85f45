//! A job's event stream (task output, state changes). The row id is the resumable
//! offset a client sends back (SSE `Last-Event-ID`) to continue without gaps.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use api_types::{EventKind, JobId, OutputStream, TaskRecordId};

use super::{begin_write, Queue, QueueError};
use store::Backend;

/// Namespace (first key) of the per-job advisory locks that order event ids.
const EVENT_LOCK_CLASS: i32 = 0x6576;
/// Events per INSERT in [`Queue::append_events`] (a power of two): seven bound values each.
const EVENT_BATCH: usize = 512;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEvent {
    pub job_id: JobId,
    pub task_id: Option<TaskRecordId>,
    pub attempt: Option<i64>,
    pub kind: EventKind,
    /// Which output an `output` event's chunk came from.
    pub stream: Option<OutputStream>,
    pub data: String,
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Event {
    pub id: i64,
    pub job_id: JobId,
    pub task_id: Option<TaskRecordId>,
    pub attempt: Option<i64>,
    pub at_ms: i64,
    pub kind: EventKind,
    pub stream: Option<OutputStream>,
    pub data: String,
}

impl Queue {
    /// Appends an event and returns its id.
    ///
    /// On PostgreSQL a sequence hands out ids before commit, so two appenders to one
    /// job could commit out of order and a reader could skip the smaller id; a per-job
    /// advisory lock held until commit keeps a job's ids in commit order.
    pub async fn append_event(&self, event: &NewEvent, now_ms: i64) -> Result<i64, QueueError> {
        let (_turn, mut tx) = begin_write(&self.store).await?;
        if self.store.backend() == Backend::Postgres {
            sqlx::query_scalar::<_, i64>(
            "SELECT COUNT(*) FROM (SELECT pg_advisory_xact_lock($1, hashtext($2))) AS event_lock",
        )
        .bind(EVENT_LOCK_CLASS)
        .bind(event.job_id.as_str())
        .fetch_one(&mut *tx)
        .await?;
        }
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO task_events (job_id, task_id, attempt, at_ms, kind, stream, data) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
        )
        .bind(event.job_id.as_str())
        .bind(event.task_id.as_ref().map(TaskRecordId::as_str))
        .bind(event.attempt)
        .bind(now_ms)
        .bind(event.kind.as_str())
        .bind(event.stream.map(OutputStream::as_str))
        .bind(&event.data)
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        self.announce([event.job_id.as_str()]).await;
        Ok(id)
    }

    /// Appends several events in one transaction, in order (what a worker pool does for
    /// the tasks it claims or completes together).
    ///
    /// Takes the same per-job locks as [`Queue::append_event`], every job's at once in the order
    /// of their lock keys, so two batches never wait on each other in a cycle.
    pub async fn append_events(&self, events: &[NewEvent], now_ms: i64) -> Result<(), QueueError> {
        if events.is_empty() {
            return Ok(());
        }
        let (_turn, mut tx) = begin_write(&self.store).await?;
        if self.store.backend() == Backend::Postgres {
            let jobs: BTreeSet<&str> = events.iter().map(|event| event.job_id.as_str()).collect();
            let mut values = String::new();
            for index in 0..jobs.len() {
                if index > 0 {
                    values.push_str(", ");
                }
                let _ = write!(values, "(${})", index + 2);
            }
            let sql = format!(
                "SELECT COUNT(*) FROM (SELECT pg_advisory_xact_lock($1, key) FROM \
                   (SELECT DISTINCT hashtext(job) AS key FROM (VALUES {values}) AS jobs (job) \
                    ORDER BY key) AS keys) AS event_locks"
            );
            let mut lock = sqlx::query_scalar::<_, i64>(&sql).bind(EVENT_LOCK_CLASS);
            for job in jobs {
                lock = lock.bind(job);
            }
            lock.fetch_one(&mut *tx).await?;
        }
        const COLUMNS: usize = 7;
        let mut rest = events;
        for size in super::power_of_two_chunks(events.len(), EVENT_BATCH) {
            let (chunk, after) = rest.split_at(size);
            rest = after;
            let sql = format!(
                "INSERT INTO task_events (job_id, task_id, attempt, at_ms, kind, stream, data) \
                 VALUES {}",
                super::Params::new(self.store.backend()).rows(chunk.len(), COLUMNS)
            );
            let mut query = sqlx::query(&sql);
            for event in chunk {
                query = query
                    .bind(event.job_id.as_str())
                    .bind(event.task_id.as_ref().map(TaskRecordId::as_str))
                    .bind(event.attempt)
                    .bind(now_ms)
                    .bind(event.kind.as_str())
                    .bind(event.stream.map(OutputStream::as_str))
                    .bind(event.data.as_str());
            }
            query.execute(&mut *tx).await?;
        }
        tx.commit().await?;
        self.announce(events.iter().map(|event| event.job_id.as_str()))
            .await;
        Ok(())
    }
}

const EVENT_COLUMNS: &str = "id, job_id, task_id, attempt, at_ms, kind, stream, data";

impl Queue {
    /// Up to `limit` events of `job_id` with ids above `after_id` (0 for the start), oldest first.
    pub async fn events_after(
        &self,
        job_id: &JobId,
        after_id: i64,
        limit: i64,
    ) -> Result<Vec<Event>, QueueError> {
        Ok(sqlx::query_as(&format!(
            "SELECT {EVENT_COLUMNS} FROM task_events WHERE job_id = $1 AND id > $2 \
             ORDER BY id LIMIT $3"
        ))
        .bind(job_id.as_str())
        .bind(after_id)
        .bind(limit)
        .fetch_all(self.store.pool())
        .await?)
    }

    /// The last `limit` events of `job_id`, oldest first: what a page shows of a long job
    /// without reading the rest.
    pub async fn last_events(&self, job_id: &JobId, limit: i64) -> Result<Vec<Event>, QueueError> {
        let mut events: Vec<Event> = sqlx::query_as(&format!(
            "SELECT {EVENT_COLUMNS} FROM task_events WHERE job_id = $1 ORDER BY id DESC LIMIT $2"
        ))
        .bind(job_id.as_str())
        .bind(limit)
        .fetch_all(self.store.pool())
        .await?;
        events.reverse();
        Ok(events)
    }

    /// The job's last `limit` output events with ids below `before` (every one when
    /// `None`), oldest first: a page of a long job's log without reading the rest.
    pub async fn last_output(
        &self,
        job_id: &JobId,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<Event>, QueueError> {
        let mut events: Vec<Event> = sqlx::query_as(&format!(
            "SELECT {EVENT_COLUMNS} FROM task_events WHERE job_id = $1 AND kind = $2 AND id < $3 \
             ORDER BY id DESC LIMIT $4"
        ))
        .bind(job_id.as_str())
        .bind(EventKind::Output.as_str())
        .bind(before.unwrap_or(i64::MAX))
        .bind(limit)
        .fetch_all(self.store.pool())
        .await?;
        events.reverse();
        Ok(events)
    }

    /// The last `limit` output events of one of the job's tasks, oldest first.
    pub async fn task_last_output(
        &self,
        job_id: &JobId,
        task_id: &TaskRecordId,
        limit: i64,
    ) -> Result<Vec<Event>, QueueError> {
        let mut events: Vec<Event> = sqlx::query_as(&format!(
            "SELECT {EVENT_COLUMNS} FROM task_events WHERE job_id = $1 AND task_id = $2 \
             AND kind = $3 ORDER BY id DESC LIMIT $4"
        ))
        .bind(job_id.as_str())
        .bind(task_id.as_str())
        .bind(EventKind::Output.as_str())
        .bind(limit)
        .fetch_all(self.store.pool())
        .await?;
        events.reverse();
        Ok(events)
    }

    /// The id of the job's newest event (0 before its first): where a stream that
    /// misses nothing after a read starts.
    pub async fn last_event_id(&self, job_id: &JobId) -> Result<i64, QueueError> {
        Ok(
            sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) FROM task_events WHERE job_id = $1")
                .bind(job_id.as_str())
                .fetch_one(self.store.pool())
                .await?,
        )
    }
}
