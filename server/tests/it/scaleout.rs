//! Scale-out under failure: two `corral serve` and two `corral worker` processes share
//! one PostgreSQL database and one host's local nodes. A 30-node create is submitted
//! through the first server's API, and while it runs one process at a time (the
//! submitter first, then any, chosen at random) is killed with SIGKILL and started
//! again. The job must finish with every task succeeded exactly once, no two attempts
//! overlapping on one node (nor of one task), and every node made once.
//!
//! `CORRAL_CHAOS_RUNS=N` repeats the whole run N times (default 1); each run prints
//! `scaleout-chaos run= seed= kills= tasks= attempts= retried= overlaps=0`. A run's
//! kill order comes from its seed, which `CORRAL_CHAOS_SEED` fixes to replay one.

use std::time::{Duration, Instant};

use engine::accounts::{create_user, Password};
use engine::queue::{JobId, JobState, Queue};
use engine::store::users::Role as UserRole;
use engine::store::{Backend, Store};
use engine::testing::TestDatabase;
use serde_json::{json, Value};

use crate::support::chaos::{check_attempt_log, wait_for_end, wait_for_progress, Process, Role};
use crate::support::{lifecycle, one_heavy_test_at_a_time, test_server};

const NODES: u32 = 30;
/// How far the create has come at each kill.
const KILL_AT: [f64; 6] = [0.1, 0.25, 0.4, 0.55, 0.7, 0.85];
const PASSWORD: &str = "chaos is a ladder, they say";

/// A small deterministic generator (xorshift64*), so a seed replays a run.
struct Dice(u64);

impl Dice {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let roll = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        usize::try_from(roll % n as u64).unwrap()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn processes_killed_at_random_lose_no_task() {
    // First, so that it is dropped last (see `one_heavy_test_at_a_time`).
    let _heavy = one_heavy_test_at_a_time().await;
    let runs: usize = std::env::var("CORRAL_CHAOS_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(1);
    for run in 1..=runs {
        let seed = std::env::var("CORRAL_CHAOS_SEED")
            .ok()
            .and_then(|seed| seed.parse().ok())
            .unwrap_or_else(|| {
                u64::try_from(
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .unwrap()
                        .as_nanos()
                        % u128::from(u64::MAX),
                )
                .unwrap()
                    | 1
            });
        one_run(run, seed).await;
    }
}

async fn one_run(run: usize, seed: u64) {
    let started = Instant::now();
    let mut dice = Dice(seed);
    let db = TestDatabase::new(Backend::Postgres).await;
    let data = tempfile::Builder::new()
        .prefix("corral-scaleout-")
        .tempdir()
        .unwrap();
    let data_dir = data.path().canonicalize().unwrap();
    let store = Store::open(&db.url).await.unwrap();
    let queue = Queue::new(store.clone());
    lifecycle::seed(&store, &data_dir, &lifecycle::catalog()).await;
    create_user(
        &store,
        "chaos",
        UserRole::TenantAdmin,
        None,
        &Password::new(PASSWORD),
    )
    .await
    .unwrap();
    let mut processes = vec![
        Process::new("serve-a", Role::Serve, data_dir.clone(), db.url.clone()),
        Process::new("serve-b", Role::Serve, data_dir.clone(), db.url.clone()),
        Process::new("worker-c", Role::Worker, data_dir.clone(), db.url.clone()),
        Process::new("worker-d", Role::Worker, data_dir.clone(), db.url.clone()),
    ];
    for process in &mut processes {
        process.start();
    }

    let job_id = submit_through_api(processes[0].url().unwrap()).await;
    let mut kills = Vec::new();
    for (index, fraction) in KILL_AT.into_iter().enumerate() {
        wait_for_progress(&queue, &job_id, fraction).await;
        // The submitter goes first: the job must not depend on who took it in.
        let victim = if index == 0 {
            0
        } else {
            dice.below(processes.len())
        };
        processes[victim].kill();
        kills.push(processes[victim].name.clone());
        // Back after a moment, or at once: it re-adopts the nodes it made.
        let pause = Duration::from_millis(u64::try_from(dice.below(1000)).unwrap());
        tokio::time::sleep(pause).await;
        processes[victim].start();
    }
    assert_eq!(wait_for_end(&queue, &job_id).await, JobState::Succeeded);
    let (tasks, attempts) = check_attempt_log(&queue, &job_id).await;
    let job = queue.job(&job_id).await.unwrap();
    assert_eq!(
        store.list_nodes(&job.cluster_id).await.unwrap().len(),
        NODES as usize
    );
    println!(
        "scaleout-chaos run={run} seed={seed} kills={} tasks={tasks} attempts={attempts} \
         retried={} overlaps=0 seconds={:.1} killed={}",
        kills.len(),
        attempts - tasks,
        started.elapsed().as_secs_f64(),
        kills.join(",")
    );
    drop(processes);
    store.close().await;
    drop(data);
}

/// Creates the cluster through the server's API as a tenant admin would; the job id.
async fn submit_through_api(base: &str) -> JobId {
    let base = base.trim_end_matches('/');
    let (client, csrf) = test_server::sign_in(base, "chaos", PASSWORD).await;
    let created = client
        .post(format!("{base}/api/v1/clusters"))
        .header("x-csrf-token", csrf)
        .json(&json!({"name": "chaos", "template": "lifecycle", "size": NODES}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let created: Value = created.json().await.unwrap();
    JobId::from(created["job_id"].as_str().unwrap())
}
