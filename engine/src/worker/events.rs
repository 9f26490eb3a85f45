//! One writer for the task events of every task a pool runs: each task hands over its
//! events and waits until they are stored, and whatever arrives while a batch is
//! being written goes into the next one.
//!
//! A fan-out of hundreds of short steps would otherwise pay one write transaction per
//! task for its output, all queued on SQLite's single writer; batched, it pays a few.
//! Waiting for the write keeps each task's events ahead of its completion in the job's
//! stream (a reader that sees the job end has every line of its output).

use tokio::sync::{mpsc, oneshot};

use crate::queue::{self, NewEvent};
use crate::store::{now_ms, Store};

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
    pub(super) fn start(store: Store) -> (Self, tokio::task::JoinHandle<()>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        (
            Self { sender },
            tokio::spawn(write_batches(store, receiver)),
        )
    }

    /// Stores `events` in order, after everything handed over before; returns once
    /// they are written or their write failed (events are best effort: the task rows
    /// and attempt records are the record).
    pub(super) async fn write(&self, events: Vec<NewEvent>) {
        if events.is_empty() {
            return;
        }
        let (written, done) = oneshot::channel();
        if self.sender.send(Handover { events, written }).is_ok() {
            let _ = done.await;
        }
    }
}

async fn write_batches(store: Store, mut handovers: mpsc::UnboundedReceiver<Handover>) {
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
        if let Err(error) = queue::append_events(&store, &events, now_ms()).await {
            tracing::warn!(events = events.len(), %error, "recording task events failed");
        }
        for written in waiting {
            let _ = written.send(());
        }
    }
}
