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

use domain::plan::TaskDag;
use engine::queue::{self, ClaimLimits, Outcome, SubmitOptions};
use engine::store::clusters::NewCluster;
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
/// A worker that finds nothing to claim waits this long (the other one holds the rest).
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
    /// `claim_batch` up to the free slots, then `complete_batch`.
    Batched,
    /// `claim` and `complete`, one task per transaction each.
    OneByOne,
}

/// Tasks per second for `tasks` no-op tasks on a fresh database.
async fn measure(backend: Backend, tasks: usize, mode: Mode) -> Result<f64, BenchError> {
    let db = TestDatabase::new(backend).await;
    let store = Store::open(&db.url).await?;
    submit_jobs(&store, tasks).await?;

    let done = Arc::new(AtomicUsize::new(0));
    let limits = WorkerSettings::default().limits;
    let started = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for worker in 0..WORKERS {
        let (store, done) = (store.clone(), done.clone());
        let id = format!("bench-{worker}");
        workers.spawn(async move {
            while done.load(Ordering::SeqCst) < tasks {
                let finished = match mode {
                    Mode::Batched => batch(&store, &id, limits).await?,
                    Mode::OneByOne => one(&store, &id, limits).await?,
                };
                if finished == 0 {
                    tokio::time::sleep(IDLE).await;
                }
                done.fetch_add(finished, Ordering::SeqCst);
            }
            Ok::<_, BenchError>(())
        });
    }
    while let Some(joined) = workers.join_next().await {
        joined.map_err(|error| BenchError::Failed(format!("a worker died: {error}")))??;
    }
    let seconds = started.elapsed().as_secs_f64();
    store.close().await;
    drop(db);
    Ok(tasks as f64 / seconds)
}

async fn batch(store: &Store, id: &str, limits: ClaimLimits) -> Result<usize, BenchError> {
    let claimed = queue::claim_batch(store, id, LEASE_MS, limits, SLOTS, now_ms()).await?;
    if claimed.is_empty() {
        return Ok(0);
    }
    let finished: Vec<_> = claimed
        .iter()
        .map(|task| (task.lease(), Outcome::succeeded()))
        .collect();
    for answer in queue::complete_batch(store, &finished, now_ms()).await? {
        answer?;
    }
    Ok(claimed.len())
}

async fn one(store: &Store, id: &str, limits: ClaimLimits) -> Result<usize, BenchError> {
    let Some(task) = queue::claim(store, id, LEASE_MS, limits, now_ms()).await? else {
        return Ok(0);
    };
    queue::complete(store, &task.lease(), &Outcome::succeeded(), now_ms()).await?;
    Ok(1)
}

/// Jobs of independent tasks, each on its own cluster, numbered so neighbours in
/// claim order sit on different nodes.
async fn submit_jobs(store: &Store, tasks: usize) -> Result<(), BenchError> {
    let mut left = tasks;
    let mut job = 0;
    while left > 0 {
        let size = left.min(TASKS_PER_JOB);
        left -= size;
        let cluster = store
            .create_cluster(
                &NewCluster {
                    tenant_id: DEFAULT_TENANT_ID.into(),
                    name: format!("bench-{job}"),
                    template_name: "bench".into(),
                    template_version: 1,
                    template_json: "{}".into(),
                    owner_id: None,
                    state: "pending".into(),
                    layout_json: "{}".into(),
                    config_json: "{}".into(),
                    catalog_json: "{}".into(),
                    provider: "local".into(),
                    lease_expires_ms: None,
                },
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
        queue::submit_job(
            store,
            DEFAULT_TENANT_ID,
            &cluster.id,
            "bench",
            &dag,
            &SubmitOptions::default(),
            now_ms(),
        )
        .await?;
        job += 1;
    }
    Ok(())
}
