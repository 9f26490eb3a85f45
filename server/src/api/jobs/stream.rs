//! `GET /api/v1/jobs/{id}/stream`: a job's events as Server-Sent Events, live.
//!
//! Each event carries its id, so a client that reconnects (`EventSource` does so by
//! itself, sending `Last-Event-ID`) or reloads (passing `?after=`) resumes exactly
//! after the last event it has: no gap, no repeat. When the job has finished and
//! every event has been sent, a final `end` event carries the job, and the stream
//! closes.
//!
//! The streams of one job share their reads of the database (see [`super::feed`]).
//!
//! One user may have only so many streams open at once (`--max-streams-per-user`);
//! past that a new one is refused with 429 (see [`super::stream_limit`]).
//!
//! A stream can stay open for the whole of a long job, so the credentials it was
//! opened with are checked again every [`RECHECK_EVERY`]: a user deleted, signed out
//! everywhere, with a changed password or a revoked token stops receiving events.
//!
//! While the database is not answering a stream stays open (sending its keep-alive
//! comments) and reads again every [`READ_AGAIN_AFTER`]: a browser's `EventSource`
//! would not reconnect after the `failure` event, nor after a 503, so closing would
//! lose the stream. Once the database answers the stream sends every event written
//! meanwhile, from where it was.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use engine::queue::{JobId, JobWaiter};
use engine::service::{Access, Caller, Service, ServiceError, SessionUser};
use futures::stream;
use serde::Deserialize;
use tokio::time::Instant;
use tower_sessions::Session;
use utoipa::IntoParams;

use super::feed::{frame, JobFeed, Next};
use super::stream_limit::OpenStream;
use crate::api::error::{ApiError, ErrorBody, ErrorCode};
use crate::api::extract::{ApiPath, ApiQuery, Authenticated, SessionData, SESSION_USER};
use crate::http::AppState;

/// How often an idle stream looks for new events by itself: a stream is woken when its
/// job's events are written (see `engine::queue::job_wakes`); this only bounds how
/// long a lost wake could delay it.
const LOOK_ANYWAY_EVERY: Duration = Duration::from_secs(5);

/// How often an open stream checks that its credentials still hold.
const RECHECK_EVERY: Duration = Duration::from_secs(5);

/// The shortest time between two sends of a stream: what a busy job writes meanwhile
/// goes out together. A person watching sees no difference; 200 watchers of a job
/// writing 100 lines a second cost the server 10 writes each a second instead of 100.
const SEND_AT_MOST_EVERY: Duration = Duration::from_millis(100);

/// How long a stream stays silent before it sends a comment, so that proxies and
/// browsers do not take a quiet job for a dead connection.
const KEEP_ALIVE_EVERY: Duration = Duration::from_secs(15);

/// How soon a stream whose read found the database not answering reads again.
const READ_AGAIN_AFTER: Duration = Duration::from_secs(1);

/// What a stream was opened with, to check again while it runs.
enum Credential {
    Token(String),
    Session(SessionUser),
}

impl Credential {
    /// The bearer token if one was sent, else the session's user (the extractor has
    /// already authenticated the request with one of the two).
    async fn of(headers: &HeaderMap, session: &Session) -> Option<Self> {
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "));
        if let Some(raw) = bearer {
            return Some(Credential::Token(raw.to_owned()));
        }
        let data: Option<SessionData> = session.get(SESSION_USER).await.ok().flatten();
        data.map(|data| Credential::Session(data.user))
    }

    /// Whether the credential still holds: `None` when the database cannot say now.
    async fn still_valid(&self, service: &Service) -> Option<bool> {
        let checked = match self {
            Credential::Token(raw) => service.token_principal(raw, Access::Read).await,
            Credential::Session(user) => service.session_principal(user).await,
        };
        match checked {
            Ok(_) => Some(true),
            Err(ServiceError::Unavailable) => None,
            Err(_) => Some(false),
        }
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StreamQuery {
    /// Id of the last event already seen (0 = from the start). The
    /// `Last-Event-ID` header, when present, wins.
    #[serde(default)]
    pub after: i64,
}

/// The job's events from `after` on, live, as `text/event-stream`: each `message`
/// event is an event object as `/events` returns it; a final `end` event carries the
/// finished job.
#[utoipa::path(get, path = "/jobs/{id}/stream", tag = "jobs",
    params(("id" = String, Path, description = "Job id"), StreamQuery),
    responses(
        (status = 200, description = "Server-Sent Events", content_type = "text/event-stream", body = String),
        (status = 404, body = ErrorBody),
        (status = 429, description = "The caller has the most streams one user may have open", body = ErrorBody)))]
pub async fn stream(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<JobId>,
    ApiQuery(query): ApiQuery<StreamQuery>,
    session: Session,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    // Refused up front (not mid-stream) when the job is not the caller's.
    state.service.job(&caller, &id).await?;
    let place = state
        .job_feeds
        .streams
        .open(&caller.principal.user_id)
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::TooManyStreams,
                format!(
                    "you have {} job event streams open, the most one user may have: close \
                     one (a tab showing a job) and try again",
                    state.job_feeds.streams.max()
                ),
            )
        })?;
    let credential = Credential::of(&headers, &session)
        .await
        .ok_or_else(|| ApiError::unauthenticated("sign in or send a bearer token"))?;
    let after = headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<i64>().ok())
        .unwrap_or(query.after)
        .max(0);
    // Subscribed to the process's queue (which its workers write through too) before
    // the first read: a write after it wakes the stream.
    let waiter = state.service.queue().subscribe();
    let follower = Follower {
        waiter,
        feed: state.job_feeds.feed(&id),
        service: state.service.clone(),
        caller,
        job_id: id,
        after,
        woken_at: Instant::now(),
        pending: VecDeque::new(),
        finished: false,
        credential,
        checked_at: Instant::now(),
        sent_at: Instant::now(),
        _place: place,
    };
    let body = Body::from_stream(stream::unfold(follower, Follower::next));
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        body,
    )
        .into_response())
}

/// Where one stream is: the last event sent and the events read but not yet sent.
struct Follower {
    waiter: JobWaiter,
    feed: Arc<JobFeed>,
    service: Service,
    caller: Caller,
    job_id: JobId,
    after: i64,
    /// When the stream was opened or last woken (see [`JobFeed::next_after`]).
    woken_at: Instant,
    pending: VecDeque<(i64, Bytes)>,
    finished: bool,
    credential: Credential,
    checked_at: Instant,
    /// When the stream last sent something (see [`KEEP_ALIVE_EVERY`]).
    sent_at: Instant,
    /// The stream's place among its user's (see [`super::stream_limit`]).
    _place: OpenStream,
}

impl Follower {
    /// What the stream sends next: every event it has read and not sent, as one write.
    async fn next(mut self) -> Option<(Result<Bytes, Infallible>, Self)> {
        loop {
            if let Some(&(last, _)) = self.pending.back() {
                let mut frames =
                    Vec::with_capacity(self.pending.iter().map(|(_, frame)| frame.len()).sum());
                for (_, frame) in self.pending.drain(..) {
                    frames.extend_from_slice(&frame);
                }
                self.after = last;
                self.sent_at = Instant::now();
                return Some((Ok(Bytes::from(frames)), self));
            }
            if self.finished {
                return None;
            }
            if self.checked_at.elapsed() >= RECHECK_EVERY {
                // Unknown while the database is away: checked again next time.
                if self.credential.still_valid(&self.service).await == Some(false) {
                    let ended =
                        failure("signed out: this stream's session or token is no longer valid");
                    return Some((Ok(ended), self.end()));
                }
                self.checked_at = Instant::now();
            }
            let next = self
                .feed
                .next_after(&self.service, &self.caller, self.after, self.woken_at)
                .await;
            match next {
                Ok(Next::Events(events)) => self.pending.extend(events),
                Ok(Next::End(end)) => return Some((Ok(end), self.end())),
                Ok(Next::Nothing) => {
                    if self.sent_at.elapsed() >= KEEP_ALIVE_EVERY {
                        self.sent_at = Instant::now();
                        return Some((Ok(Bytes::from_static(b":\n\n")), self));
                    }
                    tokio::select! {
                        () = self.waiter.changed(self.job_id.as_str()) => {}
                        () = tokio::time::sleep(LOOK_ANYWAY_EVERY) => {}
                    }
                    tokio::time::sleep_until(self.sent_at + SEND_AT_MOST_EVERY).await;
                    self.woken_at = Instant::now();
                }
                Err(ServiceError::Unavailable) => {
                    if self.sent_at.elapsed() >= KEEP_ALIVE_EVERY {
                        self.sent_at = Instant::now();
                        return Some((Ok(Bytes::from_static(b":\n\n")), self));
                    }
                    tokio::time::sleep(READ_AGAIN_AFTER).await;
                    self.woken_at = Instant::now();
                }
                Err(error) => return Some((Ok(failure(&error.to_string())), self.end())),
            }
        }
    }

    fn end(mut self) -> Self {
        self.finished = true;
        self.pending.clear();
        self
    }
}

/// The stream cannot go on (the job vanished, the database is down): say so.
fn failure(message: &str) -> Bytes {
    frame(Some("failure"), None, message)
}
