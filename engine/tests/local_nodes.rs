//! The `local` provider and the SSH layer against real sshd processes over real SSH.
//!
//! Every test keeps its nodes under its own temporary directory and holds a [`Fixture`]
//! whose `Drop` kills every process under that directory, so a failing test leaks nothing.

#![allow(clippy::unwrap_used)] // Tests fail loudly by design.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use engine::provider::{
    LocalNodeState, LocalProvider, NodeProvider, NodeRecord, NodeSpec, ProviderError,
    SshPoolProvider,
};
use engine::ssh::{
    CommandOutcome, ExitStatus, OutputChunk, OutputStream, PoolConfig, RunOptions, SessionPool,
    SshError,
};
use tokio::sync::mpsc;

const STEP: Duration = Duration::from_secs(30);
const CONFIRM: Duration = Duration::from_secs(30);

/// Kills everything under the base directory before the directory itself goes away.
struct Fixture {
    base: PathBuf,
    _dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("corral-nodes-")
            .tempdir()
            .unwrap();
        Self {
            base: dir.path().canonicalize().unwrap(),
            _dir: dir,
        }
    }

    fn provider(&self) -> LocalProvider {
        LocalProvider::new(&self.base).unwrap()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        LocalProvider::kill_everything_under(&self.base);
        if std::thread::panicking() {
            // The nodes' own logs usually say why a test failed.
            for entry in std::fs::read_dir(&self.base)
                .into_iter()
                .flatten()
                .flatten()
            {
                let log =
                    std::fs::read_to_string(entry.path().join("sshd.log")).unwrap_or_default();
                eprintln!("sshd.log of {}:\n{log}", entry.path().display());
            }
        }
    }
}

fn pool() -> SessionPool {
    SessionPool::new(PoolConfig::default())
}

/// Live (non-zombie) pids whose command line contains `needle`.
fn pids_with_cmdline(needle: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let state = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .next();
        if matches!(state, Some("Z") | Some("X") | None) {
            continue;
        }
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(needle) && pid != std::process::id() as i32 {
            found.push(pid);
        }
    }
    found
}

/// Waits (bounded) until no live process matches; returns the ones still there.
async fn wait_until_gone(needle: &str) -> Vec<i32> {
    for _ in 0..500 {
        if pids_with_cmdline(needle).is_empty() {
            return Vec::new();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    pids_with_cmdline(needle)
}

fn state(record: &NodeRecord) -> LocalNodeState {
    serde_json::from_value(record.provider_state.clone()).unwrap()
}

fn sshd_pids(record: &NodeRecord) -> Vec<i32> {
    let config = state(record).dir.join("sshd_config");
    pids_with_cmdline(&format!("-f {}", config.display()))
}

async fn run_collect(
    pool: &SessionPool,
    record: &NodeRecord,
    command: &str,
) -> (CommandOutcome, String, String) {
    let target = record.ssh_target();
    let (sender, mut receiver) = mpsc::channel(64);
    let options = RunOptions {
        timeout: STEP,
        output: Some(sender),
    };
    let outcome = pool.run(&target, command, options).await.unwrap();
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    while let Some(OutputChunk { stream, bytes }) = receiver.recv().await {
        match stream {
            OutputStream::Stdout => stdout.extend(bytes),
            OutputStream::Stderr => stderr.extend(bytes),
        }
    }
    (
        outcome,
        String::from_utf8(stdout).unwrap(),
        String::from_utf8(stderr).unwrap(),
    )
}

async fn create_confirmed(provider: &LocalProvider, pool: &SessionPool, id: &str) -> NodeRecord {
    let record = provider.create(&NodeSpec::new(id)).await.unwrap();
    provider.confirm(&record, pool, CONFIRM).await.unwrap();
    record
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_run_commands_with_exit_codes_and_separate_streams() {
    let fixture = Fixture::new();
    let provider = fixture.provider();
    let pool = pool();
    let ids = ["node-a", "node-b", "node-c"];
    let creating = ids.map(|id| create_confirmed(&provider, &pool, id));
    let records = futures_join3(creating).await;

    let ports: std::collections::BTreeSet<u16> = records.iter().map(|r| r.port).collect();
    assert_eq!(ports.len(), 3, "each node listens on its own port");
    for (index, record) in records.iter().enumerate() {
        let command = format!(
            "echo out-{index} $CORRAL_LOCAL_NODE; echo err-{index} >&2; pwd; exit {}",
            index + 3
        );
        let (outcome, stdout, stderr) = run_collect(&pool, record, &command).await;
        assert_eq!(outcome.exit, ExitStatus(index as u32 + 3));
        let node_dir = state(record).dir;
        assert_eq!(
            stdout,
            format!(
                "out-{index} {}\n{}\n",
                node_dir.display(),
                node_dir.join("home").display()
            )
        );
        assert_eq!(stderr, format!("err-{index}\n"));
    }
    let (outcome, _, _) = run_collect(&pool, &records[0], "true").await;
    assert!(outcome.exit.success());
    for record in &records {
        provider.delete(record).await.unwrap();
    }
}

/// `[a, b, c].map(async)` joined without pulling in a futures crate.
async fn futures_join3<F: std::future::Future<Output = NodeRecord>>(
    futures: [F; 3],
) -> Vec<NodeRecord> {
    let [a, b, c] = futures;
    let (a, b, c) = tokio::join!(a, b, c);
    vec![a, b, c]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_streams_while_the_command_is_still_running() {
    let fixture = Fixture::new();
    let provider = fixture.provider();
    let pool = Arc::new(pool());
    let record = create_confirmed(&provider, &pool, "streamer").await;
    let gate = state(&record).dir.join("home").join("go");
    let target = record.ssh_target();
    let (sender, mut receiver) = mpsc::channel(16);
    let running = {
        let pool = pool.clone();
        tokio::spawn(async move {
            let command = "echo first; while [ ! -e go ]; do sleep 0.01; done; echo second >&2";
            let options = RunOptions {
                timeout: STEP,
                output: Some(sender),
            };
            pool.run(&target, command, options).await
        })
    };
    let first = receiver.recv().await.unwrap();
    assert_eq!(first.stream, OutputStream::Stdout);
    assert_eq!(first.bytes, b"first\n");
    // The command cannot finish before the gate file exists, so this chunk was streamed.
    assert!(!running.is_finished());
    std::fs::write(&gate, b"").unwrap();
    let second = receiver.recv().await.unwrap();
    assert_eq!(second.stream, OutputStream::Stderr);
    assert_eq!(second.bytes, b"second\n");
    let outcome = running.await.unwrap().unwrap();
    assert!(outcome.exit.success());
    provider.delete(&record).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_timeout_kills_the_remote_command_and_keeps_the_session() {
    let fixture = Fixture::new();
    let provider = fixture.provider();
    let pool = pool();
    let record = create_confirmed(&provider, &pool, "slow").await;
    let target = record.ssh_target();
    // A pipeline and a subshell: more than the one process sshd itself would signal.
    let command = "sleep 4242 | cat; (sleep 4243)";
    let error = pool
        .run(
            &target,
            command,
            RunOptions::with_timeout(Duration::from_millis(500)),
        )
        .await
        .unwrap_err();
    assert!(matches!(error, SshError::CommandTimedOut { .. }), "{error}");
    assert!(error.to_string().contains("slow"), "{error}");
    assert_eq!(wait_until_gone("sleep 4242").await, Vec::<i32>::new());
    assert_eq!(wait_until_gone("sleep 4243").await, Vec::<i32>::new());
    let (outcome, stdout, _) = run_collect(&pool, &record, "echo still-here").await;
    assert!(outcome.exit.success());
    assert_eq!(stdout, "still-here\n");
    assert_eq!(pool.handshakes_for("slow"), 1);
    provider.delete(&record).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_host_key_is_refused_naming_the_node_and_both_fingerprints() {
    let fixture = Fixture::new();
    let provider = fixture.provider();
    let pool = pool();
    let real = create_confirmed(&provider, &pool, "real").await;
    let other = provider.create(&NodeSpec::new("other")).await.unwrap();
    let mut forged = real.clone();
    forged.id = "real-pinned-elsewhere".to_owned();
    forged.host_key = other.host_key.clone();

    let error = pool
        .run(&forged.ssh_target(), "true", RunOptions::with_timeout(STEP))
        .await
        .unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(error, SshError::HostKeyMismatch { .. }),
        "{message}"
    );
    assert!(message.contains("real-pinned-elsewhere"), "{message}");
    assert!(message.contains(&other.host_key.fingerprint()), "{message}");
    assert!(message.contains(&real.host_key.fingerprint()), "{message}");

    // Confirm fails at once on a key mismatch instead of retrying until its deadline.
    let error = provider.confirm(&forged, &pool, CONFIRM).await.unwrap_err();
    assert!(matches!(error, ProviderError::Confirm { .. }), "{error}");
    provider.delete(&real).await.unwrap();
    provider.delete(&other).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_reuse_one_session_per_node() {
    let fixture = Fixture::new();
    let provider = fixture.provider();
    let pool = pool();
    let record = create_confirmed(&provider, &pool, "reuse").await;
    assert_eq!(
        pool.handshakes_for("reuse"),
        1,
        "confirm opened the session"
    );
    let target = record.ssh_target();
    let started = Instant::now();
    let runs = 20;
    for _ in 0..runs {
        let outcome = pool
            .run(&target, "true", RunOptions::with_timeout(STEP))
            .await
            .unwrap();
        assert!(outcome.exit.success());
    }
    let per_command = started.elapsed() / runs;
    assert_eq!(pool.handshakes_for("reuse"), 1);
    assert_eq!(pool.handshakes(), 1);

    // Commands at once on one node share the session too.
    let run = || pool.run(&target, "true", RunOptions::with_timeout(STEP));
    let (a, b, c, d) = tokio::join!(run(), run(), run(), run());
    for outcome in [a, b, c, d] {
        assert!(outcome.unwrap().exit.success());
    }
    assert_eq!(pool.handshakes_for("reuse"), 1);
    println!("measured: per-command latency on a reused session {per_command:?}");
    provider.delete(&record).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_share_one_step_shell_until_one_is_abandoned() {
    let fixture = Fixture::new();
    let provider = fixture.provider();
    let pool = pool();
    let record = create_confirmed(&provider, &pool, "shell").await;
    // In bash, `$$` is the step shell's process id, even in the subshell a step runs in.
    let channel = || run_collect(&pool, &record, "echo $$");
    let (_, first, _) = channel().await;
    let (_, second, _) = channel().await;
    assert_eq!(
        first, second,
        "the second command ran in the first one's shell"
    );
    // A step that does not parse fails with bash's message, and the shell carries on.
    let (outcome, _, stderr) = run_collect(&pool, &record, "echo (").await;
    assert_eq!(outcome.exit.code(), 2);
    assert!(stderr.contains("syntax error"), "{stderr}");
    assert_eq!(channel().await.1, first);
    let target = record.ssh_target();
    let error = pool
        .run(
            &target,
            "sleep 4244",
            RunOptions::with_timeout(Duration::from_millis(200)),
        )
        .await
        .unwrap_err();
    assert!(matches!(error, SshError::CommandTimedOut { .. }), "{error}");
    let (_, third, _) = channel().await;
    assert_ne!(first, third, "a timed-out step's shell is not reused");
    assert_eq!(pool.handshakes_for("shell"), 1);
    provider.delete(&record).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_client_key_fails_the_connection_naming_the_file() {
    let fixture = Fixture::new();
    let provider = fixture.provider();
    let mut record = create_confirmed(&provider, &pool(), "keyless").await;
    let real_key = record.client_key_path.clone();
    record.client_key_path = real_key.with_file_name("no-such-key");
    let error = pool()
        .run(&record.ssh_target(), "true", RunOptions::with_timeout(STEP))
        .await
        .unwrap_err();
    assert!(matches!(error, SshError::ClientKey { .. }), "{error}");
    assert!(error.to_string().contains("no-such-key"), "{error}");
    assert!(
        !error.is_transient(),
        "a missing key does not heal by retrying"
    );
    record.client_key_path = real_key;
    provider.delete(&record).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_leaves_no_sshd_session_or_detached_service() {
    let fixture = Fixture::new();
    let provider = fixture.provider();
    let pool = pool();
    let record = create_confirmed(&provider, &pool, "doomed").await;
    let node_dir = state(&record).dir;
    let sshd = sshd_pids(&record);
    assert_eq!(sshd.len(), 1, "one sshd listener: {sshd:?}");
    let services = "nohup sleep 4343 >/dev/null 2>&1 & \
                    setsid sh -c 'sleep 4344' >/dev/null 2>&1 < /dev/null & \
                    (setsid sleep 4345 >/dev/null 2>&1 < /dev/null &) ; echo started";
    let (outcome, stdout, _) = run_collect(&pool, &record, services).await;
    assert!(outcome.exit.success());
    assert_eq!(stdout, "started\n");
    for service in ["sleep 4343", "sleep 4344", "sleep 4345"] {
        let mut seen = false;
        for _ in 0..200 {
            seen = !pids_with_cmdline(service).is_empty();
            if seen {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(seen, "{service} started on the node");
    }
    // A long-running command on the open session as well.
    let target = record.ssh_target();
    let pending = tokio::spawn({
        let target = target.clone();
        async move {
            let pool = SessionPool::new(PoolConfig::default());
            pool.run(&target, "sleep 4346", RunOptions::with_timeout(STEP))
                .await
        }
    });
    for _ in 0..200 {
        if !pids_with_cmdline("sleep 4346").is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    provider.delete(&record).await.unwrap();

    for needle in ["sleep 4343", "sleep 4344", "sleep 4345", "sleep 4346"] {
        assert_eq!(
            pids_with_cmdline(needle),
            Vec::<i32>::new(),
            "{needle} survived"
        );
    }
    for pid in sshd {
        assert!(!alive(pid), "sshd {pid} survived");
    }
    assert!(pids_with_cmdline(&node_dir.display().to_string()).is_empty());
    assert!(!node_dir.exists());
    assert!(
        pending.await.unwrap().is_err(),
        "the open command ended with the node"
    );
    // Deleting again is fine.
    provider.delete(&record).await.unwrap();
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .next();
        !matches!(state, Some("Z") | Some("X"))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_is_idempotent_even_when_concurrent() {
    let fixture = Fixture::new();
    let provider = fixture.provider();
    let spec = NodeSpec::new("twice");
    let (first, second) = tokio::join!(provider.create(&spec), provider.create(&spec));
    let (first, second) = (first.unwrap(), second.unwrap());
    assert_eq!(first, second);
    let third = provider.create(&spec).await.unwrap();
    assert_eq!(first, third);
    assert_eq!(sshd_pids(&first).len(), 1, "exactly one sshd for the node");
    assert_eq!(state(&first).pid, Some(sshd_pids(&first)[0]));
    provider.delete(&first).await.unwrap();
    assert!(sshd_pids(&first).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adopt_after_restart_reuses_a_running_sshd_or_restarts_a_dead_one() {
    let fixture = Fixture::new();
    let record = {
        let provider = fixture.provider();
        let pool = pool();
        create_confirmed(&provider, &pool, "phoenix").await
    };
    let pid = state(&record).pid.unwrap();

    // A new provider object, as after a server restart: the running sshd is taken over.
    let provider = fixture.provider();
    let pool = pool();
    let adopted = provider.adopt(&record).await.unwrap();
    assert_eq!(adopted, record);
    assert_eq!(sshd_pids(&adopted), vec![pid]);
    let (outcome, stdout, _) = run_collect(&pool, &adopted, "echo adopted").await;
    assert!(outcome.exit.success());
    assert_eq!(stdout, "adopted\n");

    // Its sshd dies: adoption starts a new one with the same pinned host key.
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert!(wait_until_gone(&format!(
        "-f {}",
        state(&record).dir.join("sshd_config").display()
    ))
    .await
    .is_empty());
    let provider = fixture.provider();
    let restarted = provider.adopt(&record).await.unwrap();
    let new_pid = state(&restarted).pid.unwrap();
    assert_ne!(new_pid, pid);
    assert_eq!(restarted.host_key, record.host_key);
    assert_eq!(sshd_pids(&restarted), vec![new_pid]);
    let pool = SessionPool::new(PoolConfig::default());
    provider.confirm(&restarted, &pool, CONFIRM).await.unwrap();
    let (_, stdout, _) = run_collect(&pool, &restarted, "echo back").await;
    assert_eq!(stdout, "back\n");

    // Adopting twice does not start a second sshd.
    let again = provider.adopt(&restarted).await.unwrap();
    assert_eq!(state(&again).pid, Some(new_pid));
    assert_eq!(sshd_pids(&again), vec![new_pid]);
    provider.delete(&again).await.unwrap();
    assert!(sshd_pids(&again).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hardware_limits_apply_to_node_commands() {
    let fixture = Fixture::new();
    let provider = fixture.provider();
    let pool = pool();
    let mut spec = NodeSpec::new("small");
    spec.limits.max_virtual_memory_kib = Some(512 * 1024);
    spec.limits.nice = Some(7);
    let record = provider.create(&spec).await.unwrap();
    provider.confirm(&record, &pool, CONFIRM).await.unwrap();
    let (outcome, stdout, _) = run_collect(&pool, &record, "ulimit -v; nice").await;
    assert!(outcome.exit.success());
    // `nice -n` adds to the niceness the test itself runs at (CI may nice cargo).
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let own: i64 = stat
        .rsplit_once(") ")
        .unwrap()
        .1
        .split(' ')
        .nth(16)
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(stdout, format!("524288\n{}\n", (own + 7).min(19)));
    provider.delete(&record).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_survive_a_round_trip_through_json() {
    let fixture = Fixture::new();
    let provider = fixture.provider();
    let record = provider.create(&NodeSpec::new("stored")).await.unwrap();
    let stored = serde_json::to_string(&record).unwrap();
    let loaded: NodeRecord = serde_json::from_str(&stored).unwrap();
    assert_eq!(loaded, record);
    let pool = pool();
    provider.confirm(&loaded, &pool, CONFIRM).await.unwrap();
    provider.delete(&loaded).await.unwrap();
    assert!(!Path::new(&state(&record).dir).exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_step_is_killed_on_the_node() {
    let fixture = Fixture::new();
    let provider = fixture.provider();
    let pool = Arc::new(pool());
    let record = create_confirmed(&provider, &pool, "cancelled").await;
    let target = record.ssh_target();
    let running = {
        let pool = pool.clone();
        tokio::spawn(async move {
            pool.run(
                &target,
                "sleep 4250; echo never",
                RunOptions::with_timeout(STEP),
            )
            .await
        })
    };
    let mut started = false;
    for _ in 0..500 {
        started = !pids_with_cmdline("sleep 4250").is_empty();
        if started {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(started, "the step started");
    running.abort();
    assert!(running.await.unwrap_err().is_cancelled());
    assert_eq!(wait_until_gone("sleep 4250").await, Vec::<i32>::new());
    let (outcome, _, _) = run_collect(&pool, &record, "true").await;
    assert!(outcome.exit.success());
    provider.delete(&record).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_per_host_channel_cap_queues_commands() {
    let fixture = Fixture::new();
    let provider = fixture.provider();
    let pool = Arc::new(SessionPool::new(PoolConfig {
        max_channels_per_host: 1,
        ..PoolConfig::default()
    }));
    let record = create_confirmed(&provider, &pool, "narrow").await;
    let home = state(&record).dir.join("home");
    let spawn_run = |command: &'static str| {
        let pool = pool.clone();
        let target = record.ssh_target();
        tokio::spawn(async move {
            pool.run(&target, command, RunOptions::with_timeout(STEP))
                .await
        })
    };
    let first = spawn_run("touch first; while [ ! -e go ]; do sleep 0.01; done");
    while !home.join("first").exists() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let second = spawn_run("touch second");
    // Had the cap let it through, the second command would have run by now.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!home.join("second").exists(), "the second command waited");
    std::fs::write(home.join("go"), b"").unwrap();
    assert!(first.await.unwrap().unwrap().exit.success());
    assert!(second.await.unwrap().unwrap().exit.success());
    assert!(home.join("second").exists());
    assert_eq!(pool.handshakes_for("narrow"), 1);
    provider.delete(&record).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ssh_pool_lends_existing_hosts_as_nodes() {
    let fixture = Fixture::new();
    let local = fixture.provider();
    let ssh = pool();
    let db = engine::testing::TestDatabase::sqlite();
    let store = engine::store::Store::open(&db.url).await.unwrap();
    let tenant = engine::store::tenants::DEFAULT_TENANT_ID;
    let mut machines = Vec::new();
    for id in ["machine-1", "machine-2"] {
        let machine = local.create(&NodeSpec::new(id)).await.unwrap();
        // What registering does, minus the generated key: this machine's own client key.
        let host = engine::store::pool_hosts::PoolHost {
            id: format!("host-{id}"),
            tenant_id: tenant.to_owned(),
            name: id.to_owned(),
            host: machine.host.clone(),
            port: machine.port,
            user: machine.user.clone(),
            host_key: machine.host_key.to_openssh(),
            client_public_key: String::new(),
            checked_out_node: None,
            checked_out_at_ms: None,
            created_at_ms: 0,
            updated_at_ms: 0,
        };
        let client_key = std::fs::read_to_string(&machine.client_key_path).unwrap();
        store.insert_pool_host(&host, &client_key).await.unwrap();
        machines.push(machine);
    }
    let provider = SshPoolProvider::new(store.clone(), fixture.base.join("pool-keys")).unwrap();
    let spec = |id: &str| NodeSpec::for_tenant(id, tenant);
    let first = provider.create(&spec("pool-a")).await.unwrap();
    assert_eq!(
        provider.create(&spec("pool-a")).await.unwrap(),
        first,
        "idempotent"
    );
    let second = provider.create(&spec("pool-b")).await.unwrap();
    assert_ne!(first.port, second.port);
    provider.confirm(&first, &ssh, CONFIRM).await.unwrap();
    let (_, stdout, _) = run_collect(&ssh, &second, "echo lent").await;
    assert_eq!(stdout, "lent\n");
    let error = provider.create(&spec("pool-c")).await.unwrap_err();
    assert!(
        matches!(error, ProviderError::PoolExhausted { hosts: 2, .. }),
        "{error}"
    );

    provider.delete(&first).await.unwrap();
    provider.delete(&first).await.unwrap();
    let third = provider.create(&spec("pool-c")).await.unwrap();
    assert_eq!(third.port, first.port);
    assert_eq!(third.host_key, first.host_key);
    provider.confirm(&third, &ssh, CONFIRM).await.unwrap();

    // An adopted record whose pinned key is not the registered one is refused.
    let mut changed = third.clone();
    changed.host_key = second.host_key.clone();
    let error = provider.adopt(&changed).await.unwrap_err();
    assert!(
        matches!(error, ProviderError::HostKeyChanged { .. }),
        "{error}"
    );
    for machine in &machines {
        local.delete(machine).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pool_reconnects_once_a_nodes_sshd_was_restarted() {
    let fixture = Fixture::new();
    let provider = fixture.provider();
    let pool = pool();
    let record = create_confirmed(&provider, &pool, "restarted").await;
    // The node's sshd and the open connection's server side die (a host reboot, say).
    LocalProvider::kill_everything_under(&fixture.base);
    let restarted = provider.adopt(&record).await.unwrap();
    assert_eq!(restarted.host_key, record.host_key);
    let (outcome, stdout, _) = run_collect(&pool, &restarted, "echo again").await;
    assert!(outcome.exit.success());
    assert_eq!(stdout, "again\n");
    assert_eq!(pool.handshakes_for("restarted"), 2);
    provider.delete(&restarted).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adopting_a_deleted_node_says_it_is_gone() {
    let fixture = Fixture::new();
    let provider = fixture.provider();
    let record = provider.create(&NodeSpec::new("gone")).await.unwrap();
    provider.delete(&record).await.unwrap();
    let error = provider.adopt(&record).await.unwrap_err();
    assert!(matches!(error, ProviderError::NodeGone { .. }), "{error}");
    assert!(sshd_pids(&record).is_empty(), "adopt did not resurrect it");
}
