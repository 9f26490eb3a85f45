//! `fanout`: N local nodes, `uname -a` on each over fresh connections, again over the open
//! sessions, and the same through OpenSSH's client under `xargs -P N` for comparison.
//!
//! The engine's task queue does not exist yet, so this measures the SSH layer directly
//! (`SessionPool::run`), not a queued job.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use engine::provider::{LocalProvider, NodeProvider, NodeRecord, NodeSpec};
use engine::ssh::{OutputChunk, PoolConfig, RunOptions, SessionPool, SshTarget};
use tokio::sync::{mpsc, Semaphore};
use tokio::task::JoinSet;

use crate::usage::{cpu_ms, peak_rss_mb};
use crate::BenchError;

const STEP: Duration = Duration::from_secs(60);
/// Nodes created or deleted at once: each start runs ssh-keygen twice and sshd once.
const PROVISIONING_CONCURRENCY: usize = 8;

#[derive(Debug)]
pub struct Options {
    nodes: usize,
}

impl Options {
    pub fn parse(args: &[String]) -> Result<Self, BenchError> {
        Ok(Options {
            nodes: crate::parse_count(args, "--nodes", 200)?,
        })
    }
}

pub fn run(options: Options) -> Result<String, BenchError> {
    crate::run_in_scratch_dir("corral-fanout-", |base| async move {
        fanout(&base, options.nodes).await
    })
}

async fn fanout(base: &Path, nodes: usize) -> Result<String, BenchError> {
    let provider = Arc::new(LocalProvider::new(base)?);
    let started = Instant::now();
    let records = provision(&provider, nodes).await?;
    let provision_s = started.elapsed().as_secs_f64();
    let targets = records
        .iter()
        .map(NodeRecord::ssh_target)
        .collect::<Result<Vec<_>, _>>()?;
    let pool = Arc::new(SessionPool::new(PoolConfig::default()));

    let cpu_before = cpu_ms();
    let fresh = uname_everywhere(&pool, &targets).await?;
    let client_cpu_ms_per_node = (cpu_ms() - cpu_before) / nodes as f64;
    if pool.handshakes() != nodes as u64 {
        return Err(BenchError::Failed(format!(
            "expected {nodes} handshakes on fresh connections, saw {}",
            pool.handshakes()
        )));
    }
    let reused = uname_everywhere(&pool, &targets).await?;
    if pool.handshakes() != nodes as u64 {
        return Err(BenchError::Failed(
            "the second round opened new connections".to_owned(),
        ));
    }
    let openssh = openssh_fanout(base, &records)?;
    let peak_rss_mb = peak_rss_mb();

    for target in &targets {
        pool.close(&target.node).await;
    }
    let started = Instant::now();
    deprovision(&provider, records).await?;
    // Not part of the tracked line, whose keys are fixed; useful when tuning the provider.
    eprintln!(
        "fanout provision_s={provision_s:.3} deprovision_s={:.3}",
        started.elapsed().as_secs_f64()
    );
    let fresh_s = fresh.as_secs_f64();
    let openssh_s = openssh.as_secs_f64();
    Ok(format!(
        "fanout nodes={nodes} corral_fresh_s={fresh_s:.3} corral_reused_s={:.3} openssh_s={openssh_s:.3} \
         ratio={:.2} client_cpu_ms_per_node={client_cpu_ms_per_node:.2} peak_rss_mb={peak_rss_mb:.1}",
        reused.as_secs_f64(),
        fresh_s / openssh_s,
    ))
}

async fn provision(
    provider: &Arc<LocalProvider>,
    nodes: usize,
) -> Result<Vec<NodeRecord>, BenchError> {
    let permits = Arc::new(Semaphore::new(PROVISIONING_CONCURRENCY));
    let mut creating = JoinSet::new();
    for index in 0..nodes {
        let provider = provider.clone();
        let permits = permits.clone();
        creating.spawn(async move {
            let _permit = permits.acquire_owned().await;
            provider
                .create(&NodeSpec::new(format!("node-{index:04}")))
                .await
        });
    }
    let mut records = Vec::with_capacity(nodes);
    while let Some(created) = creating.join_next().await {
        records.push(created.map_err(|error| BenchError::Failed(error.to_string()))??);
    }
    records.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(records)
}

async fn deprovision(
    provider: &Arc<LocalProvider>,
    records: Vec<NodeRecord>,
) -> Result<(), BenchError> {
    let permits = Arc::new(Semaphore::new(PROVISIONING_CONCURRENCY));
    let mut deleting = JoinSet::new();
    for record in records {
        let provider = provider.clone();
        let permits = permits.clone();
        deleting.spawn(async move {
            let _permit = permits.acquire_owned().await;
            provider.delete(&record).await
        });
    }
    while let Some(deleted) = deleting.join_next().await {
        deleted.map_err(|error| BenchError::Failed(error.to_string()))??;
    }
    Ok(())
}

/// `uname -a` on every node at once through the pool; checks every node answered.
async fn uname_everywhere(
    pool: &Arc<SessionPool>,
    targets: &[SshTarget],
) -> Result<Duration, BenchError> {
    let started = Instant::now();
    let mut running = JoinSet::new();
    for target in targets {
        let pool = pool.clone();
        let target = target.clone();
        running.spawn(async move {
            let (sender, mut receiver) = mpsc::channel::<OutputChunk>(4);
            let options = RunOptions {
                timeout: STEP,
                output: Some(sender),
            };
            let outcome = pool.run(&target, "uname -a", options).await?;
            let mut output = Vec::new();
            while let Some(chunk) = receiver.recv().await {
                output.extend(chunk.bytes);
            }
            if !outcome.exit.success() || !output.starts_with(b"Linux") {
                return Err(BenchError::Failed(format!(
                    "node {}: uname -a ended {:?} printing {:?}",
                    target.node,
                    outcome.exit,
                    String::from_utf8_lossy(&output)
                )));
            }
            Ok(())
        });
    }
    while let Some(ran) = running.join_next().await {
        ran.map_err(|error| BenchError::Failed(error.to_string()))??;
    }
    Ok(started.elapsed())
}

/// The same fan-out with OpenSSH's client: one `ssh` per node under `xargs -P N`, with the
/// host keys pinned in a known_hosts file as Corral pins them.
fn openssh_fanout(base: &Path, records: &[NodeRecord]) -> Result<Duration, BenchError> {
    let known_hosts = base.join("bench_known_hosts");
    let mut lines = String::new();
    let mut jobs = String::new();
    for record in records {
        lines.push_str(&format!(
            "[{}]:{} {}\n",
            record.host,
            record.port,
            record.host_key.to_openssh()
        ));
        jobs.push_str(&format!(
            "-i {} -p {} {}@{} uname -a\n",
            record.client_key_path.display(),
            record.port,
            record.user,
            record.host
        ));
    }
    std::fs::write(&known_hosts, lines)?;
    let parallel = records.len().to_string();
    let started = Instant::now();
    let mut xargs = Command::new("xargs")
        .args([
            "-P",
            &parallel,
            "-L",
            "1",
            "ssh",
            "-o",
            "KexAlgorithms=curve25519-sha256",
        ])
        .args(["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes"])
        .arg("-o")
        .arg(format!("UserKnownHostsFile={}", known_hosts.display()))
        .args(["-o", "LogLevel=ERROR"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    if let Some(mut stdin) = xargs.stdin.take() {
        stdin.write_all(jobs.as_bytes())?;
    }
    let output = xargs.wait_with_output()?;
    let elapsed = started.elapsed();
    let answered = output
        .stdout
        .split(|byte| *byte == b'\n')
        .filter(|line| line.starts_with(b"Linux"))
        .count();
    if !output.status.success() || answered != records.len() {
        return Err(BenchError::Failed(format!(
            "openssh fan-out: xargs ended {} with {answered} of {} nodes answering",
            output.status,
            records.len()
        )));
    }
    Ok(elapsed)
}
