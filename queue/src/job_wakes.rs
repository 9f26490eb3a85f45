//! Wakes whoever follows a job (its event streams) when the job's events or state
//! change, instead of each follower polling the database.
//!
//! Within a process a broadcast channel carries the job's id from the queue's writer
//! (`Queue::announce`, after its transaction commits) to every follower ([`JobWaiter`],
//! from [`Queue::subscribe`]). The channel belongs to the process's one [`Queue`] and
//! its clones: only the queue writes jobs' events and states, so only it announces.
//! Across processes sharing a PostgreSQL database the same id goes through `NOTIFY`
//! on [`CHANNEL`], and each process that serves streams forwards what it hears into
//! its own channel ([`Queue::forward_notifications`]). SQLite has one process that
//! writes events, so the channel is all it needs.
//!
//! A wake is a hint, never the data: a follower reads the events from the database
//! after it. A missed wake (a lagging follower, a listener reconnecting) wakes every
//! follower, and followers still look on their own every few seconds, so nothing is
//! lost when a notification is.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast;

use store::reachability::{self, Failure};
use store::{Backend, DatabaseUrl};

use crate::Queue;

/// The PostgreSQL notification channel job wakes travel on; the payload is a job id.
pub const CHANNEL: &str = "corral_job_events";

/// A wake for every follower (sent after notifications may have been missed).
const EVERYONE: &str = "*";

/// Wakes buffered per follower before it counts as lagging (and is woken anyway).
const BUFFERED: usize = 1024;

/// How long a lost listener connection waits before it connects again.
const RECONNECT_AFTER: Duration = Duration::from_secs(1);

/// The process's job wakes (held by its [`Queue`]); clones share them.
#[derive(Debug, Clone)]
pub struct JobWakes {
    sender: broadcast::Sender<Arc<str>>,
}

impl Default for JobWakes {
    fn default() -> Self {
        Self {
            sender: broadcast::channel(BUFFERED).0,
        }
    }
}

impl JobWakes {
    /// A waiter that sees every wake sent from now on.
    pub fn subscribe(&self) -> JobWaiter {
        JobWaiter {
            receiver: self.sender.subscribe(),
        }
    }

    fn wake(&self, job_id: &str) {
        // No receiver is fine: nobody follows the job.
        let _ = self.sender.send(Arc::from(job_id));
    }
}

/// One follower's view of the wakes.
#[derive(Debug)]
pub struct JobWaiter {
    receiver: broadcast::Receiver<Arc<str>>,
}

impl JobWaiter {
    /// Resolves once `job_id` may have changed since this waiter was made or last
    /// returned: at once if a wake came meanwhile.
    pub async fn changed(&mut self, job_id: &str) {
        loop {
            match self.receiver.recv().await {
                Ok(woken) if &*woken == job_id || &*woken == EVERYONE => return,
                Ok(_) => {}
                // Wakes were dropped: this job's may have been among them.
                Err(broadcast::error::RecvError::Lagged(_)) => return,
                // The process is going away; the caller's own timer takes over.
                Err(broadcast::error::RecvError::Closed) => std::future::pending().await,
            }
        }
    }
}

impl Queue {
    /// Tells every follower of these jobs, in this process and (on PostgreSQL) in every
    /// other, that they changed. Call after the change is committed.
    pub(crate) async fn announce<'a>(&self, job_ids: impl IntoIterator<Item = &'a str>) {
        let store = &self.store;
        let mut distinct: Vec<&str> = job_ids.into_iter().collect();
        distinct.sort_unstable();
        distinct.dedup();
        for job_id in &distinct {
            self.wakes.wake(job_id);
        }
        if store.backend() != Backend::Postgres || distinct.is_empty() {
            return;
        }
        for job_id in distinct {
            let notified = sqlx::query("SELECT pg_notify($1, $2)")
                .bind(CHANNEL)
                .bind(job_id)
                .execute(store.pool())
                .await;
            if let Err(error) = notified {
                // The other processes' followers find the change on their next look.
                store.reachability().failed(
                    "notifying other processes of a job's change",
                    &error,
                    reachability::classify(&error) == Failure::Unreachable,
                );
            }
        }
    }

    /// Forwards the job wakes other processes send through PostgreSQL into this
    /// process's followers, until the process ends (reconnecting when the connection
    /// is lost). Nothing to do on SQLite. Spawn it once per process, on its queue.
    pub async fn forward_notifications(self, url: DatabaseUrl) {
        if self.store.backend() != Backend::Postgres {
            return;
        }
        loop {
            match listen(&self.wakes, &url).await {
                Ok(()) => {}
                Err(error) => self.store.reachability().failed(
                    "listening for job wakes (reconnecting)",
                    &error,
                    reachability::classify(&error) == Failure::Unreachable,
                ),
            }
            // Whatever was sent while nobody listened: everyone looks again.
            self.wakes.wake(EVERYONE);
            tokio::time::sleep(RECONNECT_AFTER).await;
        }
    }
}

/// Listens until the connection is lost (`Ok`) or cannot be made (`Err`).
///
/// The listener's connection comes from a pool of its own with the store's short
/// acquire timeout, and a lost connection ends the call instead of being remade
/// inside `recv` (which waits with the default 30 s timeout and does not say so):
/// the caller wakes every follower, for the wakes sent while nobody listened.
async fn listen(wakes: &JobWakes, url: &DatabaseUrl) -> Result<(), sqlx::Error> {
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .acquire_timeout(store::POSTGRES_ACQUIRE_TIMEOUT)
        .connect_lazy(&url.connect_string())?;
    let mut listener = sqlx::postgres::PgListener::connect_with(&pool).await?;
    listener.listen(CHANNEL).await?;
    // Connected now: wakes sent before this point may have been missed.
    wakes.wake(EVERYONE);
    while let Some(notification) = listener.try_recv().await? {
        wakes.wake(notification.payload());
    }
    Ok(())
}
