//! `latency`: one local node; the cost of a fresh handshake (wall time, client CPU, sshd CPU)
//! and of one command on a reused session.

use std::path::Path;
use std::time::{Duration, Instant};

use engine::provider::{LocalNodeState, LocalProvider, NodeProvider, NodeSpec};
use engine::ssh::{PoolConfig, RunOptions, SessionPool, SshSession};

use crate::usage::{cpu_ms, process_tree_cpu_ms};
use crate::BenchError;

const STEP: Duration = Duration::from_secs(30);

#[derive(Debug)]
pub struct Options {
    runs: u32,
}

impl Options {
    pub fn parse(args: &[String]) -> Result<Self, BenchError> {
        Ok(Options {
            runs: crate::parse_count(args, "--runs", 50)?
                .try_into()
                .map_err(|_| BenchError::Usage("--runs is too large".to_owned()))?,
        })
    }
}

pub fn run(options: Options) -> Result<String, BenchError> {
    crate::run_in_scratch_dir("corral-latency-", |base| async move {
        latency(&base, options.runs).await
    })
}

async fn latency(base: &Path, runs: u32) -> Result<String, BenchError> {
    let provider = LocalProvider::new(base)?;
    let record = provider.create(&NodeSpec::new("latency")).await?;
    let pool = SessionPool::new(PoolConfig::default());
    provider
        .confirm(&record, &pool, Duration::from_secs(30))
        .await?;
    let target = record.ssh_target();
    let sshd_pid = serde_json::from_value::<LocalNodeState>(record.provider_state.clone())
        .ok()
        .and_then(|state| state.pid)
        .ok_or_else(|| BenchError::Failed("the node has no sshd pid".to_owned()))?;

    let client_before = cpu_ms();
    let server_before = process_tree_cpu_ms(sshd_pid);
    let started = Instant::now();
    for _ in 0..runs {
        let session = SshSession::connect(&target, STEP).await?;
        session.disconnect().await;
    }
    let handshake = started.elapsed() / runs;
    let client_cpu = (cpu_ms() - client_before) / f64::from(runs);
    // Per-connection sshd processes are reaped by the listener, which then counts their CPU.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let server_cpu = (process_tree_cpu_ms(sshd_pid) - server_before) / f64::from(runs);

    let server_before = process_tree_cpu_ms(sshd_pid);
    let started = Instant::now();
    for _ in 0..runs {
        let outcome = pool
            .run(&target, "true", RunOptions::with_timeout(STEP))
            .await?;
        if !outcome.exit.success() {
            return Err(BenchError::Failed(format!(
                "`true` ended {:?}",
                outcome.exit
            )));
        }
    }
    let command = started.elapsed() / runs;
    let server_command_cpu = (process_tree_cpu_ms(sshd_pid) - server_before) / f64::from(runs);
    pool.close(&record.id).await;
    provider.delete(&record).await?;
    Ok(format!(
        "latency runs={runs} handshake_ms={:.2} client_cpu_ms_per_handshake={client_cpu:.2} \
         sshd_cpu_ms_per_connection={server_cpu:.2} reused_command_ms={:.2} \
         node_cpu_ms_per_command={server_command_cpu:.2}",
        handshake.as_secs_f64() * 1000.0,
        command.as_secs_f64() * 1000.0,
    ))
}
