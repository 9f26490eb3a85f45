//! The worker pool: claims ready tasks from the durable queue, runs each through the
//! [`Executor`] under a heartbeated lease, streams its output into the job's events,
//! and records the outcome.
//!
//! `corral serve` runs a pool in-process; `corral worker` runs one alone against a
//! shared PostgreSQL. Pools in several processes cooperate through the queue only. A
//! pool that dies mid-task loses nothing: its leases expire and any pool's janitor
//! returns the tasks to the queue (see [`janitor`]).

pub mod janitor;
mod output;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch, Notify};
use tokio::task::JoinSet;
use tracing::Instrument;

use crate::execute::{Executor, StepError};
use crate::queue::{
    self, ClaimLimits, ClaimedTask, Heartbeat, NewEvent, Outcome, OutcomeKind, QueueError,
};
use crate::store::now_ms;

/// How a pool runs.
#[derive(Debug, Clone)]
pub struct WorkerSettings {
    /// Tasks this process runs at once.
    pub slots: usize,
    /// Caps across every process sharing the database.
    pub limits: ClaimLimits,
    /// A task whose worker stops heartbeating goes back to the queue after this long.
    pub lease: Duration,
    /// Heartbeats per lease: three keeps one lost beat harmless.
    pub heartbeat: Duration,
    /// Sleep between claims while the queue is empty (a submit in this process wakes
    /// the pool at once through [`WorkerPool::waker`]).
    pub idle_poll: Duration,
    /// How often the janitor requeues expired leases and deletes expired clusters.
    pub janitor_every: Duration,
    /// How long shutdown waits for running tasks before stopping them.
    pub shutdown_grace: Duration,
}

impl Default for WorkerSettings {
    fn default() -> Self {
        Self {
            slots: 16,
            limits: ClaimLimits {
                max_running: Some(256),
                max_running_per_tenant: Some(64),
            },
            lease: Duration::from_secs(30),
            heartbeat: Duration::from_secs(10),
            idle_poll: Duration::from_millis(500),
            janitor_every: Duration::from_secs(5),
            shutdown_grace: Duration::from_secs(10),
        }
    }
}

/// A running pool; [`WorkerPool::shutdown`] stops it.
#[derive(Debug)]
pub struct WorkerPool {
    wake: Arc<Notify>,
    stop: watch::Sender<bool>,
    loops: JoinSet<()>,
    grace: Duration,
}

impl WorkerPool {
    /// Starts `settings.slots` worker loops and a janitor.
    pub fn start(executor: Executor, settings: WorkerSettings) -> Self {
        let wake = Arc::new(Notify::new());
        let (stop, stopped) = watch::channel(false);
        let process = format!(
            "{}-{}",
            std::process::id(),
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        );
        let mut loops = JoinSet::new();
        for slot in 0..settings.slots.max(1) {
            let worker = Worker {
                id: format!("{process}-{slot}"),
                executor: executor.clone(),
                settings: settings.clone(),
                wake: wake.clone(),
                stopped: stopped.clone(),
            };
            loops.spawn(worker.run());
        }
        loops.spawn(janitor::run(
            executor,
            settings.janitor_every,
            wake.clone(),
            stopped,
        ));
        tracing::info!(slots = settings.slots, worker = %process, "worker pool started");
        Self {
            wake,
            stop,
            loops,
            grace: settings.shutdown_grace,
        }
    }

    /// Wakes idle workers (call after submitting a job in this process).
    pub fn waker(&self) -> Arc<Notify> {
        self.wake.clone()
    }

    /// Stops claiming, lets running tasks finish for the grace period, then stops them
    /// (their leases expire and another pool, or this one after a restart, resumes them).
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        self.wake.notify_waiters();
        let drained = tokio::time::timeout(self.grace, async {
            while self.loops.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            tracing::warn!("stopping tasks still running after the shutdown grace period");
            self.loops.shutdown().await;
        }
    }
}

struct Worker {
    id: String,
    executor: Executor,
    settings: WorkerSettings,
    wake: Arc<Notify>,
    stopped: watch::Receiver<bool>,
}

impl Worker {
    async fn run(mut self) {
        let lease_ms = millis(self.settings.lease);
        while !*self.stopped.borrow() {
            let claimed = queue::claim(
                self.executor.store(),
                &self.id,
                lease_ms,
                self.settings.limits,
                now_ms(),
            )
            .await;
            match claimed {
                Ok(Some(task)) => {
                    self.run_task(task).await;
                    continue;
                }
                Ok(None) => {}
                Err(error) => tracing::warn!(worker = %self.id, %error, "claim failed"),
            }
            tokio::select! {
                () = self.wake.notified() => {}
                () = tokio::time::sleep(self.settings.idle_poll) => {}
                _ = self.stopped.changed() => {}
            }
        }
    }

    async fn run_task(&self, task: ClaimedTask) {
        let span = tracing::info_span!(
            "task",
            job = %task.job_id,
            task = task.number.0,
            node = task.node,
            action = task.action.as_str(),
            service = task.service.as_ref().map(|s| s.as_str()).unwrap_or(""),
            attempt = task.attempt,
        );
        // Instrumented, not entered: a guard held across awaits would leak the span
        // into whatever else this thread polls.
        self.run_task_in_span(task).instrument(span).await;
    }

    async fn run_task_in_span(&self, task: ClaimedTask) {
        let store = self.executor.store();
        let lease = task.lease();
        task_event(store, &task, format!("started (attempt {})", task.attempt)).await;
        let (sender, receiver) = mpsc::channel(256);
        let recorder = tokio::spawn(output::record(
            store.clone(),
            task.job_id.clone(),
            task.task_id.clone(),
            task.attempt,
            receiver,
        ));
        let ended = self.run_with_heartbeats(&task, sender).await;
        let captured = recorder.await.unwrap_or_default();
        let outcome = match ended {
            Ended::Finished(Ok(step)) => Outcome {
                kind: OutcomeKind::Succeeded,
                exit_code: step.exit_code,
                stdout: captured.stdout,
                stderr: captured.stderr,
                error: None,
            },
            Ended::Finished(Err(StepError::NotReady(reason))) => Outcome {
                kind: OutcomeKind::Deferred,
                exit_code: None,
                stdout: captured.stdout,
                stderr: captured.stderr,
                error: Some(reason),
            },
            Ended::Finished(Err(error)) => Outcome {
                kind: OutcomeKind::Failed,
                exit_code: match &error {
                    StepError::Failed { exit_code, .. } => *exit_code,
                    _ => None,
                },
                stdout: captured.stdout,
                stderr: captured.stderr,
                error: Some(error.to_string()),
            },
            Ended::Stopped => Outcome {
                stdout: captured.stdout,
                stderr: captured.stderr,
                ..Outcome::stopped()
            },
            Ended::LeaseLost => {
                tracing::warn!("lease lost while running; the queue has already moved on");
                return;
            }
        };
        match queue::complete(store, &lease, &outcome, now_ms()).await {
            Ok(completion) => {
                let verdict = match &outcome.error {
                    Some(error) => format!("{} ({error})", completion.task_state),
                    None => completion.task_state.to_string(),
                };
                task_event(store, &task, verdict).await;
                tracing::info!(state = %completion.task_state, job_state = %completion.job_state, "task ended");
                if completion.job_state.is_active() {
                    // Successors may be ready now: let idle workers look.
                    self.wake.notify_waiters();
                }
            }
            Err(QueueError::LeaseLost { .. }) => {
                tracing::warn!("lease lost before the outcome was recorded");
            }
            Err(error) => tracing::error!(%error, "recording the outcome failed"),
        }
    }

    /// Runs the step while heartbeating; the step is dropped (and its remote command
    /// killed) when the job is cancelled or the lease is lost.
    async fn run_with_heartbeats(
        &self,
        task: &ClaimedTask,
        output: mpsc::Sender<crate::ssh::OutputChunk>,
    ) -> Ended {
        let store = self.executor.store();
        let lease = task.lease();
        let step = self.executor.run(task, &output);
        tokio::pin!(step);
        let mut beat = tokio::time::interval(self.settings.heartbeat);
        beat.tick().await;
        loop {
            tokio::select! {
                result = &mut step => return Ended::Finished(result),
                _ = beat.tick() => {
                    match queue::heartbeat(store, &lease, millis(self.settings.lease), now_ms()).await {
                        Ok(Heartbeat::Continue { .. }) => {}
                        Ok(Heartbeat::Stop { .. }) => return Ended::Stopped,
                        Err(QueueError::LeaseLost { .. }) => return Ended::LeaseLost,
                        // A database hiccup: keep running; the next beat may get through
                        // before the lease runs out.
                        Err(error) => tracing::warn!(%error, "heartbeat failed"),
                    }
                }
            }
        }
    }
}

enum Ended {
    Finished(Result<crate::execute::StepOutcome, StepError>),
    Stopped,
    LeaseLost,
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// Appends a `state` event for the task (best effort: the task row is the record).
pub(crate) async fn task_event(store: &crate::store::Store, task: &ClaimedTask, data: String) {
    let event = NewEvent {
        job_id: task.job_id.clone(),
        task_id: Some(task.task_id.clone()),
        attempt: Some(task.attempt),
        kind: "state".to_owned(),
        stream: None,
        data,
    };
    if let Err(error) = queue::append_event(store, &event, now_ms()).await {
        tracing::warn!(%error, "recording a task event failed");
    }
}
