//! `scaleout`: task throughput of 1 and of 2 `corral worker` processes sharing one
//! PostgreSQL database, on a fan-out whose nodes are not the bottleneck.
//!
//! N local nodes are made first (not timed) by an in-process pool. Then, for each
//! worker count, that many `corral worker` processes (the binary next to this one, or
//! `CORRAL_BIN`) with 20 slots each are started against the database and the nodes'
//! directory; a warm-up round (a start job of a step that waits a second on every
//! node) lets them re-adopt the nodes and open their SSH sessions, and the next round
//! is timed: submit → claims through the queue → SSH → recorded results → job seen
//! done. With a step that only waits, each worker's slots are what bounds the round,
//! so two workers should come close to twice one's rate; what is lost is the queue's
//! and the database's share.
//!
//! Prints one line per worker count: `scaleout workers= tasks_per_s= ...`, the second
//! with `speedup=` against the first (the baseline, measured in the same run).

use std::path::Path;
use std::time::{Duration, Instant};

use engine::queue::Queue;
use engine::store::{Backend, Store};
use engine::testing::TestDatabase;
use engine::worker::WorkerSettings;

use crate::fanout::{self, Engine, Options};
use crate::BenchError;

/// 20, not the default 16, so that the 200-task round is whole waves of steps for one
/// worker (10 waves) and for two (5): with 16 the last wave is partial (13 against 7,
/// an ideal ratio of 1.86 instead of 2), and the ratio measured that rounding more
/// than the queue.
const SLOTS_PER_WORKER: usize = 20;
const ROUND_LIMIT: Duration = Duration::from_secs(300);

pub fn run(options: Options) -> Result<String, BenchError> {
    let corral = crate::corral_binary()?;
    crate::run_in_scratch_dir("corral-scaleout-", |base| async move {
        scaleout(&base, &corral, options.nodes).await
    })
}

async fn scaleout(base: &Path, corral: &Path, nodes: usize) -> Result<String, BenchError> {
    let db = TestDatabase::new(Backend::Postgres).await;
    let store = Store::open(&db.url).await?;
    let queue = Queue::new(store.clone());
    let engine = Engine::with_catalog(queue.clone(), base).await?;
    let started = Instant::now();
    let provisioning = engine.start(WorkerSettings::default());
    let cluster_id = fanout::create(&provisioning, "scaleout", nodes).await?;
    provisioning.pool.shutdown().await;
    eprintln!(
        "scaleout: {nodes} nodes up in {:.1} s; measuring",
        started.elapsed().as_secs_f64()
    );

    let mut lines = Vec::new();
    let mut baseline = None;
    for workers in [1, 2] {
        let processes = Workers::start(corral, base, &db.url.redacted(), workers)?;
        let warm_up = round(&queue, &cluster_id).await?;
        let timed = round(&queue, &cluster_id).await?;
        drop(processes);
        let tasks_per_s = nodes as f64 / timed.as_secs_f64();
        eprintln!(
            "scaleout: {workers} worker(s): warm-up {:.1} s, timed {:.1} s",
            warm_up.as_secs_f64(),
            timed.as_secs_f64()
        );
        let mut line = format!(
            "scaleout workers={workers} tasks_per_s={tasks_per_s:.1} nodes={nodes} \
             slots_per_worker={SLOTS_PER_WORKER} step_s=1 round_s={:.2}",
            timed.as_secs_f64()
        );
        match baseline {
            None => baseline = Some(tasks_per_s),
            Some(one) => line.push_str(&format!(
                " baseline_tasks_per_s={one:.1} speedup={:.2}",
                tasks_per_s / one
            )),
        }
        lines.push(line);
    }
    store.close().await;
    drop(db);
    Ok(lines.join("\n"))
}

/// One start job of the `pause` step on every node, until it is recorded as done.
async fn round(queue: &Queue, cluster_id: &str) -> Result<Duration, BenchError> {
    let started = Instant::now();
    let job = fanout::start_service(queue, cluster_id, "pause").await?;
    fanout::wait_for(queue, &job, ROUND_LIMIT).await?;
    Ok(started.elapsed())
}

/// Running `corral worker` processes; dropping them stops them (SIGTERM, then they
/// drain: no task is running between rounds). The nodes stay: the next round uses them.
struct Workers(Vec<::served::Served>);

impl Workers {
    fn start(corral: &Path, base: &Path, url: &str, count: usize) -> Result<Self, BenchError> {
        let mut workers = Workers(Vec::new());
        for index in 0..count {
            let worker = ::served::Options::worker(corral, base)
                .name(format!("worker-{index}"))
                .worker_slots(SLOTS_PER_WORKER)
                .database_url(url)
                .keep_nodes()
                .start()
                .map_err(crate::served::failed)?;
            workers.0.push(worker);
        }
        Ok(workers)
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        for worker in &mut self.0 {
            let _ = worker.terminate();
        }
    }
}
