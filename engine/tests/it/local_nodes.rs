//! The `local` provider and the SSH layer against real sshd processes over real SSH.
//!
//! Every test keeps its nodes under its own temporary directory (and their homes under
//! another) and holds a [`Fixture`] whose `Drop` kills every process under that directory,
//! so a failing test leaks nothing.
//!
//! Tests run as root here, so nodes run as unprivileged node users; the tests of that
//! isolation use tenants of their own (`corral-test-…`), so that no other test's node
//! shares their users.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use engine::provider::{
    LocalNodeState, LocalProvider, NodeIsolation, NodeProvider, NodeRecord, NodeSpec,
    ProviderError, SshPoolProvider,
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
    /// The home root: node users must pass through it, so it is not a private temp dir.
    homes: PathBuf,
    /// What holds the base dir: the temporary directory itself, or a data dir around it.
    data: PathBuf,
    _dir: tempfile::TempDir,
    _homes: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        Self::with_base(None)
    }

    /// A fixture whose base dir is `nodes` in a data dir, as the server keeps it.
    fn in_data_dir() -> Self {
        Self::with_base(Some("nodes"))
    }

    fn with_base(inside: Option<&str>) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("corral-nodes-")
            .tempdir()
            .unwrap();
        let homes = tempfile::Builder::new()
            .prefix("corral-homes-")
            .tempdir()
            .unwrap();
        std::fs::set_permissions(homes.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
        let data = dir.path().canonicalize().unwrap();
        Self {
            base: inside.map_or_else(|| data.clone(), |name| data.join(name)),
            homes: homes.path().canonicalize().unwrap(),
            data,
            _dir: dir,
            _homes: homes,
        }
    }

    fn provider(&self) -> LocalProvider {
        LocalProvider::new(&self.base)
            .unwrap()
            .with_home_root(&self.homes)
            .unwrap()
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
            OutputStream::Notice => panic!("a node's own output is never a notice"),
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

    // Each node has its own loopback address; the kernel may give two of them the same
    // port number, which is fine.
    let hosts: std::collections::BTreeSet<&str> = records.iter().map(|r| r.host.as_str()).collect();
    assert_eq!(hosts.len(), 3, "each node listens on its own address");
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
                state(record).home().display()
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
    let gate = state(&record).home().join("go");
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
    let home = state(&record).home();
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
    let store = engine::store::Store::open(&db.url)
        .await
        .unwrap()
        .with_secret_key(engine::testing::test_secret_key());
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

/// Node creation and deletion stay cheap (the benchmark makes hundreds of nodes): 20
/// nodes made, confirmed and deleted one after another, timed per node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_nodes_are_made_and_deleted_one_by_one() {
    let fixture = Fixture::new();
    let provider = fixture.provider();
    let pool = pool();
    let count = 20;
    let started = Instant::now();
    let mut records = Vec::new();
    for n in 0..count {
        let spec = NodeSpec::for_tenant(format!("timed-{n}"), "corral-test-timing");
        records.push(provider.create(&spec).await.unwrap());
    }
    let create = started.elapsed() / count;
    let started = Instant::now();
    for record in &records {
        provider.confirm(record, &pool, CONFIRM).await.unwrap();
    }
    let confirm = started.elapsed() / count;
    for record in &records {
        pool.close(&record.id).await;
    }
    let started = Instant::now();
    for record in &records {
        provider.delete(record).await.unwrap();
    }
    let delete = started.elapsed() / count;
    println!("measured: per node create {create:?}, confirm {confirm:?}, delete {delete:?}");
}

/// Whether nodes get users of their own here: only a server running as root can switch
/// users. The isolation tests pass trivially elsewhere, saying so.
fn nodes_have_users() -> bool {
    let root = std::fs::metadata("/proc/self").unwrap().uid() == 0;
    if !root {
        eprintln!("skipped: not root, so nodes run as this user");
    }
    root
}

/// The uids of a process: real, effective, saved, filesystem.
fn uids_of(pid: i32) -> Option<Vec<u32>> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("Uid:"))?;
    line[4..]
        .split_whitespace()
        .map(|uid| uid.parse().ok())
        .collect()
}

/// Live processes any of whose uids is `uid`.
fn processes_of_uid(uid: u32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_string_lossy().parse::<i32>().ok())
        .filter(|pid| alive(*pid) && uids_of(*pid).is_some_and(|uids| uids.contains(&uid)))
        .collect()
}

fn mode_of(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().mode() & 0o7777
}

async fn create_for(
    provider: &LocalProvider,
    pool: &SessionPool,
    id: &str,
    tenant: &str,
) -> NodeRecord {
    let record = provider
        .create(&NodeSpec::for_tenant(id, tenant))
        .await
        .unwrap();
    provider.confirm(&record, pool, CONFIRM).await.unwrap();
    record
}

/// Runs `command` on the node and returns its stdout, asserting that it succeeded.
async fn run_ok(pool: &SessionPool, record: &NodeRecord, command: &str) -> String {
    let (outcome, stdout, stderr) = run_collect(pool, record, command).await;
    assert!(outcome.exit.success(), "{command}: {outcome:?} {stderr}");
    stdout
}

/// Runs `command` on the node, asserting that it failed for want of permission.
async fn assert_denied(pool: &SessionPool, record: &NodeRecord, command: &str) {
    let (outcome, stdout, stderr) = run_collect(pool, record, command).await;
    assert!(!outcome.exit.success(), "{command} succeeded: {stdout}");
    assert!(
        stderr.contains("Permission denied") || stderr.contains("Operation not permitted"),
        "{command}: {stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_commands_run_as_a_user_that_cannot_reach_the_data_dir() {
    if !nodes_have_users() {
        return;
    }
    let fixture = Fixture::in_data_dir();
    // A data dir as a server keeps it: private, its database readable by all within it.
    // An older server left the base dir open; the provider closes it.
    std::fs::set_permissions(&fixture.data, std::fs::Permissions::from_mode(0o700)).unwrap();
    let database = fixture.data.join("corral.db");
    std::fs::write(&database, "every tenant's secrets").unwrap();
    std::fs::set_permissions(&database, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::create_dir(&fixture.base).unwrap();
    std::fs::set_permissions(&fixture.base, std::fs::Permissions::from_mode(0o755)).unwrap();
    let leftover = fixture.base.join("leftover");
    std::fs::write(&leftover, "a file readable by all").unwrap();
    std::fs::set_permissions(&leftover, std::fs::Permissions::from_mode(0o644)).unwrap();

    let provider = fixture.provider();
    assert_eq!(provider.isolation(), NodeIsolation::SeparateUsers);
    assert!(provider.isolation().explanation().contains("unprivileged"));
    let pool = pool();
    let record = create_for(&provider, &pool, "isolated", "corral-test-isolated").await;
    let node = state(&record);

    // (a) Not root, not the server's uid: the node user the record names.
    let ids = run_ok(&pool, &record, "id -u; id -g; id -un; echo \"$HOME\"; pwd").await;
    let lines: Vec<&str> = ids.lines().collect();
    let uid: u32 = lines[0].parse().unwrap();
    let server = std::fs::metadata("/proc/self").unwrap().uid();
    assert_ne!(uid, 0);
    assert_ne!(uid, server);
    assert_ne!(lines[1], "0");
    assert_eq!(lines[2], record.user);
    assert!(record.user.starts_with("corral-"), "{}", record.user);
    let home = node.home();
    assert_eq!(lines[3], home.display().to_string());
    assert_eq!(lines[4], home.display().to_string());
    assert!(home.starts_with(&fixture.homes), "{}", home.display());
    // sshd itself runs as root; only the sessions drop to the node user.
    assert_eq!(uids_of(node.pid.unwrap()).unwrap(), vec![0; 4]);

    // (b) Nothing under the data dir is within reach.
    for path in [&database, &leftover, &node.dir.join("node.json")] {
        assert_denied(&pool, &record, &format!("cat {}", path.display())).await;
    }
    assert_denied(
        &pool,
        &record,
        &format!("cat {}", record.client_key_path.display()),
    )
    .await;
    assert_denied(&pool, &record, &format!("ls {}", fixture.base.display())).await;
    // Nor are the other homes under the home root listed to it.
    assert_denied(&pool, &record, &format!("ls {}", fixture.homes.display())).await;

    // The node user may read its authorized_keys (sshd reads it as the user) but not
    // change or replace it.
    let area = node.home_area.clone().unwrap();
    let authorized_keys = area.join("authorized_keys");
    run_ok(
        &pool,
        &record,
        &format!("cat {} >/dev/null", authorized_keys.display()),
    )
    .await;
    assert_denied(
        &pool,
        &record,
        &format!("echo x >> {}", authorized_keys.display()),
    )
    .await;
    assert_denied(
        &pool,
        &record,
        &format!("rm -f {}", authorized_keys.display()),
    )
    .await;
    assert_denied(&pool, &record, &format!("mkdir {}/mine", area.display())).await;
    // It writes in its home, of course.
    run_ok(
        &pool,
        &record,
        "mkdir -p corral/services && touch corral/services/x",
    )
    .await;

    // The modes the layout promises.
    assert_eq!(mode_of(&fixture.base), 0o700);
    assert_eq!(mode_of(&node.dir), 0o700);
    assert_eq!(mode_of(&record.client_key_path), 0o600);
    assert_eq!(mode_of(&fixture.homes), 0o711);
    assert_eq!(mode_of(area.parent().unwrap()), 0o711);
    assert_eq!(mode_of(&area), 0o711);
    assert_eq!(mode_of(&authorized_keys), 0o644);
    assert_eq!(std::fs::metadata(&authorized_keys).unwrap().uid(), 0);
    assert_eq!(mode_of(&home), 0o700);
    assert_eq!(std::fs::metadata(&home).unwrap().uid(), uid);
    // The node dir links to the home, for admins and tools looking there.
    assert!(node.dir.join("home/corral/services/x").exists());

    provider.delete(&record).await.unwrap();
    assert!(!area.exists() && !node.dir.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tenants_get_users_of_their_own_and_delete_leaves_nothing_of_either() {
    if !nodes_have_users() {
        return;
    }
    let fixture = Fixture::new();
    let provider = fixture.provider();
    let pool = pool();
    let (a, b) = tokio::join!(
        create_for(&provider, &pool, "tenant-a-node", "corral-test-tenant-a"),
        create_for(&provider, &pool, "tenant-b-node", "corral-test-tenant-b"),
    );
    // A second node of a tenant runs as that tenant's user.
    let a2 = create_for(&provider, &pool, "tenant-a-node-2", "corral-test-tenant-a").await;
    assert_ne!(a.user, b.user);
    assert_eq!(a.user, a2.user);
    let uid_a: u32 = run_ok(&pool, &a, "id -u").await.trim().parse().unwrap();
    let uid_b: u32 = run_ok(&pool, &b, "id -u").await.trim().parse().unwrap();
    assert_ne!(uid_a, uid_b);
    assert_eq!(run_ok(&pool, &a2, "id -u").await.trim(), uid_a.to_string());

    // (c) One tenant's node cannot read, list or signal the other's.
    run_ok(&pool, &b, "echo secret > mine; chmod 644 mine").await;
    let home_b = state(&b).home();
    assert_denied(&pool, &a, &format!("cat {}/mine", home_b.display())).await;
    assert_denied(&pool, &a, &format!("ls {}", home_b.display())).await;
    assert_denied(&pool, &a, &format!("touch {}/planted", home_b.display())).await;
    let services = "nohup sleep 4443 >/dev/null 2>&1 & \
                    setsid sh -c 'sleep 4444' >/dev/null 2>&1 < /dev/null & \
                    (setsid sleep 4445 >/dev/null 2>&1 < /dev/null &); \
                    sleep 4447 >/dev/null 2>&1 & echo $!";
    let sleeper: i32 = run_ok(&pool, &b, services).await.trim().parse().unwrap();
    assert_denied(&pool, &a, &format!("kill -0 {sleeper}")).await;
    run_ok(
        &pool,
        &a,
        "setsid sh -c 'sleep 4446' >/dev/null 2>&1 < /dev/null &",
    )
    .await;
    for service in ["sleep 4444", "sleep 4445", "sleep 4446"] {
        let mut seen = false;
        for _ in 0..200 {
            seen = !pids_with_cmdline(service).is_empty();
            if seen {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(seen, "{service} started");
    }
    assert!(!processes_of_uid(uid_a).is_empty());
    assert!(!processes_of_uid(uid_b).is_empty());

    // (d) Deleting every node leaves no process of either user and no home.
    for record in [&a, &a2, &b] {
        provider.delete(record).await.unwrap();
        assert!(!state(record).home_area.unwrap().exists());
        assert!(!state(record).dir.exists());
    }
    assert_eq!(processes_of_uid(uid_a), Vec::<i32>::new());
    assert_eq!(processes_of_uid(uid_b), Vec::<i32>::new());
    assert_eq!(
        LocalProvider::processes_under(&fixture.base),
        Vec::<i32>::new()
    );
    for service in [
        "sleep 4443",
        "sleep 4444",
        "sleep 4445",
        "sleep 4446",
        "sleep 4447",
    ] {
        assert_eq!(pids_with_cmdline(service), Vec::<i32>::new(), "{service}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_runs_as_its_user_again_after_adoption_and_restart() {
    if !nodes_have_users() {
        return;
    }
    let fixture = Fixture::new();
    let pool = pool();
    let record = {
        let provider = fixture.provider();
        create_for(&provider, &pool, "reborn", "corral-test-reborn").await
    };
    let before = run_ok(&pool, &record, "id -u; echo \"$HOME\"").await;
    assert_eq!(pool.tracked_hosts(), 1);
    pool.close(&record.id).await;
    assert_eq!(
        pool.tracked_hosts(),
        0,
        "an idle host's channel cap is forgotten"
    );

    // (e) Another provider object, as after a restart: with its sshd running, and dead.
    let provider = fixture.provider();
    let adopted = provider.adopt(&record).await.unwrap();
    assert_eq!(adopted, record);
    assert_eq!(
        run_ok(&pool, &adopted, "id -u; echo \"$HOME\"").await,
        before
    );
    LocalProvider::kill_everything_under(&fixture.base);
    // Even a provider with another home root adopts it: the record says where its home is.
    let provider = LocalProvider::new(&fixture.base).unwrap();
    let restarted = provider.adopt(&record).await.unwrap();
    assert_ne!(state(&restarted).pid, state(&record).pid);
    provider.confirm(&restarted, &pool, CONFIRM).await.unwrap();
    assert_eq!(
        run_ok(&pool, &restarted, "id -u; echo \"$HOME\"").await,
        before
    );
    provider.delete(&restarted).await.unwrap();
    assert!(!state(&record).home_area.unwrap().exists());
}

/// A node recorded before nodes had users of their own (user root, home and authorized
/// keys in its node dir) is still adopted, restarted and deleted as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_of_the_old_layout_is_adopted_and_deleted() {
    if !nodes_have_users() {
        return;
    }
    let fixture = Fixture::new();
    let provider = fixture.provider();
    let pool = pool();
    let made = provider.create(&NodeSpec::new("veteran")).await.unwrap();
    // Turn it into what the old code left behind.
    LocalProvider::kill_everything_under(&fixture.base);
    let node = state(&made);
    let area = node.home_area.clone().unwrap();
    let key = std::fs::read(area.join("authorized_keys")).unwrap();
    for link in ["home", "authorized_keys"] {
        std::fs::remove_file(node.dir.join(link)).unwrap();
    }
    std::fs::create_dir(node.dir.join("home")).unwrap();
    std::fs::write(node.dir.join("authorized_keys"), key).unwrap();
    std::fs::remove_dir_all(&area).unwrap();
    let mut old = made.clone();
    old.user = "root".to_owned();
    old.provider_state = serde_json::json!({
        "dir": node.dir,
        "pid": node.pid,
        "limits": node.limits,
    });
    std::fs::write(
        node.dir.join("node.json"),
        serde_json::to_string(&old).unwrap(),
    )
    .unwrap();

    let provider = fixture.provider();
    let adopted = provider.adopt(&old).await.unwrap();
    assert_eq!(adopted.user, "root");
    assert_eq!(state(&adopted).home_area, None);
    provider.confirm(&adopted, &pool, CONFIRM).await.unwrap();
    let seen = run_ok(&pool, &adopted, "id -u; pwd").await;
    assert_eq!(seen, format!("0\n{}\n", node.dir.join("home").display()));
    // Creating it again (a retried task) adopts it too.
    let again = provider.create(&NodeSpec::new("veteran")).await.unwrap();
    assert_eq!(again.user, "root");
    provider.delete(&adopted).await.unwrap();
    assert!(!node.dir.exists());
    assert!(sshd_pids(&adopted).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_home_root_node_users_cannot_reach_or_others_can_write_is_refused() {
    if !nodes_have_users() {
        return;
    }
    let fixture = Fixture::new();
    let closed = tempfile::tempdir().unwrap();
    std::fs::set_permissions(closed.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let error = LocalProvider::new(&fixture.base)
        .unwrap()
        .with_home_root(closed.path().join("homes"))
        .unwrap_err();
    assert!(matches!(error, ProviderError::NodeHomes { .. }), "{error}");
    assert!(error.to_string().contains("chmod o+x"), "{error}");

    let open = tempfile::tempdir().unwrap();
    std::fs::set_permissions(open.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let error = LocalProvider::new(&fixture.base)
        .unwrap()
        .with_home_root(open.path())
        .unwrap_err();
    assert!(
        error.to_string().contains("writable by root alone"),
        "{error}"
    );

    // A missing home root is made, passable but not listable.
    let parent = tempfile::tempdir().unwrap();
    std::fs::set_permissions(parent.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let made = parent.path().join("a/b");
    LocalProvider::new(&fixture.base)
        .unwrap()
        .with_home_root(&made)
        .unwrap();
    assert_eq!(mode_of(&made), 0o711);
    assert_eq!(mode_of(&parent.path().join("a")), 0o755);
}

/// The attack of issue 38: a step's `env -i setsid sleep …` lost the node's environment
/// marker and left sshd's process tree, so it outlived the node's deletion. The node's
/// cgroup holds it all the same (where the host lets Corral make cgroups, as here),
/// and delete kills it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_that_shed_the_nodes_environment_dies_with_the_node() {
    let fixture = Fixture::new();
    let provider = fixture.provider();
    let pool = pool();
    let record = create_confirmed(&provider, &pool, "escapee").await;
    let cgroup = state(&record)
        .cgroup
        .expect("this host gives nodes cgroups");
    let needle = format!("sleep 7{}", std::process::id());
    let escape = format!("(env -i setsid {needle} >/dev/null 2>&1 < /dev/null &) ; echo started");
    let (outcome, stdout, _) = run_collect(&pool, &record, &escape).await;
    assert!(outcome.exit.success());
    assert_eq!(stdout, "started\n");
    // The process once it is `sleep` itself: until its exec it is still `env`, or the
    // subshell starting it, whose command lines name the needle too and which still
    // carry the node's environment (the check below read one of them under load).
    let is_sleep = |pid: &i32| {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        String::from_utf8_lossy(&cmdline)
            .replace('\0', " ")
            .starts_with(&needle)
    };
    let mut escaped = Vec::new();
    for _ in 0..200 {
        escaped = pids_with_cmdline(&needle)
            .into_iter()
            .filter(is_sleep)
            .collect();
        if !escaped.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(escaped.len(), 1, "{needle} started on the node");
    let environment = std::fs::read(format!("/proc/{}/environ", escaped[0])).unwrap();
    assert!(
        !String::from_utf8_lossy(&environment).contains("CORRAL_LOCAL_NODE"),
        "it carries no marker"
    );
    pool.close(&record.id).await;
    provider.delete(&record).await.unwrap();
    assert_eq!(
        pids_with_cmdline(&needle),
        Vec::<i32>::new(),
        "{needle} survived"
    );
    assert!(!cgroup.exists(), "the node's cgroup is gone");
}

/// The pids in the cgroup at `path` (none when it is gone).
fn cgroup_members(path: &Path) -> Vec<i32> {
    std::fs::read_to_string(path.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect()
}

/// Fair CPU between clusters (issue 42): the nodes of one cluster run in one CPU group
/// and another cluster's in another, so the scheduler weighs clusters, not processes.
/// Sessions inherit the group; the group goes with the cluster's last node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_nodes_of_a_cluster_share_one_cpu_group_of_their_own() {
    if !Path::new("/sys/fs/cgroup/cpu/cgroup.procs").exists() {
        // The check below is for hosts with a v1 cpu controller, as this kind of machine
        // has; elsewhere nodes have no CPU group and `cpu_group` stays `None`.
        eprintln!("skipped: no cgroup v1 cpu controller on this host");
        return;
    }
    let fixture = Fixture::new();
    let provider = fixture.provider();
    let pool = pool();
    let mut made = Vec::new();
    for (id, cluster) in [("big-1", "big"), ("big-2", "big"), ("small-1", "small")] {
        let spec = NodeSpec {
            cluster_id: Some(cluster.to_owned()),
            ..NodeSpec::new(id)
        };
        let record = provider.create(&spec).await.unwrap();
        provider.confirm(&record, &pool, CONFIRM).await.unwrap();
        made.push(record);
    }
    let groups: Vec<PathBuf> = made
        .iter()
        .map(|record| {
            state(record)
                .cpu_group
                .expect("this host gives clusters a CPU group")
        })
        .collect();
    assert_eq!(groups[0], groups[1], "one cluster, one group");
    assert_ne!(groups[0], groups[2], "another cluster, another group");
    for (record, group) in made.iter().zip(&groups) {
        let members = cgroup_members(group);
        for pid in sshd_pids(record) {
            assert!(
                members.contains(&pid),
                "{}'s sshd {pid} is in {}",
                record.id,
                group.display()
            );
        }
    }
    // A step's processes are in their cluster's group too.
    let in_group = run_ok(&pool, &made[2], "cat /proc/self/cgroup").await;
    let name = groups[2].file_name().unwrap().to_str().unwrap().to_owned();
    assert!(
        in_group
            .lines()
            .any(|line| line.contains(":cpu") && line.ends_with(&name)),
        "{in_group}"
    );

    // The big cluster's group stays while one of its nodes does.
    for record in &made[..1] {
        pool.close(&record.id).await;
        provider.delete(record).await.unwrap();
    }
    assert!(groups[0].exists(), "the cluster still has a node");
    for record in &made[1..] {
        pool.close(&record.id).await;
        provider.delete(record).await.unwrap();
    }
    assert!(
        !groups[0].exists(),
        "the big cluster's group went with its last node"
    );
    assert!(
        !groups[2].exists(),
        "the small cluster's group went with its node"
    );
}
