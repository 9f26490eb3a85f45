//! `queue`: how many no-op tasks a second the durable queue moves with two workers,
//! batched (what the worker pool does) against the one-task-per-transaction path.
//!
//! Each run gets a fresh database (a SQLite file in a temp dir, or a new PostgreSQL
//! database on the project's server, dropped afterwards) holding jobs of independent
//! tasks spread over many nodes, so the one-task-per-node rule leaves plenty to claim.
//! Workers claim and complete with no work in between: what is measured is the queue.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, Notify, OwnedSemaphorePermit, Semaphore};

use domain::plan::TaskDag;
use engine::queue::{ClaimLimits, ClaimedTask, Outcome, Queue, SubmitOptions};
use engine::store::tenants::DEFAULT_TENANT_ID;
use engine::store::{now_ms, Backend, Store};
use engine::testing::TestDatabase;
use engine::worker::WorkerSettings;

use crate::BenchError;

const WORKERS: usize = 2;
/// Tasks each worker holds at once: together within the default per-tenant limit.
const SLOTS: usize = 32;
/// One job (and cluster) per this many tasks.
const TASKS_PER_JOB: usize = 2_000;
/// Node numbers per job; a node's tasks run one at a time.
const NODES_PER_JOB: usize = 250;
/// The one-task-per-transaction baseline runs this fraction of the tasks (it is slow).
const BASELINE_DIVISOR: usize = 10;
const LEASE_MS: i64 = 60_000;
/// A worker that finds nothing to claim waits at most this long for news.
const IDLE: Duration = Duration::from_millis(1);

#[derive(Debug)]
pub struct Options {
    backend: Backend,
    tasks: usize,
}

impl Options {
    pub fn parse(args: &[String]) -> Result<Self, BenchError> {
        let mut options = Options {
            backend: Backend::Sqlite,
            tasks: 20_000,
        };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--backend" => {
                    options.backend = match args.next().map(String::as_str) {
                        Some("sqlite") => Backend::Sqlite,
                        Some("postgres") => Backend::Postgres,
                        _ => {
                            return Err(BenchError::Usage(
                                "--backend needs sqlite or postgres".to_owned(),
                            ))
                        }
                    }
                }
                "--tasks" => {
                    options.tasks = args
                        .next()
                        .and_then(|value| value.parse().ok())
                        .filter(|count| *count > 0)
                        .ok_or_else(|| {
                            BenchError::Usage("--tasks needs a positive number".to_owned())
                        })?;
                }
                other => return Err(BenchError::Usage(format!("unknown argument {other:?}"))),
            }
        }
        Ok(options)
    }
}

pub fn run(options: Options) -> Result<String, BenchError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let tasks = options.tasks;
        let batched = measure(options.backend, tasks, Mode::Batched).await?;
        let baseline_tasks = (tasks / BASELINE_DIVISOR).max(1);
        let baseline = measure(options.backend, baseline_tasks, Mode::OneByOne).await?;
        Ok(format!(
            "queue backend={} tasks={tasks} workers={WORKERS} tasks_per_s={batched:.0} \
             baseline_tasks_per_s={baseline:.0} ratio={:.1}",
            match options.backend {
                Backend::Sqlite => "sqlite",
                Backend::Postgres => "postgres",
            },
            batched / baseline,
        ))
    })
}

#[derive(Debug, Clone, Copy)]
enum Mode {
    /// As the worker pool: `claim_batch` up to the free slots while `complete_batch`
    /// records what ended.
    Batched,
    /// `claim` and `complete`, one task per transaction each.
    OneByOne,
}

/// Tasks per second for `tasks` no-op tasks on a fresh database.
async fn measure(backend: Backend, tasks: usize, mode: Mode) -> Result<f64, BenchError> {
    let db = TestDatabase::new(backend).await;
    let queue = Queue::new(Store::open(&db.url).await?);
    submit_jobs(&queue, tasks).await?;

    let done = Arc::new(AtomicUsize::new(0));
    let limits = WorkerSettings::default().limits;
    let started = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for worker in 0..WORKERS {
        let worker = BenchWorker {
            queue: queue.clone(),
            id: format!("bench-{worker}"),
            limits,
            tasks,
            done: done.clone(),
        };
        match mode {
            Mode::Batched => workers.spawn(worker.pool()),
            Mode::OneByOne => workers.spawn(worker.one_by_one()),
        };
    }
    while let Some(joined) = workers.join_next().await {
        joined.map_err(|error| BenchError::Failed(format!("a worker died: {error}")))??;
    }
    let seconds = started.elapsed().as_secs_f64();
    queue.store().close().await;
    drop(db);
    Ok(tasks as f64 / seconds)
}

/// One of the benchmark's workers: until `done` reaches `tasks`, it claims as `id`
/// within `limits` and completes what it claimed.
struct BenchWorker {
    queue: Queue,
    id: String,
    limits: ClaimLimits,
    tasks: usize,
    done: Arc<AtomicUsize>,
}

impl BenchWorker {
    /// A worker as the pool runs one: a claimer taking up to its free slots at once, and a
    /// recorder completing whatever finished while it wrote the previous batch.
    async fn pool(self) -> Result<(), BenchError> {
        let BenchWorker {
            queue,
            id,
            limits,
            tasks,
            done,
        } = self;
        let slots = Arc::new(Semaphore::new(SLOTS));
        let freed = Arc::new(Notify::new());
        let (finished, mut ends) = mpsc::unbounded_channel::<(ClaimedTask, OwnedSemaphorePermit)>();
        let recorder = {
            let (queue, freed, done) = (queue.clone(), freed.clone(), done.clone());
            tokio::spawn(async move {
                while let Some(first) = ends.recv().await {
                    let mut batch = vec![first];
                    while let Ok(end) = ends.try_recv() {
                        batch.push(end);
                    }
                    let entries: Vec<_> = batch
                        .iter()
                        .map(|(task, _)| (task.lease(), Outcome::succeeded()))
                        .collect();
                    for answer in queue.complete_batch(&entries, now_ms()).await? {
                        answer?;
                    }
                    done.fetch_add(batch.len(), Ordering::SeqCst);
                    drop(batch);
                    freed.notify_one();
                }
                Ok::<_, BenchError>(())
            })
        };
        'claiming: while done.load(Ordering::SeqCst) < tasks && !recorder.is_finished() {
            let claimed = if slots.available_permits() > 0 {
                let free_slots = || slots.available_permits();
                queue
                    .claim_up_to(&id, LEASE_MS, limits, free_slots, now_ms())
                    .await?
            } else {
                Vec::new()
            };
            if claimed.is_empty() {
                // Wait for slots or successors, or for the other worker to finish the rest.
                let _ = tokio::time::timeout(IDLE, freed.notified()).await;
                continue;
            }
            for task in claimed {
                let slot = slots
                    .clone()
                    .try_acquire_owned()
                    .map_err(|error| BenchError::Failed(format!("slot: {error}")))?;
                // The task's "work" is nothing: it ends as soon as it is claimed.
                if finished.send((task, slot)).is_err() {
                    // The recorder stopped on an error, which it returns below.
                    break 'claiming;
                }
            }
        }
        drop(finished);
        recorder
            .await
            .map_err(|error| BenchError::Failed(format!("the recorder died: {error}")))?
    }

    /// A worker on the one-task-per-transaction path: claim one, complete it, repeat.
    async fn one_by_one(self) -> Result<(), BenchError> {
        while self.done.load(Ordering::SeqCst) < self.tasks {
            let claimed = self
                .queue
                .claim(&self.id, LEASE_MS, self.limits, now_ms())
                .await?;
            let Some(task) = claimed else {
                tokio::time::sleep(IDLE).await;
                continue;
            };
            self.queue
                .complete(&task.lease(), &Outcome::succeeded(), now_ms())
                .await?;
            self.done.fetch_add(1, Ordering::SeqCst);
        }
        Ok(())
    }
}

/// Jobs of independent tasks, each on its own cluster, numbered so neighbours in
/// claim order sit on different nodes.
async fn submit_jobs(queue: &Queue, tasks: usize) -> Result<(), BenchError> {
    let mut left = tasks;
    let mut job = 0;
    while left > 0 {
        let size = left.min(TASKS_PER_JOB);
        left -= size;
        let cluster = queue
            .store()
            .create_cluster(
                &engine::testing::bare_cluster(DEFAULT_TENANT_ID, &format!("bench-{job}")),
                now_ms(),
            )
            .await?;
        let plan: Vec<serde_json::Value> = (0..size)
            .map(|id| {
                serde_json::json!({
                    "id": id, "node": 1000 + id % NODES_PER_JOB, "service": null,
                    "action": "install", "after": [], "stage": 0,
                })
            })
            .collect();
        let dag: TaskDag = serde_json::from_value(serde_json::json!({ "tasks": plan }))
            .map_err(|error| BenchError::Failed(format!("bench plan: {error}")))?;
        queue
            .submit_job(
                DEFAULT_TENANT_ID,
                &cluster.id,
                // Install steps on existing nodes: what an add-services job runs.
                api_types::Operation::AddServices,
                &dag,
                &SubmitOptions::default(),
                now_ms(),
            )
            .await?;
        job += 1;
    }
    Ok(())
}
