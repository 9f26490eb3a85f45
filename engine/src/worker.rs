//! The worker pool: claims ready tasks from the durable queue, runs each through the
//! [`Executor`] under a heartbeated lease, streams its output into the job's events,
//! and records the outcome. It also runs the provider checks (`corral provider test`)
//! of the tenants it serves ([`provider_tests`]): they belong where those tenants'
//! tasks run.
//!
//! Claims and completions are batched: the pool claims as many tasks as it has free
//! slots in one transaction, and records every outcome that arrived while the previous
//! batch was being written in the next one, so a busy pool pays a transaction per
//! batch rather than per task, and an idle one adds no delay.
//!
//! `corral serve` runs a pool in-process; `corral worker` runs one alone against a
//! shared PostgreSQL. Pools in several processes cooperate through the queue only. A
//! pool that dies mid-task loses nothing: its leases expire and any pool's janitor
//! returns the tasks to the queue (see [`janitor`]).

mod cpu_pressure;
mod events;
pub mod janitor;
mod output;
mod provider_tests;

use std::sync::Arc;
use std::time::Duration;

use api_types::{EventKind, TaskStateChange};
use tokio::sync::{mpsc, watch, Notify, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tracing::Instrument;

use crate::execute::{Executor, StepError};
use crate::queue::{
    ClaimLimits, ClaimedTask, Completion, Heartbeat, Lease, NewEvent, Outcome, OutcomeKind, Queue,
    QueueError, Sharing, WorkerScope,
};
use crate::store::now_ms;
use events::EventWriter;

/// Outcomes completed in one transaction at most.
const RECORD_BATCH: usize = 256;

/// The longest a loop waits before trying again while the database does not answer
/// (each try itself waits up to the pool's acquire timeout): short, so work resumes
/// within seconds of its return.
const UNREACHABLE_RETRY_MAX: Duration = Duration::from_secs(2);

/// How long to wait before the next try after `failures` tries in a row found the
/// database away: doubling from a quarter second up to [`UNREACHABLE_RETRY_MAX`].
fn unreachable_backoff(failures: u32) -> Duration {
    Duration::from_millis(250)
        .saturating_mul(1 << failures.saturating_sub(1).min(4))
        .min(UNREACHABLE_RETRY_MAX)
}

/// How a pool runs.
#[derive(Debug, Clone)]
pub struct WorkerSettings {
    /// Tasks this process runs at once.
    pub slots: usize,
    /// Caps across every process sharing the database. Its `sharing` is the least the
    /// pool uses: `Slots` turns to `EqualSteps` while the CPU is contended
    /// (`cpu_pressure`).
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
    /// How often the monitor looks for health checks that are due (each check has its
    /// own interval; this is the resolution).
    pub monitor_every: Duration,
    /// How long shutdown waits for running tasks before stopping them.
    pub shutdown_grace: Duration,
    /// Whose tasks (and health checks) the pool takes.
    pub scope: WorkerScope,
    /// How long the janitor keeps ended history (see [`janitor::HistoryRetention`]).
    pub history: janitor::HistoryRetention,
    /// How long the janitor keeps audit entries.
    pub audit: janitor::HistoryRetention,
}

impl Default for WorkerSettings {
    fn default() -> Self {
        Self {
            slots: 16,
            limits: ClaimLimits {
                max_running: Some(256),
                max_running_per_tenant: Some(64),
                sharing: Sharing::Slots,
            },
            lease: Duration::from_secs(30),
            heartbeat: Duration::from_secs(10),
            idle_poll: Duration::from_millis(500),
            janitor_every: Duration::from_secs(5),
            monitor_every: Duration::from_secs(2),
            shutdown_grace: Duration::from_secs(10),
            scope: WorkerScope::Shared,
            history: janitor::HistoryRetention::default(),
            audit: janitor::AUDIT_RETENTION_DEFAULT,
        }
    }
}

/// A running pool; [`WorkerPool::shutdown`] stops it.
#[derive(Debug)]
pub struct WorkerPool {
    wake: Arc<Notify>,
    /// Turns true once the janitor has re-adopted the nodes earlier processes made.
    adopted: watch::Receiver<bool>,
    stop: watch::Sender<bool>,
    loops: JoinSet<()>,
    grace: Duration,
    /// The lease owner this pool claims as, and where its leases are.
    id: String,
    queue: Queue,
}

impl WorkerPool {
    /// Starts a claimer for `settings.slots` tasks at once, and a janitor.
    pub fn start(executor: Executor, settings: WorkerSettings) -> Self {
        let wake = Arc::new(Notify::new());
        let (stop, stopped) = watch::channel(false);
        // One lease owner per pool: a lease names the process that holds it.
        let id = format!(
            "{}-{}",
            std::process::id(),
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        );
        let (adopted_tx, adopted) = watch::channel(false);
        let mut loops = JoinSet::new();
        let queue = executor.queue().clone();
        let claimer = Claimer {
            id: id.clone(),
            executor: executor.clone(),
            settings: settings.clone(),
            wake: wake.clone(),
            freed: Arc::new(Notify::new()),
            slots: Arc::new(Semaphore::new(settings.slots.max(1))),
            adopted: adopted.clone(),
            stopped: stopped.clone(),
        };
        loops.spawn(claimer.run());
        loops.spawn(crate::monitor::run(
            executor.clone(),
            settings.scope.clone(),
            settings.monitor_every,
            stopped.clone(),
        ));
        loops.spawn(provider_tests::run(
            executor.clone(),
            settings.scope.clone(),
            id.clone(),
            settings.idle_poll,
            wake.clone(),
            stopped.clone(),
        ));
        loops.spawn(janitor::run(
            executor,
            settings.scope.clone(),
            settings.janitor_every,
            janitor::Retentions {
                history: settings.history,
                audit: settings.audit,
            },
            wake.clone(),
            adopted_tx,
            stopped,
        ));
        tracing::info!(slots = settings.slots, worker = %id, scope = ?settings.scope, "worker pool started");
        Self {
            wake,
            adopted,
            stop,
            loops,
            grace: settings.shutdown_grace,
            id,
            queue,
        }
    }

    /// Wakes idle workers (call after submitting a job or asking for a provider test
    /// in this process).
    pub fn waker(&self) -> Arc<Notify> {
        self.wake.clone()
    }

    /// The lease owner id this pool claims tasks (and provider tests) as.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Waits until the pool has re-adopted the nodes earlier processes made, which it
    /// does before it claims its first task.
    pub async fn ready(&self) {
        let mut adopted = self.adopted.clone();
        // An error means the janitor is gone (the pool is stopping): nothing to wait for.
        let _ = adopted.wait_for(|done| *done).await;
    }

    /// Drains the pool: stops claiming, lets running tasks finish for the grace
    /// period, then stops the ones still running and hands their tasks back to the
    /// queue, so another pool runs them at once rather than after the lease timeout.
    pub async fn shutdown(mut self) -> Drained {
        let started = tokio::time::Instant::now();
        let _ = self.stop.send(true);
        self.wake.notify_waiters();
        let finished = tokio::time::timeout(self.grace, async {
            while self.loops.join_next().await.is_some() {}
        })
        .await;
        if finished.is_ok() {
            return Drained {
                handed_back: 0,
                took: started.elapsed(),
            };
        }
        tracing::warn!(
            grace = ?self.grace,
            "stopping the steps still running after the shutdown grace period"
        );
        // Dropping a step's future stops its remote command.
        self.loops.shutdown().await;
        let handed_back = match self.queue.release_leases(&self.id, now_ms()).await {
            Ok(released) => {
                for task in &released {
                    tracing::info!(task = %task.task_id, attempt = task.attempt, now = %task.task_state, "task handed back");
                }
                released.len()
            }
            Err(error) => {
                tracing::error!(%error, "handing tasks back failed; their leases will expire instead");
                0
            }
        };
        Drained {
            handed_back,
            took: started.elapsed(),
        }
    }
}

/// What a pool's shutdown did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drained {
    /// Tasks still running at the end of the grace period, handed back to the queue.
    pub handed_back: usize,
    /// From the shutdown call until the pool stopped.
    pub took: Duration,
}

/// A task's end on its way to the queue, holding the task's slot until recorded.
struct Finished {
    task: ClaimedTask,
    outcome: Outcome,
    _slot: OwnedSemaphorePermit,
}

/// The pool's claim loop: takes as many ready tasks as it has free slots in one
/// claim, runs each in its own task, and hands their ends to one recorder that
/// completes them in batches.
struct Claimer {
    id: String,
    executor: Executor,
    settings: WorkerSettings,
    /// Outside news: a job was submitted, or the janitor requeued tasks.
    wake: Arc<Notify>,
    /// Inside news: outcomes were recorded (slots free, successors may be ready).
    freed: Arc<Notify>,
    slots: Arc<Semaphore>,
    adopted: watch::Receiver<bool>,
    stopped: watch::Receiver<bool>,
}

impl Claimer {
    async fn run(mut self) {
        // Nothing runs before the nodes of earlier processes are re-adopted: a local
        // node's sshd may need restarting (after a reboot), and a task claimed first
        // would fail its attempt against it and wait out a retry.
        let mut stopping = self.stopped.clone();
        tokio::select! {
            _ = self.adopted.wait_for(|done| *done) => {}
            _ = stopping.wait_for(|stop| *stop) => return,
        }
        let lease_ms = millis(self.settings.lease);
        let (finished, ends) = mpsc::unbounded_channel();
        let (events, event_writer) = EventWriter::start(self.executor.queue().clone());
        let recorder = tokio::spawn(record_ends(
            self.executor.queue().clone(),
            events.clone(),
            ends,
            self.freed.clone(),
        ));
        let mut running = JoinSet::new();
        // Claims in a row that found the database away (see `unreachable_backoff`).
        let mut unreachable = 0;
        let mut cpu = cpu_pressure::CpuPressure::default();
        while !*self.stopped.borrow() {
            // Registered before the claim, so a submit during it is not missed.
            let woken = self.wake.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            let mut filled = false;
            if self.slots.available_permits() > 0 {
                // Counted once the claim's turn has come: slots freed meanwhile count.
                let mut room = 0;
                let free_slots = || {
                    room = self.slots.available_permits();
                    room
                };
                let claim_started = std::time::Instant::now();
                // Jobs share by running steps while this machine's CPU is contended.
                let limits = ClaimLimits {
                    sharing: cpu.sharing_now(self.settings.limits.sharing),
                    ..self.settings.limits
                };
                let claimed = self
                    .executor
                    .queue()
                    .claim_up_to_in(
                        &self.id,
                        lease_ms,
                        limits,
                        &self.settings.scope,
                        free_slots,
                        now_ms(),
                    )
                    .await;
                match claimed {
                    Ok(tasks) => {
                        unreachable = 0;
                        self.executor.store().reachability().answered();
                        crate::metrics::record_claim(tasks.len(), claim_started.elapsed());
                        filled = tasks.len() == room;
                        let started: Vec<NewEvent> = tasks
                            .iter()
                            .map(|task| {
                                state_event(task, TaskStateChange::started(task.attempt).text())
                            })
                            .collect();
                        // Not waited for: the leases run from now, and an outage
                        // must not hold the steps back while they do.
                        events.send(started);
                        for task in tasks {
                            let Ok(slot) = self.slots.clone().try_acquire_owned() else {
                                // Only this loop takes slots, so one is free per task.
                                tracing::error!(worker = %self.id, "no free slot for a claimed task");
                                break;
                            };
                            running.spawn(run_task(
                                self.executor.clone(),
                                events.clone(),
                                self.settings.clone(),
                                task,
                                slot,
                                finished.clone(),
                                self.freed.clone(),
                            ));
                        }
                    }
                    // Said once per outage (by whichever loop meets it first), then
                    // retried quietly, backing off.
                    Err(error) if error.is_unreachable() => {
                        unreachable += 1;
                        self.executor.store().reachability().lost(&error);
                    }
                    Err(error) => tracing::warn!(worker = %self.id, %error, "claim failed"),
                }
            }
            while running.try_join_next().is_some() {}
            let free = self.slots.available_permits();
            crate::metrics::record_slots(self.settings.slots.max(1).saturating_sub(free), free);
            if filled {
                // Every slot is taken now; the next pass waits for one to free up.
                continue;
            }
            if unreachable > 0 {
                // Nothing to claim until the database answers: no wake can change that.
                tokio::select! {
                    () = tokio::time::sleep(unreachable_backoff(unreachable)) => {}
                    _ = self.stopped.changed() => {}
                }
                continue;
            }
            tokio::select! {
                () = &mut woken => {}
                () = self.freed.notified() => {}
                () = tokio::time::sleep(self.settings.idle_poll) => {}
                _ = self.stopped.changed() => {}
            }
        }
        while running.join_next().await.is_some() {}
        drop((finished, events));
        let _ = recorder.await;
        let _ = event_writer.await;
    }
}

/// Completes ended tasks in batches: whatever ended while the previous batch was
/// being written goes into the next, so a batch never waits for company and a busy
/// pool still pays one transaction for many tasks.
async fn record_ends(
    queue: Queue,
    events: EventWriter,
    mut ends: mpsc::UnboundedReceiver<Finished>,
    freed: Arc<Notify>,
) {
    while let Some(first) = ends.recv().await {
        let mut batch = vec![first];
        while batch.len() < RECORD_BATCH {
            match ends.try_recv() {
                Ok(end) => batch.push(end),
                Err(_) => break,
            }
        }
        let entries: Vec<(Lease, Outcome)> = batch
            .iter()
            .map(|end| (end.task.lease(), end.outcome.clone()))
            .collect();
        match complete_until_recorded(&queue, &entries).await {
            Ok(answers) => {
                let verdicts: Vec<NewEvent> = batch
                    .iter()
                    .zip(answers)
                    .filter_map(|(end, answer)| report(end, answer))
                    .collect();
                events.write(verdicts).await;
            }
            // Nothing was recorded; the leases expire and the janitor takes it from there.
            Err(error) => {
                tracing::error!(tasks = batch.len(), %error, "recording outcomes failed");
            }
        }
        drop(batch);
        freed.notify_one();
    }
}

/// Completes `entries`, trying again for as long as the database does not answer: a
/// step that ended during an outage is recorded once it is back, not run again.
///
/// Safe however long that takes: the completion holds only while the lease is still
/// this worker's (the queue checks its owner and attempt), so if the janitor handed
/// the task to another worker meanwhile the answer is [`QueueError::LeaseLost`]; and
/// the step has ended, so it cannot overlap the next attempt. The slots of the batch
/// stay taken meanwhile, so this worker claims nothing more.
async fn complete_until_recorded(
    queue: &Queue,
    entries: &[(Lease, Outcome)],
) -> Result<Vec<Result<Completion, QueueError>>, QueueError> {
    let store = queue.store();
    let mut failures = 0;
    loop {
        match queue.complete_batch(entries, now_ms()).await {
            Err(error) if error.is_unreachable() => {
                failures += 1;
                store.reachability().lost(&error);
                tokio::time::sleep(unreachable_backoff(failures)).await;
            }
            answered => {
                if answered.is_ok() {
                    store.reachability().answered();
                }
                return answered;
            }
        }
    }
}

/// Logs a recorded (or refused) outcome; returns the verdict event of a recorded one.
fn report(end: &Finished, answer: Result<Completion, QueueError>) -> Option<NewEvent> {
    let task = &end.task;
    match answer {
        Ok(completion) => {
            tracing::info!(
                job = %task.job_id,
                task = task.number.0,
                state = %completion.task_state,
                job_state = %completion.job_state,
                "task ended"
            );
            let verdict = TaskStateChange {
                state: completion.task_state,
                detail: end.outcome.error.clone(),
            };
            Some(state_event(task, verdict.text()))
        }
        Err(QueueError::LeaseLost { .. }) => {
            tracing::warn!(job = %task.job_id, task = task.number.0, "lease lost before the outcome was recorded");
            None
        }
        Err(error) => {
            tracing::error!(job = %task.job_id, task = task.number.0, %error, "recording the outcome failed");
            None
        }
    }
}

/// Runs one claimed task to its end and hands the outcome to the recorder.
async fn run_task(
    executor: Executor,
    events: EventWriter,
    settings: WorkerSettings,
    task: ClaimedTask,
    slot: OwnedSemaphorePermit,
    finished: mpsc::UnboundedSender<Finished>,
    freed: Arc<Notify>,
) {
    let span = tracing::info_span!(
        "task",
        otel.name = format!("task {}", task.action.as_str()),
        outcome = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
        job = %task.job_id,
        task = task.number.0,
        node = task.node,
        action = task.action.as_str(),
        service = task.service.as_ref().map(|s| s.as_str()).unwrap_or(""),
        attempt = task.attempt,
    );
    // Instrumented, not entered: a guard held across awaits would leak the span into
    // whatever else this thread polls.
    async move {
        let (sender, receiver) = mpsc::channel(256);
        let recorder = tokio::spawn(output::record(
            events,
            task.job_id.clone(),
            task.task_id.clone(),
            task.attempt,
            receiver,
        ));
        let started = std::time::Instant::now();
        let ended = run_with_heartbeats(&executor, &settings, &task, sender).await;
        let took = started.elapsed();
        let captured = recorder.await.unwrap_or_default();
        let passed_over = matches!(&ended, Ended::Finished(Ok(step)) if step.passed_over);
        let (kind, exit_code, error) = match ended {
            Ended::Finished(Ok(step)) => (OutcomeKind::Succeeded, step.exit_code, None),
            Ended::Finished(Err(StepError::NotReady(reason))) => {
                (OutcomeKind::Deferred, None, Some(reason))
            }
            Ended::Finished(Err(error)) => {
                let exit_code = match &error {
                    StepError::Failed { exit_code, .. } => *exit_code,
                    _ => None,
                };
                (OutcomeKind::Failed, exit_code, Some(error.to_string()))
            }
            Ended::Stopped => {
                let stopped = Outcome::stopped();
                (stopped.kind, stopped.exit_code, stopped.error)
            }
            Ended::LeaseLost => {
                crate::metrics::record_attempt(task.action.as_str(), "lease_lost", took);
                tracing::Span::current().record("outcome", "lease_lost");
                tracing::warn!("lease lost while running; the queue has already moved on");
                drop(slot);
                freed.notify_one();
                return;
            }
        };
        crate::metrics::record_attempt(task.action.as_str(), kind.as_str(), took);
        let span = tracing::Span::current();
        span.record("outcome", kind.as_str());
        if kind == OutcomeKind::Failed {
            span.record("otel.status_code", "error");
        }
        let outcome = Outcome {
            kind,
            exit_code,
            stdout: captured.stdout,
            stderr: captured.stderr,
            error,
            passed_over,
        };
        let end = Finished {
            task,
            outcome,
            _slot: slot,
        };
        if finished.send(end).is_err() {
            tracing::error!("the outcome recorder is gone; the lease will expire instead");
        }
    }
    .instrument(span)
    .await;
}

/// Whether a worker whose last renewal was `since_renewal` ago must give its step up
/// although nobody told it the lease was lost: past `lease - heartbeat` the lease may
/// run out before another beat could get through, after which the janitor hands the
/// task to another worker, and two copies of one step must never run at once.
fn must_fence(since_renewal: Duration, settings: &WorkerSettings) -> bool {
    since_renewal >= settings.lease.saturating_sub(settings.heartbeat)
}

/// Runs the step while heartbeating; the step is dropped (and its remote command
/// killed) when the job is cancelled or the lease is lost, or when heartbeats have
/// failed for so long that the lease may have run out (see [`must_fence`]).
async fn run_with_heartbeats(
    executor: &Executor,
    settings: &WorkerSettings,
    task: &ClaimedTask,
    output: mpsc::Sender<crate::ssh::OutputChunk>,
) -> Ended {
    let queue = executor.queue();
    let store = queue.store();
    let lease = task.lease();
    let lease_ms = millis(settings.lease);
    run_while_leased(executor.run(task, &output), settings, || async {
        let beat = queue.heartbeat(&lease, lease_ms, now_ms()).await;
        match &beat {
            Ok(_) => store.reachability().answered(),
            Err(error) if error.is_unreachable() => store.reachability().lost(error),
            Err(_) => {}
        }
        beat
    })
    .await
}

/// Polls `step` and the heartbeats side by side until one of them ends the task.
///
/// The two must be polled concurrently, never one inside the other's turn: a step
/// that holds SQLite's write turn while it awaits its connection would otherwise
/// wait for a heartbeat that waits for the same turn (a `select!` branch body that
/// awaits a beat stops polling the step), and the worker froze every write.
async fn run_while_leased<Beat>(
    step: impl std::future::Future<Output = Result<crate::execute::StepOutcome, StepError>>,
    settings: &WorkerSettings,
    mut heartbeat: impl FnMut() -> Beat,
) -> Ended
where
    Beat: std::future::Future<Output = Result<Heartbeat, QueueError>>,
{
    let keep_lease = async {
        let mut beat = tokio::time::interval(settings.heartbeat);
        beat.tick().await;
        let mut renewed_at = tokio::time::Instant::now();
        loop {
            beat.tick().await;
            let asked_at = tokio::time::Instant::now();
            // A beat that hangs (waiting for a connection to a database that went
            // away) must not hold the step past the point where it would fence.
            let fence_at = renewed_at + settings.lease.saturating_sub(settings.heartbeat);
            let Ok(answer) = tokio::time::timeout_at(fence_at, heartbeat()).await else {
                tracing::error!("no heartbeat got through in time; giving the step up before its lease runs out");
                return Ended::LeaseLost;
            };
            match answer {
                Ok(Heartbeat::Continue { .. }) => renewed_at = asked_at,
                Ok(Heartbeat::Stop { .. }) => return Ended::Stopped,
                Err(QueueError::LeaseLost { .. }) => return Ended::LeaseLost,
                // A database hiccup: keep running while the next beat may still
                // get through before the lease runs out; after that, fence.
                Err(error) if must_fence(renewed_at.elapsed(), settings) => {
                    tracing::error!(%error, "heartbeats keep failing; giving the step up before its lease runs out");
                    return Ended::LeaseLost;
                }
                // Said once per outage by the beat itself.
                Err(error) if error.is_unreachable() => {}
                Err(error) => tracing::warn!(%error, "heartbeat failed"),
            }
        }
    };
    tokio::select! {
        result = step => Ended::Finished(result),
        ended = keep_lease => ended,
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

/// A `state` event of the task.
fn state_event(task: &ClaimedTask, data: String) -> NewEvent {
    NewEvent {
        job_id: task.job_id.clone(),
        task_id: Some(task.task_id.clone()),
        attempt: Some(task.attempt),
        kind: EventKind::State,
        stream: None,
        data,
    }
}

/// Waits `every`, or less when `stopped` changes: a periodic loop's next turn, which
/// is false once the process is stopping (`while next_turn(..).await { .. }`).
pub(crate) async fn next_turn(every: Duration, stopped: &mut watch::Receiver<bool>) -> bool {
    tokio::select! {
        () = tokio::time::sleep(every) => {}
        _ = stopped.changed() => {}
    }
    !*stopped.borrow()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The regression behind a frozen worker: the step holds a lock (as a write holds
    /// SQLite's turn) across several heartbeat ticks and each heartbeat wants the same
    /// lock. Run one inside the other and neither ever finishes; side by side, the
    /// beats wait their turn and the step ends.
    #[tokio::test(start_paused = true)]
    async fn a_step_holding_the_write_turn_across_beats_still_ends() {
        // A lease long enough that the waiting beat is not yet past the point where
        // it fences the step (`lease - heartbeat`, 50 s; the step ends at 25 s).
        let settings = WorkerSettings {
            lease: Duration::from_secs(60),
            heartbeat: Duration::from_secs(10),
            ..WorkerSettings::default()
        };
        let turn = Arc::new(tokio::sync::Mutex::new(()));
        let beats = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let step = {
            let turn = turn.clone();
            async move {
                let _held = turn.lock().await;
                tokio::time::sleep(Duration::from_secs(25)).await;
                Ok(crate::execute::StepOutcome::ran(Some(0)))
            }
        };
        let ended = tokio::time::timeout(
            Duration::from_secs(3600),
            run_while_leased(step, &settings, || {
                let turn = turn.clone();
                let beats = beats.clone();
                async move {
                    let _held = turn.lock().await;
                    beats.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    Ok(Heartbeat::Continue {
                        lease_expires_ms: 0,
                    })
                }
            }),
        )
        .await
        .expect("the step and its heartbeats deadlocked");
        assert!(matches!(ended, Ended::Finished(Ok(_))));
        assert_eq!(
            beats.load(std::sync::atomic::Ordering::SeqCst),
            0,
            "beats waited for the step's turn"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_cancelled_job_stops_the_step_at_the_next_beat() {
        let settings = WorkerSettings {
            lease: Duration::from_secs(30),
            heartbeat: Duration::from_secs(10),
            ..WorkerSettings::default()
        };
        let started = tokio::time::Instant::now();
        let ended = run_while_leased(std::future::pending(), &settings, || async {
            Ok(Heartbeat::Stop {
                lease_expires_ms: 0,
            })
        })
        .await;
        assert!(matches!(ended, Ended::Stopped));
        assert_eq!(started.elapsed(), Duration::from_secs(10));
    }

    /// A beat that never answers (its connection waits on a database that went away)
    /// still fences the step in time: at `lease - heartbeat` after the last renewal,
    /// not whenever the beat gives up.
    #[tokio::test(start_paused = true)]
    async fn a_hanging_heartbeat_still_fences_the_step_in_time() {
        let settings = WorkerSettings {
            lease: Duration::from_secs(30),
            heartbeat: Duration::from_secs(10),
            ..WorkerSettings::default()
        };
        let started = tokio::time::Instant::now();
        let ended = run_while_leased(std::future::pending(), &settings, || {
            std::future::pending::<Result<Heartbeat, QueueError>>()
        })
        .await;
        assert!(matches!(ended, Ended::LeaseLost));
        assert_eq!(started.elapsed(), Duration::from_secs(20));
    }

    #[test]
    fn retries_while_the_database_is_away_back_off_to_a_ceiling() {
        let waits: Vec<u128> = (1..=8)
            .map(|failures| unreachable_backoff(failures).as_millis())
            .collect();
        assert_eq!(waits, [250, 500, 1000, 2000, 2000, 2000, 2000, 2000]);
        assert_eq!(unreachable_backoff(u32::MAX), UNREACHABLE_RETRY_MAX);
    }

    #[test]
    fn a_worker_fences_itself_before_its_lease_can_run_out() {
        let settings = WorkerSettings {
            lease: Duration::from_secs(30),
            heartbeat: Duration::from_secs(10),
            ..WorkerSettings::default()
        };
        assert!(
            !must_fence(Duration::from_secs(10), &settings),
            "one lost beat is harmless"
        );
        assert!(!must_fence(Duration::from_secs(19), &settings));
        assert!(
            must_fence(Duration::from_secs(20), &settings),
            "the next beat would come after the lease ended"
        );
    }
}
