//! One writer for the task events of every task a pool runs: each task hands over its
//! events and waits until they are stored, and whatever arrives while a batch is
//! being written goes into the next one.
//!
//! A fan-out of hundreds of short steps would otherwise pay one write transaction per
//! task for its output, all queued on SQLite's single writer; batched, it pays a few.
//! Waiting for the write keeps each task's events ahead of its completion in the job's
//! stream (a reader that sees the job end has every line of its output).
//!
//! A batch that fails because the database does not answer is written again once it
//! does (backing off meanwhile), so an outage delays events but loses none; other
//! failures are logged and the batch dropped (events are best effort).

use tokio::sync::{mpsc, oneshot};

use crate::queue::{NewEvent, Queue};
use crate::store::now_ms;

/// Events written in one transaction at most (the queue splits it into statements).
const WRITE_BATCH: usize = 2_048;

/// Hands events to the pool's writer; cheap to clone.
#[derive(Clone)]
pub(super) struct EventWriter {
    sender: mpsc::UnboundedSender<Handover>,
}

struct Handover {
    events: Vec<NewEvent>,
    written: oneshot::Sender<()>,
}

impl EventWriter {
    /// Starts the writer; it stops once every clone of the returned handle is gone
    /// and what they handed over is written.
    pub(super) fn start(queue: Queue) -> (Self, tokio::task::JoinHandle<()>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        (
            Self { sender },
            tokio::spawn(write_batches(queue, receiver)),
        )
    }

    /// Stores `events` in order, after everything handed over before; returns once
    /// they are written or their write failed (events are best effort: the task rows
    /// and attempt records are the record).
    pub(super) async fn write(&self, events: Vec<NewEvent>) {
        if let Some(done) = self.hand_over(events) {
            let _ = done.await;
        }
    }

    /// Queues `events` for writing, in order after everything handed over before,
    /// without waiting for the write: for callers that must not wait out an outage
    /// (the claimer, whose claimed tasks' leases are already running).
    pub(super) fn send(&self, events: Vec<NewEvent>) {
        let _ = self.hand_over(events);
    }

    fn hand_over(&self, events: Vec<NewEvent>) -> Option<oneshot::Receiver<()>> {
        if events.is_empty() {
            return None;
        }
        let (written, done) = oneshot::channel();
        self.sender
            .send(Handover { events, written })
            .is_ok()
            .then_some(done)
    }
}

async fn write_batches(queue: Queue, mut handovers: mpsc::UnboundedReceiver<Handover>) {
    while let Some(first) = handovers.recv().await {
        let mut events = first.events;
        let mut waiting = vec![first.written];
        while events.len() < WRITE_BATCH {
            match handovers.try_recv() {
                Ok(next) => {
                    events.extend(next.events);
                    waiting.push(next.written);
                }
                Err(_) => break,
            }
        }
        // Stamped when handed over, not when an outage let them through.
        let at_ms = now_ms();
        let reachability = queue.store().reachability();
        let mut failures = 0;
        loop {
            match queue.append_events(&events, at_ms).await {
                Ok(()) => reachability.answered(),
                Err(error) if error.is_unreachable() => {
                    failures += 1;
                    reachability.lost(&error);
                    tokio::time::sleep(super::unreachable_backoff(failures)).await;
                    continue;
                }
                Err(error) => {
                    tracing::warn!(events = events.len(), %error, "recording task events failed");
                }
            }
            break;
        }
        for written in waiting {
            let _ = written.send(());
        }
    }
}
