//! One read of the database per change of a job, shared by all of its open streams.
//!
//! Every stream of a job is woken when the job's events are written. Read alone, each
//! stream would then read the job and its new events itself: 200 people watching a
//! busy job meant 200 sets of queries and 200 serializations of every event, 100
//! times a second. The streams of one job in this process share a [`JobFeed`]
//! instead: the first stream woken reads the job's state and its new events once and
//! keeps the last events rendered as Server-Sent Events; the others take them from
//! there, and each sends what it has as one write. A stream further behind than what the feed keeps (a client resuming from
//! an old event) reads the database itself until it is within reach.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, Weak};

use axum::body::Bytes;
use engine::queue::JobId;
use engine::service::{Caller, EventView, Service, ServiceError, MAX_EVENTS};
use tokio::time::Instant;

/// How many rendered events a feed keeps for streams that are a little behind.
const KEEP: usize = 5_000;

/// The feeds of the jobs streamed in this process now, by job id, and how many
/// streams each user has open.
#[derive(Clone, Default)]
pub struct JobFeeds {
    feeds: Arc<Mutex<HashMap<JobId, Weak<JobFeed>>>>,
    pub(super) streams: super::stream_limit::StreamLimit,
}

impl JobFeeds {
    /// Feeds whose users may each have at most `max` streams open.
    pub fn with_stream_limit(max: usize) -> Self {
        Self {
            feeds: Arc::default(),
            streams: super::stream_limit::StreamLimit::new(max),
        }
    }

    /// The feed of `job_id`, shared with its other open streams; it goes when they do.
    pub fn feed(&self, job_id: &JobId) -> Arc<JobFeed> {
        let mut feeds = self
            .feeds
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(feed) = feeds.get(job_id).and_then(Weak::upgrade) {
            return feed;
        }
        feeds.retain(|_, feed| feed.strong_count() > 0);
        let feed = Arc::new(JobFeed {
            job_id: job_id.clone(),
            cache: tokio::sync::Mutex::new(Cache::default()),
        });
        feeds.insert(job_id.clone(), Arc::downgrade(&feed));
        feed
    }
}

/// What a stream sends next.
pub enum Next {
    /// Events after the stream's last one, oldest first, with their ids.
    Events(Vec<(i64, Bytes)>),
    /// The job has finished and the stream has sent all of its events: the `end` event.
    End(Bytes),
    /// Nothing new since the last read: wait for the job's next change.
    Nothing,
}

/// One job's shared reads.
pub struct JobFeed {
    job_id: JobId,
    cache: tokio::sync::Mutex<Cache>,
}

/// The last events read, and whether the job had finished when they were.
#[derive(Default)]
struct Cache {
    /// Rendered events with ids in `(floor, newest]`, oldest first, all of them.
    events: VecDeque<(i64, Bytes)>,
    floor: i64,
    newest: i64,
    /// The `end` event, once a read found the job finished with no event after `newest`.
    end: Option<Bytes>,
    /// When the last complete read began; `None` before the first one.
    read_at: Option<Instant>,
}

impl JobFeed {
    /// What a stream that has sent every event up to `after` sends next. `woken_at` is
    /// when the stream was opened or last woken: the database is read (once, for every
    /// stream of the job) unless a read has begun since, which saw everything written
    /// before that wake.
    pub async fn next_after(
        &self,
        service: &Service,
        caller: &Caller,
        after: i64,
        woken_at: Instant,
    ) -> Result<Next, ServiceError> {
        let mut cache = self.cache.lock().await;
        if cache.read_at.is_none() {
            // The first read starts where the first stream stands.
            cache.floor = after;
            cache.newest = after;
        }
        if after < cache.floor {
            drop(cache);
            return self.read_alone(service, caller, after).await;
        }
        if after >= cache.newest && cache.read_at.is_none_or(|read_at| read_at < woken_at) {
            self.read_for_everyone(&mut cache, service, caller).await?;
        }
        if after < cache.newest {
            return Ok(Next::Events(
                cache
                    .events
                    .iter()
                    .filter(|(id, _)| *id > after)
                    .cloned()
                    .collect(),
            ));
        }
        Ok(match &cache.end {
            Some(end) => Next::End(end.clone()),
            None => Next::Nothing,
        })
    }

    /// Reads the job's state, then its events after the newest kept (so none written
    /// before it finished is missed), and keeps them rendered.
    async fn read_for_everyone(
        &self,
        cache: &mut Cache,
        service: &Service,
        caller: &Caller,
    ) -> Result<(), ServiceError> {
        let began = Instant::now();
        let job = service.job(caller, &self.job_id).await?;
        let events = service
            .job_events(caller, &self.job_id, cache.newest, MAX_EVENTS)
            .await?;
        let more_to_read = events.len() >= usize::try_from(MAX_EVENTS).unwrap_or(usize::MAX);
        for event in &events {
            cache.newest = event.id;
            cache.events.push_back((event.id, message(event)));
        }
        while cache.events.len() > KEEP {
            if let Some((id, _)) = cache.events.pop_front() {
                cache.floor = id;
            }
        }
        if job.state.is_finished() && !more_to_read {
            cache.end = Some(frame(
                Some("end"),
                None,
                &serde_json::to_string(&job).unwrap_or_default(),
            ));
        }
        // A read that stopped at the page's end is not complete: the next stream asks again.
        cache.read_at = (!more_to_read).then_some(began);
        Ok(())
    }

    /// Events for a stream behind what the feed keeps, read for it alone.
    async fn read_alone(
        &self,
        service: &Service,
        caller: &Caller,
        after: i64,
    ) -> Result<Next, ServiceError> {
        let events = service
            .job_events(caller, &self.job_id, after, MAX_EVENTS)
            .await?;
        Ok(Next::Events(
            events
                .iter()
                .map(|event| (event.id, message(event)))
                .collect(),
        ))
    }
}

/// A job event as the stream sends it: its id, and the event object as `/events` has it.
fn message(event: &EventView) -> Bytes {
    frame(
        None,
        Some(event.id),
        &serde_json::to_string(event).unwrap_or_default(),
    )
}

/// One Server-Sent Event: its type (`message` when none), id and data, each line of the
/// data on a `data:` line of its own as the format wants.
pub fn frame(kind: Option<&str>, id: Option<i64>, data: &str) -> Bytes {
    let mut text = String::with_capacity(data.len() + 32);
    if let Some(kind) = kind {
        text.push_str("event: ");
        text.push_str(kind);
        text.push('\n');
    }
    if let Some(id) = id {
        text.push_str(&format!("id: {id}\n"));
    }
    for line in data.split('\n') {
        text.push_str("data: ");
        text.push_str(line.trim_end_matches('\r'));
        text.push('\n');
    }
    text.push('\n');
    Bytes::from(text)
}
