//! `http`: latency of the server's busiest routes under a fixed request rate, and what
//! 200 live watchers of a running job's event stream cost it.
//!
//! A release `corral serve` (the binary next to this one, or `CORRAL_BIN`) on the
//! embedded default gets a 10-node cluster of three services. Each route is then driven
//! open-loop: requests leave on a fixed schedule (200 a second by default, for 10 s)
//! whatever the earlier ones are doing, and each latency counts from when its request
//! was due, so a slow server shows as queueing instead of slowing the load down
//! (closed-loop load hides exactly that). `/healthz`, which touches nothing, is the
//! baseline: what the loopback, the client and the runtime cost on this machine.
//!
//! Then a 10-node cluster whose create ends with a minute of output on every node
//! (10 lines a second each) is made, and while those steps run the server's CPU time is
//! measured over 5 s without watchers (the baseline) and over 5 s with 200 clients
//! following the job's stream.
//!
//! Prints one line per route, `http route= rate= p50_ms= p99_ms= errors=`, and one for
//! the stream: `http route=/api/v1/jobs/{id}/stream watchers= server_cpu_pct=
//! baseline_cpu_pct= added_cpu_pct= events= errors=`. Targets: p99 ≤ 25 ms for API
//! routes and ≤ 50 ms for pages; the watchers add ≤ 10 % of one core.
//!
//! `--clusters N` (issue 42: thousands of clusters) first writes N more clusters with
//! 10 jobs each across 50 tenants into the server's database ([`seed`]), then drives
//! the same routes; every line says `clusters=N`. One more line says what the idle
//! server costs (its janitor, monitor and healing loops over all those clusters):
//! `http idle clusters=N server_cpu_pct= baseline_cpu_pct=` over a quiet window, the
//! baseline measured the same way before the seeding. Target: ≤ 5 % of one core.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use api_types::JobState;

use crate::served::{create_request, sign_in_with_catalog, wait_for_job, Client, Server};
use crate::BenchError;

mod seed;

const NODES: usize = 10;
const WORKER_SLOTS: usize = 16;
const DURATION: Duration = Duration::from_secs(10);
const WARM_UP: Duration = Duration::from_secs(1);
const WATCHERS: usize = 200;
const WINDOW: Duration = Duration::from_secs(5);
/// The idle measurement's window, and the wait before it after the seeding (the
/// monitor and healing first read each new cluster once).
const IDLE_WINDOW: Duration = Duration::from_secs(20);
const SETTLE: Duration = Duration::from_secs(20);

/// `--rate N` (default 200 requests a second), `--clusters N` (default none).
pub fn run(args: &[String]) -> Result<String, BenchError> {
    let mut rate = 200;
    let mut clusters = 0;
    for pair in args.chunks(2) {
        match pair[0].as_str() {
            "--rate" => rate = crate::parse_count(pair, "--rate", 200)?,
            "--clusters" => clusters = crate::parse_count(pair, "--clusters", 0)?,
            other => return Err(BenchError::Usage(format!("unknown argument {other:?}"))),
        }
    }
    let corral = crate::corral_binary()?;
    crate::run_in_scratch_dir("corral-http-", |base| async move {
        let result = drive_all(&base, &corral, rate, clusters).await;
        engine::provider::LocalProvider::kill_everything_under(&base.join("nodes"));
        result
    })
}

async fn drive_all(
    base: &Path,
    corral: &Path,
    rate: usize,
    clusters: usize,
) -> Result<String, BenchError> {
    let server = Server::start(corral, base, WORKER_SLOTS)?;
    let client = sign_in_with_catalog(&server).await?;
    let created = client
        .create_cluster(&create_request("served", "three-services", NODES))
        .await?;
    let cluster = created.cluster.id;
    let job = created.job_id;
    wait_for_job(&client, &job).await?;

    let mut lines = Vec::new();
    // `clusters=N` on every line of a run with seeded clusters.
    let tag = if clusters > 0 {
        format!(" clusters={clusters}")
    } else {
        String::new()
    };
    if clusters > 0 {
        tokio::time::sleep(SETTLE).await;
        let baseline_pct = cpu_pct_over(&server, IDLE_WINDOW).await;
        let seeded = seed::seed(base, &cluster, clusters).await?;
        eprintln!(
            "http seeded clusters={} tenants={} benched_tenant_clusters={} jobs={} seconds={:.1}",
            seeded.clusters,
            seed::TENANTS,
            seeded.benched,
            seeded.jobs,
            seeded.seconds
        );
        tokio::time::sleep(SETTLE).await;
        let idle_pct = cpu_pct_over(&server, IDLE_WINDOW).await;
        let line = format!(
            "http idle{tag} server_cpu_pct={idle_pct:.1} baseline_cpu_pct={baseline_pct:.1} \
             window_s={} target_cpu_pct=5",
            IDLE_WINDOW.as_secs()
        );
        eprintln!("{line}");
        lines.push(line);
    }
    for (route, path, target_ms) in [
        ("/healthz", "/healthz".to_owned(), None),
        ("/api/v1/clusters", "/api/v1/clusters".to_owned(), Some(25)),
        (
            "/api/v1/clusters/{id}",
            format!("/api/v1/clusters/{cluster}"),
            Some(25),
        ),
        ("/api/v1/jobs/{id}", format!("/api/v1/jobs/{job}"), Some(25)),
        ("/api/v1/audit", "/api/v1/audit".to_owned(), Some(25)),
        ("/clusters", "/clusters".to_owned(), Some(50)),
        ("/clusters/{id}", format!("/clusters/{cluster}"), Some(50)),
        (
            "/clusters/{id}/jobs/{job}",
            format!("/clusters/{cluster}/jobs/{job}"),
            Some(50),
        ),
        ("/admin", "/admin".to_owned(), Some(50)),
        ("/admin/audit", "/admin/audit".to_owned(), Some(50)),
    ] {
        let url = client.url(&path);
        drive(client.http(), &url, rate, WARM_UP).await;
        let stats = drive(client.http(), &url, rate, DURATION).await;
        let mut line = format!(
            "http route={route}{tag} rate={rate} p50_ms={:.1} p99_ms={:.1} errors={} requests={}",
            stats.percentile_ms(0.50),
            stats.percentile_ms(0.99),
            stats.errors,
            stats.latencies.len()
        );
        match target_ms {
            Some(target) => line.push_str(&format!(" target_p99_ms={target}")),
            None => line.push_str(" baseline=true"),
        }
        eprintln!("{line}");
        lines.push(line);
    }
    let line = watch_stream(&server, &client).await? + &tag;
    eprintln!("{line}");
    lines.push(line);
    Ok(lines.join("\n"))
}

struct Stats {
    /// Sorted.
    latencies: Vec<Duration>,
    errors: usize,
}

impl Stats {
    fn percentile_ms(&self, fraction: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        let index = ((self.latencies.len() - 1) as f64 * fraction).round() as usize;
        self.latencies[index].as_secs_f64() * 1000.0
    }
}

/// GETs `url` `rate` times a second for `duration`, each request on its own schedule.
async fn drive(http: &reqwest::Client, url: &str, rate: usize, duration: Duration) -> Stats {
    let count = (rate as f64 * duration.as_secs_f64()).round() as usize;
    let interval = Duration::from_secs_f64(1.0 / rate as f64);
    let start = tokio::time::Instant::now();
    let mut requests = Vec::with_capacity(count);
    for index in 0..count {
        let due = start + interval.mul_f64(index as f64);
        tokio::time::sleep_until(due).await;
        let (http, url) = (http.clone(), url.to_owned());
        requests.push(tokio::spawn(async move {
            let answered = match http.get(&url).send().await {
                Ok(response) => {
                    let status = response.status();
                    response.bytes().await.is_ok() && status.is_success()
                }
                Err(_) => false,
            };
            (due.elapsed(), answered)
        }));
    }
    let mut stats = Stats {
        latencies: Vec::with_capacity(count),
        errors: 0,
    };
    for request in requests {
        match request.await {
            Ok((latency, true)) => stats.latencies.push(latency),
            _ => stats.errors += 1,
        }
    }
    stats.latencies.sort_unstable();
    stats
}

/// The server's CPU over a window without watchers, then with [`WATCHERS`] following
/// the stream of a job whose steps print 10 lines a second on every node.
async fn watch_stream(server: &Server, client: &Client) -> Result<String, BenchError> {
    let created = client
        .create_cluster(&create_request("ticking", "ticking", NODES))
        .await?;
    let job_id = created.job_id;
    // The create's last tasks are the ticking starts: wait until they all run.
    let started = Instant::now();
    loop {
        let job = client.job(&job_id).await?;
        if job.tasks_succeeded + NODES as i64 >= job.tasks_total {
            break;
        }
        let under_way = matches!(job.state, JobState::Queued | JobState::Running);
        if started.elapsed() > Duration::from_secs(120) || !under_way {
            return Err(BenchError::Failed(format!(
                "the ticking job did not get to its steps: {job:?}"
            )));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let baseline_pct = cpu_pct_over(server, WINDOW).await;

    let url = client.url(&format!("/api/v1/jobs/{job_id}/stream"));
    let events = Arc::new(AtomicUsize::new(0));
    let errors = Arc::new(AtomicUsize::new(0));
    let mut watchers = Vec::with_capacity(WATCHERS);
    for _ in 0..WATCHERS {
        let (http, url) = (client.http().clone(), url.clone());
        let (events, errors) = (events.clone(), errors.clone());
        watchers.push(tokio::spawn(async move {
            let response = match http.get(&url).send().await {
                Ok(response) if response.status().is_success() => response,
                _ => {
                    errors.fetch_add(1, Ordering::Relaxed);
                    return;
                }
            };
            let mut response = response;
            while let Ok(Some(chunk)) = response.chunk().await {
                let lines = chunk.windows(5).filter(|window| window == b"data:").count();
                events.fetch_add(lines, Ordering::Relaxed);
            }
        }));
    }
    // Connecting replays what the job printed so far: let that settle first.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = events.load(Ordering::Relaxed);
    let watched_pct = cpu_pct_over(server, WINDOW).await;
    let delivered = events.load(Ordering::Relaxed) - before;
    for watcher in &watchers {
        watcher.abort();
    }
    client.cancel_job(&job_id).await?;
    Ok(format!(
        "http route=/api/v1/jobs/{{id}}/stream watchers={WATCHERS} server_cpu_pct={watched_pct:.1} \
         baseline_cpu_pct={baseline_pct:.1} added_cpu_pct={:.1} events={delivered} errors={} \
         target_added_cpu_pct=10",
        watched_pct - baseline_pct,
        errors.load(Ordering::Relaxed)
    ))
}

/// The server's CPU use over `window`, in percent of one core.
async fn cpu_pct_over(server: &Server, window: Duration) -> f64 {
    let (_, before) = server.usage();
    let started = Instant::now();
    tokio::time::sleep(window).await;
    let (_, after) = server.usage();
    (after - before) * 100.0 / started.elapsed().as_secs_f64()
}
