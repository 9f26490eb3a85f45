//! Corral processes a test kills with SIGKILL and starts again, and the checks that
//! nothing was lost or run twice meanwhile: the crash and scale-out tests.

#![allow(dead_code)] // Each test binary uses what it needs.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use engine::provider::LocalProvider;
use engine::queue::{self, JobState, TaskState};
use engine::store::{DatabaseUrl, Store};

const CORRAL: &str = env!("CARGO_BIN_EXE_corral");

/// What a process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `corral serve`: pages, API and workers.
    Serve,
    /// `corral worker`: workers only.
    Worker,
}

/// A `corral serve` or `corral worker` over the test's data directory and database,
/// with 8 task slots and 3-second leases (a killed process's tasks come back soon).
pub struct Process {
    pub name: String,
    role: Role,
    child: Option<Child>,
    data: PathBuf,
    url: DatabaseUrl,
    starts: usize,
    /// Where a running `serve` answers (`http://127.0.0.1:PORT/`).
    pub http: Option<String>,
    /// Extra environment of every start.
    env: Vec<(String, String)>,
    /// `--worker-lease-secs` of every start.
    lease_secs: u64,
}

impl Process {
    pub fn new(name: &str, role: Role, data: PathBuf, url: DatabaseUrl) -> Self {
        Self {
            name: name.to_owned(),
            role,
            child: None,
            data,
            url,
            starts: 0,
            http: None,
            env: Vec::new(),
            lease_secs: 3,
        }
    }

    /// This process, with task leases of `secs` seconds (3 by default).
    pub fn with_lease_secs(mut self, secs: u64) -> Self {
        self.lease_secs = secs;
        self
    }

    /// The log of the process's latest start.
    pub fn latest_log(&self) -> PathBuf {
        self.log(self.starts)
    }

    /// This process, started with `name=value` in its environment.
    pub fn with_env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.to_owned(), value.to_owned()));
        self
    }

    fn log(&self, start: usize) -> PathBuf {
        self.data.join(format!("{}-{start}.log", self.name))
    }

    /// Starts the process and waits until it says it runs.
    pub fn start(&mut self) {
        self.starts += 1;
        let log = File::create(self.log(self.starts)).unwrap();
        let mut command = Command::new(CORRAL);
        match self.role {
            Role::Serve => command.args(["serve", "--listen", "127.0.0.1:0"]),
            Role::Worker => command.arg("worker"),
        };
        let mut child = command
            .args(["--worker-slots", "8", "--worker-lease-secs"])
            .arg(self.lease_secs.to_string())
            .arg("--data-dir")
            .arg(&self.data)
            .arg("--database-url")
            // Test databases have no password, so the redacted form is the URL itself.
            .arg(self.url.redacted())
            .envs(self.env.iter().map(|(name, value)| (name, value)))
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .unwrap();
        let ready = match self.role {
            Role::Serve => "Corral is running at ",
            Role::Worker => "Corral worker running",
        };
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut running = false;
        for line in stdout.lines() {
            let line = line.unwrap();
            if let Some(rest) = line.strip_prefix(ready) {
                if self.role == Role::Serve {
                    self.http = Some(rest.trim().to_owned());
                }
                running = true;
                break;
            }
        }
        if !running {
            let status = child.wait().unwrap();
            panic!(
                "{} start {} ended before it was running: {status}",
                self.name, self.starts
            );
        }
        self.child = Some(child);
    }

    /// SIGKILL: no shutdown code runs, leases are left to expire.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
        self.http = None;
    }

    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
        // Nodes are shared by the processes of one data directory: whichever goes
        // first stops them (a later call finds none).
        LocalProvider::kill_everything_under(&self.data.join("nodes"));
        if std::thread::panicking() {
            for start in 1..=self.starts {
                let log = std::fs::read_to_string(self.log(start)).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(40).collect();
                eprintln!("--- {} start {start} (last lines) ---", self.name);
                for line in tail.into_iter().rev() {
                    eprintln!("{line}");
                }
            }
        }
    }
}

pub async fn wait_for_progress(store: &Store, job_id: &str, fraction: f64) {
    let started = Instant::now();
    loop {
        let job = queue::job(store, job_id).await.unwrap();
        let done = job.tasks_succeeded as f64 / job.tasks_total.max(1) as f64;
        if done >= fraction || !job.state.is_active() {
            return;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let pending: Vec<String> = queue::job_tasks(store, job_id)
                .await
                .unwrap()
                .into_iter()
                .filter(|task| task.state != TaskState::Succeeded)
                .map(|task| {
                    format!(
                        "{}-{}-{:?}: {} attempts={} lease={:?} not_before={} error={:?}",
                        task.node,
                        task.action,
                        task.service,
                        task.state,
                        task.attempts,
                        task.lease_owner,
                        task.not_before_ms,
                        task.error
                    )
                })
                .collect();
            panic!("no progress: {job:?}\n{}", pending.join("\n"));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub async fn wait_for_end(store: &Store, job_id: &str) -> JobState {
    wait_for_end_within(store, job_id, Duration::from_secs(240)).await
}

pub async fn wait_for_end_within(store: &Store, job_id: &str, limit: Duration) -> JobState {
    let started = Instant::now();
    loop {
        let job = queue::job(store, job_id).await.unwrap();
        if !job.state.is_active() && job.state != JobState::Cancelling {
            if job.state != JobState::Succeeded {
                eprintln!("job {job_id} ended {}: {:?}", job.state, job.error);
            }
            return job.state;
        }
        assert!(
            started.elapsed() < limit,
            "job still {} ({}/{}) after {limit:?}",
            job.state,
            job.tasks_succeeded,
            job.tasks_total
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Every task succeeded exactly once, and no two attempts overlapped in time, neither
/// of one task nor of two tasks on one node. Returns (tasks, attempts).
pub async fn check_attempt_log(store: &Store, job_id: &str) -> (usize, usize) {
    let tasks = queue::job_tasks(store, job_id).await.unwrap();
    let mut by_node: std::collections::BTreeMap<u32, Vec<(i64, i64, u32)>> = Default::default();
    let mut attempts_total = 0;
    for task in &tasks {
        assert_eq!(
            task.state,
            TaskState::Succeeded,
            "task {:?} was lost",
            task.number
        );
        let attempts = queue::task_attempts(store, &task.id).await.unwrap();
        attempts_total += attempts.len();
        let succeeded = attempts.iter().filter(|a| a.outcome == "succeeded").count();
        assert_eq!(
            succeeded, 1,
            "task {} succeeded {succeeded} times",
            task.number.0
        );
        for attempt in &attempts {
            by_node.entry(task.node).or_default().push((
                attempt.started_at_ms,
                attempt.finished_at_ms,
                task.number.0,
            ));
        }
    }
    for (node, mut spans) in by_node {
        spans.sort();
        for pair in spans.windows(2) {
            assert!(
                pair[0].1 <= pair[1].0,
                "node {node}: task {} ran {}..{} while task {} started at {}",
                pair[0].2,
                pair[0].0,
                pair[0].1,
                pair[1].2,
                pair[1].0
            );
        }
    }
    eprintln!(
        "job {job_id}: {} tasks, {attempts_total} attempts ({} re-run after a crash)",
        tasks.len(),
        attempts_total - tasks.len()
    );
    (tasks.len(), attempts_total)
}
