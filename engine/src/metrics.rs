//! The engine's metrics, recorded through the `metrics` facade: every name is here,
//! with what it counts, so a dashboard author reads one file.
//!
//! Nothing here exports anything: a process that installs no recorder (a test, a
//! tool) pays one relaxed atomic load per call. `corral serve` and `corral worker`
//! install a Prometheus recorder and serve `/metrics` (see the server's `metrics`
//! module, which adds the HTTP metrics and the gauges read from the database).
//!
//! Labels are bounded sets only (an action, an outcome, a state, a provider type):
//! never a tenant, a user, a cluster or a node, whose names would leak across
//! tenants to whoever scrapes and whose counts grow without end.

use std::time::Duration;

use metrics::{counter, gauge, histogram, Unit};

/// Tasks claimed by this process's worker pool.
pub const TASKS_CLAIMED: &str = "corral_tasks_claimed_total";
/// How long one claim round trip to the queue took (a batch of up to the free slots).
pub const CLAIM_DURATION: &str = "corral_queue_claim_duration_seconds";
/// Attempts this process ran to an end, by `action` and `outcome`.
pub const TASK_ATTEMPTS: &str = "corral_task_attempts_total";
/// How long attempts ran, by `action`.
pub const TASK_DURATION: &str = "corral_task_duration_seconds";
/// This process's task slots, by `state` (`busy`, `free`).
pub const WORKER_SLOTS: &str = "corral_worker_slots";
/// Running tasks whose leases expired and went back to the queue (or failed), as seen
/// by this process's janitor.
pub const LEASES_EXPIRED: &str = "corral_task_leases_expired_total";
/// SSH handshakes this process made, by `result` (`ok`, `failed`), and how long the
/// successful ones took: recorded by the `nodes` crate's SSH pool.
pub use nodes::ssh::{SSH_HANDSHAKES, SSH_HANDSHAKE_DURATION};

/// Histogram buckets (seconds) for task attempts: a `true` step takes milliseconds, a
/// package install minutes.
pub const TASK_DURATION_BUCKETS: &[f64] = &[
    0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0,
];
/// Histogram buckets (seconds) for claims and handshakes: milliseconds when healthy.
pub const FAST_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Registers the descriptions and units of every engine metric with the installed
/// recorder (call once, after installing it).
pub fn describe() {
    metrics::describe_counter!(TASKS_CLAIMED, "Tasks claimed by this process's workers");
    metrics::describe_histogram!(
        CLAIM_DURATION,
        Unit::Seconds,
        "Time one claim of ready tasks took (a round trip to the queue)"
    );
    metrics::describe_counter!(
        TASK_ATTEMPTS,
        "Task attempts this process ran to an end, by action and outcome"
    );
    metrics::describe_histogram!(
        TASK_DURATION,
        Unit::Seconds,
        "How long task attempts ran, by action"
    );
    metrics::describe_gauge!(WORKER_SLOTS, "This process's task slots, by state");
    metrics::describe_counter!(
        LEASES_EXPIRED,
        "Running tasks whose worker stopped renewing their lease, taken back by this process"
    );
    metrics::describe_counter!(SSH_HANDSHAKES, "SSH handshakes to nodes, by result");
    metrics::describe_histogram!(
        SSH_HANDSHAKE_DURATION,
        Unit::Seconds,
        "How long successful SSH handshakes took"
    );
}

/// A claim that took `took` and handed out `claimed` tasks.
pub fn record_claim(claimed: usize, took: Duration) {
    counter!(TASKS_CLAIMED).increment(claimed as u64);
    histogram!(CLAIM_DURATION).record(took.as_secs_f64());
}

/// An attempt of an `action` step that ended with `outcome` after `took`.
pub fn record_attempt(action: &'static str, outcome: &'static str, took: Duration) {
    counter!(TASK_ATTEMPTS, "action" => action, "outcome" => outcome).increment(1);
    histogram!(TASK_DURATION, "action" => action).record(took.as_secs_f64());
}

/// The pool's slots right now.
pub fn record_slots(busy: usize, free: usize) {
    gauge!(WORKER_SLOTS, "state" => "busy").set(busy as f64);
    gauge!(WORKER_SLOTS, "state" => "free").set(free as f64);
}

/// Leases the janitor took back.
pub fn record_expired_leases(count: usize) {
    counter!(LEASES_EXPIRED).increment(count as u64);
}
