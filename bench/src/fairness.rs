//! `fairness`: how long small creates wait behind a big one, in the same tenant and in
//! another, and what sharing the workers costs the big one (the claim's fair policy,
//! queue/src/fair.rs).
//!
//! One fresh `corral serve` (the binary next to this one, or `CORRAL_BIN`) on the
//! embedded default (SQLite, local nodes) with `--worker-slots 64`, the catalog of
//! `bench create` (12 tasks a node) in the default tenant "A", a second tenant "B"
//! seeded with it, a second user in A and a user in B. In turn, each create timed from
//! its request until its job is seen to succeed (polled every 100 ms):
//! 1. a 3-node create by A's second user on the idle server: the baseline of a small
//!    create;
//! 2. an N-node create (1,000 by default) by A's admin alone: the baseline of the big
//!    job; it is deleted before the next step;
//! 3. the N-node create again and, once it fills the workers (64 of its tasks done),
//!    a 3-node create by A's second user and one by B's user at the same time.
//!
//! Prints `fairness nodes= small_idle_s= same_tenant_s= other_tenant_s=
//! same_tenant_ratio= other_tenant_ratio= big_alone_s= big_s= big_job_slowdown=
//! small_idle_wait_s= same_tenant_wait_s= other_tenant_wait_s=`; the targets are ratios
//! ≤ 2 (a small create waits for a few of the big job's tasks, not for its backlog) and
//! a slowdown ≤ 1.10. A `_wait_s` is the part of a small job's time (from its submission
//! to its end, by the server's clock) in which none of its tasks ran: what it spent in
//! the queue, apart from what the busy machine's slower steps cost it.

use std::path::Path;
use std::time::{Duration, Instant};

use api_types::JobState;

use crate::served::{
    create_request, plain_user, run_with_server, seeded_tenant, sign_in_with_catalog, Client,
    Server,
};
use crate::BenchError;

const TEMPLATE: &str = "three-services";
const WORKER_SLOTS: usize = 64;
const SMALL_NODES: usize = 3;
const TENANT_B: &str = "tenant-b";
/// The bench's users' password (a throwaway server).
const PASSWORD: &str = "fairness-bench-password";
/// Small creates take seconds: a finer poll than `bench create`'s.
const POLL: Duration = Duration::from_millis(100);
/// A job that has not ended by then failed the run (a 1,000-node create takes minutes).
const JOB_LIMIT: Duration = Duration::from_secs(1800);

pub fn run(args: &[String]) -> Result<String, BenchError> {
    let nodes = crate::parse_count(args, "--nodes", 1000)?;
    run_with_server("corral-fairness-", |data, corral| async move {
        measure(&data, &corral, nodes).await
    })
}

async fn measure(data: &Path, corral: &Path, nodes: usize) -> Result<String, BenchError> {
    let server = Server::start(corral, data, WORKER_SLOTS)?;
    let admin = sign_in_with_catalog(&server).await?;
    admin.create_tenant(&seeded_tenant(TENANT_B)).await?;
    for (username, tenant) in [("colleague", None), ("other", Some(TENANT_B))] {
        admin
            .create_user(&plain_user(username, PASSWORD, tenant))
            .await?;
    }
    let colleague = Client::signed_in_as(&server.url, "colleague", PASSWORD).await?;
    let other = Client::signed_in_as(&server.url, "other", PASSWORD).await?;

    let (small_idle_s, idle_job) = timed_create(&colleague, "idle-small", SMALL_NODES).await?;
    eprintln!("fairness: {SMALL_NODES} nodes on an idle server in {small_idle_s:.1} s");

    let started = Instant::now();
    let (alone, job) = create(&admin, "big-alone", nodes).await?;
    wait_for_job(&admin, &job).await?;
    let big_alone_s = started.elapsed().as_secs_f64();
    eprintln!("fairness: {nodes} nodes alone in {big_alone_s:.1} s; deleting");
    let deleted = admin.delete_cluster(&alone, false).await?;
    wait_for_job(&admin, &deleted.job_id).await?;

    let started = Instant::now();
    let (_, big_job) = create(&admin, "big", nodes).await?;
    wait_until_busy(&admin, &big_job).await?;
    let (same_tenant_s, other_tenant_s, big_done) = tokio::join!(
        timed_create(&colleague, "colleague-small", SMALL_NODES),
        timed_create(&other, "other-small", SMALL_NODES),
        async {
            wait_for_job(&admin, &big_job).await?;
            Ok::<_, BenchError>(started.elapsed().as_secs_f64())
        },
    );
    let ((same_tenant_s, same_job), (other_tenant_s, other_job), big_s) =
        (same_tenant_s?, other_tenant_s?, big_done?);
    let small_idle_wait_s = waiting_s(&colleague, &idle_job).await?;
    let same_tenant_wait_s = waiting_s(&colleague, &same_job).await?;
    let other_tenant_wait_s = waiting_s(&other, &other_job).await?;
    drop(server);
    Ok(format!(
        "fairness nodes={nodes} small_idle_s={small_idle_s:.2} same_tenant_s={same_tenant_s:.2} \
         other_tenant_s={other_tenant_s:.2} same_tenant_ratio={:.2} other_tenant_ratio={:.2} \
         big_alone_s={big_alone_s:.2} big_s={big_s:.2} big_job_slowdown={:.2} \
         small_idle_wait_s={small_idle_wait_s:.2} same_tenant_wait_s={same_tenant_wait_s:.2} \
         other_tenant_wait_s={other_tenant_wait_s:.2}",
        same_tenant_s / small_idle_s,
        other_tenant_s / small_idle_s,
        big_s / big_alone_s,
    ))
}

/// Creates a cluster of `nodes` from the bench template: its id and its job's.
async fn create(api: &Client, name: &str, nodes: usize) -> Result<(String, String), BenchError> {
    let created = api
        .create_cluster(&create_request(name, TEMPLATE, nodes))
        .await?;
    Ok((created.cluster.id, created.job_id))
}

/// Seconds from asking for the cluster until its create job is seen to succeed, and
/// the job's id.
async fn timed_create(api: &Client, name: &str, nodes: usize) -> Result<(f64, String), BenchError> {
    let started = Instant::now();
    let (_, job) = create(api, name, nodes).await?;
    wait_for_job(api, &job).await?;
    Ok((started.elapsed().as_secs_f64(), job))
}

/// Tasks of a small job: one page holds them all.
const TASK_PAGE: u32 = 500;

/// Seconds of an ended job's span (submitted to finished) in which none of its tasks
/// ran.
async fn waiting_s(api: &Client, job_id: &str) -> Result<f64, BenchError> {
    let job = api.job(job_id).await?;
    let span = (job.created_at_ms, job.finished_at_ms.unwrap_or(0));
    let page = api.job_tasks(job_id, TASK_PAGE).await?;
    if page.total != page.items.len() as u64 {
        return Err(BenchError::Failed(format!(
            "job {job_id} has more tasks than a page of {TASK_PAGE}"
        )));
    }
    let ran: Vec<(i64, i64)> = page
        .items
        .iter()
        .filter_map(|task| Some((task.started_at_ms?, task.finished_at_ms?)))
        .collect();
    Ok(uncovered_ms(span, ran) as f64 / 1000.0)
}

/// Milliseconds of `span` that none of `intervals` covers.
fn uncovered_ms(span: (i64, i64), mut intervals: Vec<(i64, i64)>) -> i64 {
    intervals.sort_unstable();
    let (start, end) = span;
    let mut uncovered = 0;
    let mut reached = start;
    for (from, to) in intervals {
        let (from, to) = (from.clamp(start, end), to.clamp(start, end));
        uncovered += (from - reached).max(0);
        reached = reached.max(to);
    }
    uncovered + (end - reached).max(0)
}

/// Polls the job until it ends; anything but success fails the run.
async fn wait_for_job(api: &Client, job_id: &str) -> Result<(), BenchError> {
    let started = Instant::now();
    loop {
        let job = api.job(job_id).await?;
        match job.state {
            JobState::Succeeded => return Ok(()),
            JobState::Queued | JobState::Running if started.elapsed() < JOB_LIMIT => {
                tokio::time::sleep(POLL).await;
            }
            _ => return Err(BenchError::Failed(format!("job {job_id} ended: {job:?}"))),
        }
    }
}

/// Waits until the big job has had as many tasks done as there are worker slots: its
/// tasks fill the workers and a backlog of its ready tasks waits.
async fn wait_until_busy(api: &Client, job_id: &str) -> Result<(), BenchError> {
    let started = Instant::now();
    loop {
        let job = api.job(job_id).await?;
        match job.state {
            JobState::Running if job.tasks_succeeded >= WORKER_SLOTS as i64 => return Ok(()),
            JobState::Queued | JobState::Running if started.elapsed() < JOB_LIMIT => {
                tokio::time::sleep(POLL).await;
            }
            _ => {
                return Err(BenchError::Failed(format!(
                    "job {job_id} ended before it filled the workers: {job:?}"
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uncovered_time_is_what_no_interval_overlaps() {
        // (span, intervals, uncovered)
        let cases = [
            ((0, 100), vec![], 100),
            ((0, 100), vec![(0, 100)], 0),
            ((0, 100), vec![(10, 20), (30, 40)], 80),
            ((0, 100), vec![(30, 60), (10, 40), (20, 25)], 50),
            ((0, 100), vec![(-50, 10), (90, 150)], 80),
            ((0, 100), vec![(10, 20), (12, 15), (50, 60)], 80),
        ];
        for (span, intervals, expected) in cases {
            assert_eq!(
                uncovered_ms(span, intervals.clone()),
                expected,
                "{intervals:?}"
            );
        }
    }
}
