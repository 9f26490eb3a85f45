//! Corral processes a test kills with SIGKILL and starts again, and the checks that
//! nothing was lost or run twice meanwhile: the crash and scale-out tests.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use engine::queue::{JobId, JobState, Queue, TaskState};
use engine::store::DatabaseUrl;

pub use served::Role;

use super::test_server::CORRAL;

/// A `corral serve` or `corral worker` over the test's data directory and database,
/// with 8 task slots and 3-second leases (a killed process's tasks come back soon).
/// Dropping it kills it and the local nodes of the data directory, and a failing test
/// shows the end of each start's log (`NAME.log`, `NAME-2.log`, ... in the data dir).
pub struct Process {
    pub name: String,
    options: served::Options,
    process: Option<served::Served>,
}

impl Process {
    pub fn new(name: &str, role: Role, data: PathBuf, url: DatabaseUrl) -> Self {
        let options = served::Options::new(CORRAL, role, data)
            .name(name)
            .worker_slots(8)
            .lease_secs(3)
            // Test databases have no password, so the redacted form is the URL itself.
            .database_url(url.redacted());
        Self {
            name: name.to_owned(),
            options,
            process: None,
        }
    }

    /// This process, with task leases of `secs` seconds (3 by default).
    pub fn with_lease_secs(mut self, secs: u64) -> Self {
        self.options = self.options.lease_secs(secs);
        self
    }

    /// This process, started with `name=value` in its environment.
    pub fn with_env(mut self, name: &str, value: &str) -> Self {
        self.options = self.options.env(name, value);
        self
    }

    /// The log of the process's latest start.
    pub fn latest_log(&self) -> PathBuf {
        self.started().log_path()
    }

    /// Where a running `serve` answers (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> Option<&str> {
        self.process.as_ref().and_then(served::Served::url)
    }

    /// Starts the process (again) and waits until it says it runs.
    pub fn start(&mut self) {
        let started = match &mut self.process {
            Some(process) => process.start(),
            None => self
                .options
                .clone()
                .start()
                .map(|process| self.process = Some(process)),
        };
        started.unwrap_or_else(|error| panic!("{error}"));
    }

    /// SIGKILL: no shutdown code runs, leases are left to expire.
    pub fn kill(&mut self) {
        if let Some(process) = &mut self.process {
            process.kill().unwrap();
        }
    }

    fn started(&self) -> &served::Served {
        self.process
            .as_ref()
            .unwrap_or_else(|| panic!("{} was never started", self.name))
    }
}

pub async fn wait_for_progress(queue: &Queue, job_id: &JobId, fraction: f64) {
    let started = Instant::now();
    loop {
        let job = queue.job(job_id).await.unwrap();
        let done = job.tasks_succeeded as f64 / job.tasks_total.max(1) as f64;
        if done >= fraction || !job.state.is_active() {
            return;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let pending: Vec<String> = queue
                .job_tasks(job_id)
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

pub async fn wait_for_end(queue: &Queue, job_id: &JobId) -> JobState {
    wait_for_end_within(queue, job_id, Duration::from_secs(240)).await
}

pub async fn wait_for_end_within(queue: &Queue, job_id: &JobId, limit: Duration) -> JobState {
    let started = Instant::now();
    loop {
        let job = queue.job(job_id).await.unwrap();
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
pub async fn check_attempt_log(queue: &Queue, job_id: &JobId) -> (usize, usize) {
    let tasks = queue.job_tasks(job_id).await.unwrap();
    let mut by_node: std::collections::BTreeMap<u32, Vec<(i64, i64, u32)>> = Default::default();
    let mut attempts_total = 0;
    for task in &tasks {
        assert_eq!(
            task.state,
            TaskState::Succeeded,
            "task {:?} was lost",
            task.number
        );
        let attempts = queue.task_attempts(&task.id).await.unwrap();
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
