//! `soak`: hours of churn, and what they leave behind (issue 45 point 6).
//!
//! One `corral serve` (the binary next to this one, or `CORRAL_BIN`) on the embedded
//! default (SQLite, local nodes) with short history and audit retentions (a tenth of
//! the run, at least a minute), so the run crosses several retention periods. Three tenants
//! each run one loop of local nodes until the time is up: create a 2-node cluster of
//! `bench create`'s catalog, grow it by a node, shrink it by one, delete it, each job
//! awaited, with a watcher following every create job's event stream to its end. When
//! the machine's Docker engine answers, a fourth loop does the same with docker nodes.
//!
//! The server is sampled at the start, after the warm-up (a quarter of the run, at most
//! 5 minutes: caches and pools fill first) and at the end: resident memory, open file
//! descriptors and the database on disk: the file with its write-ahead log, the log
//! alone, and the pages in use (SQLite keeps freed pages in its file for reuse, so the
//! file says the high-water mark and the pages in use say what the history holds).
//! After the loops stop: node processes left under the nodes' directory, containers
//! left on the machine's Docker engine labelled with any cluster the run made, and (on
//! stderr) the tables with the most rows.
//!
//! Prints `soak minutes= tenants= cycles= jobs= errors= watched_events=
//! rss_start_mb= rss_warm_mb= rss_end_mb= rss_growth_pct= fds_start= fds_warm= fds_end=
//! fds_growth_pct= db_start_kb= db_warm_kb= db_end_kb= db_wal_end_kb= db_used_settled_kb=
//! db_used_end_kb= db_used_growth_pct= retention_s= node_processes_left=
//! containers_left=`. Targets: the memory and descriptor growths ≤ 10 % after the
//! warm-up, nothing left, the database bounded by what the retention holds: its pages
//! in use flat (≤ 10 %) from two retention periods in (`settled`: by then the first
//! rows outlived the retention and a prune pass took them) to the end. The run fails
//! (after printing its line) when a job failed or something was left behind, so CI's
//! short run is a check and not only a number.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use api_types::{ClusterChangeRequest, ClusterCreateRequest, JobState};

use crate::served::{
    failed, plain_user, run_with_server, seeded_tenant, sign_in, sign_in_with_catalog, Client,
    Server,
};
use crate::BenchError;

const TEMPLATE: &str = "three-services";
const WORKER_SLOTS: usize = 16;
const TENANTS: [&str; 3] = ["default", "soak-b", "soak-c"];
/// The bench's users' password (a throwaway server).
const PASSWORD: &str = "soak-bench-password";
const WARM_UP_AT_MOST: Duration = Duration::from_secs(300);
/// The loops' jobs must end well within this; a stuck job fails the run.
const JOB_LIMIT: Duration = Duration::from_secs(300);
const POLL: Duration = Duration::from_millis(200);

pub fn run(args: &[String]) -> Result<String, BenchError> {
    let minutes = crate::parse_count(args, "--minutes", 60)?;
    let length = Duration::from_secs(60 * minutes as u64);
    run_with_server("corral-soak-", |data, corral| async move {
        soak(&data, &corral, length).await
    })
}

/// What the server holds at one moment.
#[derive(Debug, Clone, Copy)]
struct Sample {
    rss_mb: f64,
    fds: usize,
    db: DatabaseSize,
}

impl Sample {
    async fn of(server: &Server, data: &Path) -> Self {
        let pid = server.pid();
        Sample {
            rss_mb: crate::usage::rss_mb_of(&format!("/proc/{pid}/status")),
            fds: std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count),
            db: DatabaseSize::of(data).await,
        }
    }
}

/// The SQLite database on disk, in KiB: the main file, its write-ahead log, and the
/// part of the file its pages in use take (SQLite keeps freed pages in the file for
/// reuse, so the file alone says the high-water mark, not what the history holds).
#[derive(Debug, Clone, Copy, Default)]
struct DatabaseSize {
    file_kb: u64,
    wal_kb: u64,
    used_kb: u64,
}

impl DatabaseSize {
    async fn of(data: &Path) -> Self {
        let kb_of =
            |name: &str| std::fs::metadata(data.join(name)).map_or(0, |meta| meta.len()) / 1024;
        DatabaseSize {
            file_kb: kb_of("corral.db"),
            wal_kb: kb_of("corral.db-wal"),
            used_kb: used_kb(&data.join("corral.db")).await.unwrap_or(0),
        }
    }

    fn total_kb(self) -> u64 {
        self.file_kb + self.wal_kb
    }
}

/// The pages in use (all but the free list) of the database at `path`, read through a
/// read-only connection of its own beside the server's.
async fn used_kb(path: &Path) -> Result<u64, sqlx::Error> {
    use sqlx::Connection;
    let mut conn =
        sqlx::SqliteConnection::connect(&format!("sqlite://{}?mode=ro", path.display())).await?;
    let pages: i64 = sqlx::query_scalar("PRAGMA page_count")
        .fetch_one(&mut conn)
        .await?;
    let free: i64 = sqlx::query_scalar("PRAGMA freelist_count")
        .fetch_one(&mut conn)
        .await?;
    let page_size: i64 = sqlx::query_scalar("PRAGMA page_size")
        .fetch_one(&mut conn)
        .await?;
    conn.close().await?;
    Ok(u64::try_from((pages - free) * page_size / 1024).unwrap_or(0))
}

/// The `count` tables of the database at `path` with the most rows, as `name=rows`
/// (what grew, when the database did).
async fn largest_tables(path: &Path, count: usize) -> Result<String, sqlx::Error> {
    use sqlx::Connection;
    let mut conn =
        sqlx::SqliteConnection::connect(&format!("sqlite://{}?mode=ro", path.display())).await?;
    let names: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    )
    .fetch_all(&mut conn)
    .await?;
    let mut rows = Vec::new();
    for name in names {
        let quoted = name.replace('"', "\"\"");
        let count: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM \"{quoted}\""))
            .fetch_one(&mut conn)
            .await?;
        rows.push((count, name));
    }
    conn.close().await?;
    rows.sort_unstable_by(|a, b| b.cmp(a));
    Ok(rows
        .into_iter()
        .take(count)
        .map(|(count, name)| format!("{name}={count}"))
        .collect::<Vec<_>>()
        .join(" "))
}

/// Growth from `from` to `to`, in percent.
fn growth_pct(from: f64, to: f64) -> f64 {
    if from > 0.0 {
        (to - from) / from * 100.0
    } else {
        f64::NAN
    }
}

/// Counts of what the loops did, shared by every tenant's loop.
#[derive(Default)]
struct Tally {
    cycles: AtomicUsize,
    jobs: AtomicUsize,
    watched_events: Arc<AtomicUsize>,
    errors: AtomicUsize,
    clusters: std::sync::Mutex<Vec<String>>,
}

async fn soak(data: &Path, corral: &Path, run_for: Duration) -> Result<String, BenchError> {
    // A tenth of the run, at least a minute: several retention periods go by.
    let retention = (run_for / 10).max(Duration::from_secs(60));
    let server = Server::start_with(
        corral,
        data,
        WORKER_SLOTS,
        &[
            "--history-retention-secs",
            &retention.as_secs().to_string(),
            "--audit-retention-secs",
            &retention.as_secs().to_string(),
        ],
    )?;
    let admin = sign_in_with_catalog(&server).await?;
    let mut clients = vec![admin];
    for tenant in &TENANTS[1..] {
        let admin = &clients[0];
        admin.create_tenant(&seeded_tenant(tenant)).await?;
        let username = format!("{tenant}-user");
        admin
            .create_user(&plain_user(&username, PASSWORD, Some(*tenant)))
            .await?;
        clients.push(Client::signed_in_as(&server.url, &username, PASSWORD).await?);
    }

    let started = Instant::now();
    let deadline = started + run_for;
    let warm_at = started + (run_for / 4).min(WARM_UP_AT_MOST);
    let first = Sample::of(&server, data).await;
    let tally = Arc::new(Tally::default());
    let mut loops = tokio::task::JoinSet::new();
    let docker = docker_answers();
    if docker {
        let client = sign_in(&server).await?;
        loops.spawn(churn(client, "docker", "docker", deadline, tally.clone()));
    }
    for (tenant, client) in TENANTS.into_iter().zip(clients) {
        loops.spawn(churn(client, tenant, "local", deadline, tally.clone()));
    }
    // The history is bounded once the first rows outlived the retention and a prune
    // pass took them: the database is compared from then on.
    let settled_at = (started + 2 * retention).min(deadline);
    let (warm, settled) = if settled_at < warm_at {
        tokio::time::sleep_until(settled_at.into()).await;
        let settled = DatabaseSize::of(data).await;
        tokio::time::sleep_until(warm_at.into()).await;
        (Sample::of(&server, data).await, settled)
    } else {
        tokio::time::sleep_until(warm_at.into()).await;
        let warm = Sample::of(&server, data).await;
        tokio::time::sleep_until(settled_at.into()).await;
        (warm, DatabaseSize::of(data).await)
    };
    while let Some(result) = loops.join_next().await {
        if let Err(error) = result.map_err(failed).and_then(|result| result) {
            eprintln!("soak: {error}");
            tally.errors.fetch_add(1, Ordering::Relaxed);
        }
    }
    // Let the janitor's next prune pass and the watchers finish before the last look.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let end = Sample::of(&server, data).await;
    drop(server);
    let nodes_dir = data.join("nodes");
    let node_processes_left = engine::provider::LocalProvider::processes_under(&nodes_dir).len();
    let clusters = std::mem::take(
        &mut *tally
            .clusters
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    let containers_left = containers_of(&clusters);
    match largest_tables(&data.join("corral.db"), 6).await {
        Ok(tables) => eprintln!("soak: largest tables at the end: {tables}"),
        Err(error) => eprintln!("soak: cannot count the tables' rows: {error}"),
    }

    let errors = tally.errors.load(Ordering::Relaxed);
    let line = format!(
        "soak minutes={:.1} tenants={} docker={docker} cycles={} jobs={} errors={errors} watched_events={} \
         rss_start_mb={:.1} rss_warm_mb={:.1} rss_end_mb={:.1} rss_growth_pct={:.1} \
         fds_start={} fds_warm={} fds_end={} fds_growth_pct={:.1} db_start_kb={} \
         db_warm_kb={} db_end_kb={} db_wal_end_kb={} db_used_settled_kb={} \
         db_used_end_kb={} db_used_growth_pct={:.1} retention_s={} \
         node_processes_left={node_processes_left} containers_left={containers_left}",
        started.elapsed().as_secs_f64() / 60.0,
        TENANTS.len(),
        tally.cycles.load(Ordering::Relaxed),
        tally.jobs.load(Ordering::Relaxed),
        tally.watched_events.load(Ordering::Relaxed),
        first.rss_mb,
        warm.rss_mb,
        end.rss_mb,
        growth_pct(warm.rss_mb, end.rss_mb),
        first.fds,
        warm.fds,
        end.fds,
        growth_pct(warm.fds as f64, end.fds as f64),
        first.db.total_kb(),
        warm.db.total_kb(),
        end.db.total_kb(),
        end.db.wal_kb,
        settled.used_kb,
        end.db.used_kb,
        growth_pct(settled.used_kb as f64, end.db.used_kb as f64),
        retention.as_secs(),
    );
    if errors > 0 || node_processes_left > 0 || containers_left > 0 {
        // The line is the evidence: print it before failing.
        println!("{line}");
        return Err(BenchError::Failed(
            "the soak failed jobs or left nodes behind (see the line above)".to_owned(),
        ));
    }
    Ok(line)
}

/// One loop: create, grow, shrink, delete clusters named `{name}-N` on `provider`,
/// until `deadline`.
async fn churn(
    client: Client,
    name: &'static str,
    provider: &'static str,
    deadline: Instant,
    tally: Arc<Tally>,
) -> Result<(), BenchError> {
    let tenant = name;
    let mut cycle = 0;
    while Instant::now() < deadline {
        cycle += 1;
        let created = client
            .create_cluster(&ClusterCreateRequest {
                name: format!("{name}-{cycle}"),
                template: TEMPLATE.to_owned(),
                size: 2,
                provider: Some(provider.to_owned()),
                ..ClusterCreateRequest::default()
            })
            .await?;
        let cluster = created.cluster.id;
        tally
            .clusters
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(cluster.clone());
        let create_job = created.job_id;
        let watcher = tokio::spawn(watch(
            client.http().clone(),
            client.url(&format!("/api/v1/jobs/{create_job}/stream")),
            tally.watched_events.clone(),
        ));
        wait(&client, &create_job, &tally).await?;
        for change in [
            ClusterChangeRequest::AddNodes { count: 1 },
            ClusterChangeRequest::RemoveNodes {
                count: Some(1),
                nodes: None,
            },
        ] {
            let submitted = client.change_cluster(&cluster, &change).await?;
            wait(&client, &submitted.job_id, &tally).await?;
        }
        let deleted = client.delete_cluster(&cluster, false).await?;
        wait(&client, &deleted.job_id, &tally).await?;
        // The stream ends with its job; a watcher still open by now is a leak to see.
        tokio::time::timeout(Duration::from_secs(30), watcher)
            .await
            .map_err(|_| failed(format!("{tenant}: a job's event stream did not end")))?
            .map_err(failed)?;
        tally.cycles.fetch_add(1, Ordering::Relaxed);
    }
    Ok(())
}

/// Waits for a job to succeed (anything else is an error of the run).
async fn wait(client: &Client, job: &str, tally: &Tally) -> Result<(), BenchError> {
    let started = Instant::now();
    loop {
        let view = client.job(job).await?;
        match view.state {
            JobState::Succeeded => {
                tally.jobs.fetch_add(1, Ordering::Relaxed);
                return Ok(());
            }
            JobState::Queued | JobState::Running if started.elapsed() < JOB_LIMIT => {
                tokio::time::sleep(POLL).await;
            }
            _ => return Err(failed(format!("job {job} ended: {view:?}"))),
        }
    }
}

/// Follows an event stream to its end, counting its events.
async fn watch(http: reqwest::Client, url: String, events: Arc<AtomicUsize>) {
    let Ok(mut response) = http.get(&url).send().await else {
        return;
    };
    while let Ok(Some(chunk)) = response.chunk().await {
        let lines = chunk.windows(5).filter(|window| window == b"data:").count();
        events.fetch_add(lines, Ordering::Relaxed);
    }
}

/// Whether this machine's Docker engine answers.
fn docker_answers() -> bool {
    std::process::Command::new("docker")
        .args(["version", "--format", "{{.Server.Version}}"])
        .output()
        .is_ok_and(|output| output.status.success())
}

/// Containers the machine's Docker engine holds for nodes of `clusters` (by the
/// cluster label the docker provider puts on each; 0 when there is no engine to ask).
fn containers_of(clusters: &[String]) -> usize {
    clusters
        .iter()
        .filter_map(|cluster| {
            std::process::Command::new("docker")
                .args(["ps", "--all", "--quiet", "--filter"])
                .arg(format!("label=corral.cluster={cluster}"))
                .output()
                .ok()
                .filter(|output| output.status.success())
        })
        .map(|output| String::from_utf8_lossy(&output.stdout).lines().count())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::growth_pct;

    #[test]
    fn growth_is_relative_to_the_first_sample() {
        assert_eq!(growth_pct(100.0, 110.0), 10.0);
        assert_eq!(growth_pct(200.0, 150.0), -25.0);
        assert!(growth_pct(0.0, 5.0).is_nan());
    }
}
