//! Operating a real `corral serve`: `/metrics` while a cluster is made, a SIGTERM
//! that drains (running steps handed back to the queue, taken at once by the next
//! process), and `corral admin backup` / `restore` of the embedded deployment.

use std::path::Path;
use std::time::{Duration, Instant};

use domain::names::{ClusterName, TemplateName};
use domain::plan::Action;
use domain::solver::SolveRequest;
use engine::operations::{create_cluster, CreateRequest};
use engine::queue::{JobId, JobState, Queue, SubmitOptions, TaskRecordId, TaskState};
use engine::store::tenants::{TenantSwitch, DEFAULT_TENANT_ID};
use engine::store::{now_ms, Backend, Store};
use engine::testing::TestDatabase;
use serde_json::{json, Value};

use crate::support::test_server::{self, corral, text};
use crate::support::{lifecycle, prometheus};

/// A 3-node web-stack of the demo catalog, made through the API while Prometheus's
/// view of the server is read every 50 ms from the unauthenticated metrics listener.
#[tokio::test(flavor = "multi_thread")]
async fn metrics_move_while_a_cluster_is_created() {
    let data = tempfile::tempdir().unwrap();
    let server = test_server::serve(data.path(), 4, &[("CORRAL_METRICS_LISTEN", "127.0.0.1:0")]);
    let metrics_url = server
        .announced
        .iter()
        .find_map(|line| line.strip_prefix("Metrics at "))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no metrics address in {:?}", server.announced))
        .to_owned();
    let scraper = reqwest::Client::new();
    let read = || async {
        let response = scraper.get(&metrics_url).send().await.unwrap();
        assert_eq!(response.status(), 200);
        prometheus::parse(&response.text().await.unwrap())
    };
    let before = read().await;
    assert_eq!(before.total("corral_database_up", &[]), 1.0);
    assert_eq!(before.total("corral_task_attempts_total", &[]), 0.0);

    // The main listener serves the same page to the first admin (a superadmin) only.
    let anonymous = scraper
        .get(format!("{}/metrics", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    let (browser, csrf) = test_server::sign_in(&server.url, "admin", &server.password).await;
    let signed_in = browser
        .get(format!("{}/metrics", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(signed_in.status(), 200);

    let created = browser
        .post(format!("{}/api/v1/clusters", server.url))
        .header("x-csrf-token", &csrf)
        .json(&json!({"name": "watched", "template": "web-stack", "size": 3}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let created: Value = created.json().await.unwrap();
    let job_url = format!(
        "{}/api/v1/jobs/{}",
        server.url,
        created["job_id"].as_str().unwrap()
    );

    // Attempts counted at each scrape until the job ends.
    let mut seen = Vec::new();
    let started = Instant::now();
    let job = loop {
        seen.push(read().await.total("corral_task_attempts_total", &[]));
        let job: Value = browser
            .get(&job_url)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if job["state"] != "queued" && job["state"] != "running" {
            break job;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "{job}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(job["state"], "succeeded", "{job}");
    let after = read().await;
    let attempts = after.total("corral_task_attempts_total", &[]);
    let tasks = job["tasks_total"].as_f64().unwrap();
    eprintln!(
        "{} scrapes during the create saw task attempts {:?} → {attempts} ({tasks} tasks)",
        seen.len(),
        {
            let mut distinct = seen.clone();
            distinct.dedup();
            distinct
        }
    );
    assert!(
        seen.windows(2).all(|pair| pair[0] <= pair[1]),
        "a counter went down: {seen:?}"
    );
    assert!(
        seen.iter().any(|count| *count > 0.0 && *count < attempts),
        "no scrape saw the create half done: {seen:?}"
    );
    assert!(attempts >= tasks, "{attempts} attempts for {tasks} tasks");
    assert_eq!(
        after.total("corral_task_attempts_total", &[("outcome", "succeeded")]),
        tasks
    );
    assert!(after.total("corral_task_duration_seconds", &[("action", "start")]) >= 1.0);
    assert!(after.total("corral_tasks_claimed_total", &[]) >= tasks);
    assert!(after.total("corral_ssh_handshakes_total", &[("result", "ok")]) >= 3.0);
    assert_eq!(after.total("corral_jobs", &[("state", "succeeded")]), 1.0);
    assert_eq!(
        after.total("corral_tasks", &[]),
        0.0,
        "no unfinished job is left"
    );
    assert_eq!(
        after.total("corral_nodes", &[("provider", "local"), ("state", "ready")]),
        3.0
    );
    assert_eq!(
        after.total("corral_worker_slots", &[("state", "free")]),
        4.0
    );
    assert!(
        after.total(
            "corral_http_requests_total",
            &[
                ("route", "/api/v1/clusters"),
                ("method", "POST"),
                ("status", "201")
            ]
        ) >= 1.0
    );
    drop(server);
}

/// The lifecycle catalog whose `slow` service's start step runs for a minute the first
/// time and ends at once the next, so a drained step is visibly taken up again.
fn catalog_with_a_long_step() -> Value {
    let mut catalog = lifecycle::catalog();
    let slow = catalog["services"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|service| service["name"] == "slow")
        .unwrap();
    slow["provisioner"]["actions"]["start"]["fields"]["run"] = json!(
        "if [ -f slow.once ]; then echo slow resumed; else touch slow.once; echo slow starting; sleep 60; fi"
    );
    catalog
}

const LEASE_SECS: i64 = 60;

async fn sigterm_hands_running_steps_back(backend: Backend) {
    let db = TestDatabase::new(backend).await;
    let data = tempfile::tempdir().unwrap();
    let data_dir = data.path().canonicalize().unwrap();
    let store = Store::open(&db.url).await.unwrap();
    let queue = Queue::new(store.clone());
    lifecycle::seed(&store, &data_dir, &catalog_with_a_long_step()).await;
    let url = db.url.redacted();
    let lease = LEASE_SECS.to_string();
    let env = [
        ("CORRAL_DATABASE_URL", url.as_str()),
        ("CORRAL_WORKER_LEASE_SECS", lease.as_str()),
        ("CORRAL_SHUTDOWN_GRACE_SECS", "1"),
    ];
    let mut first = test_server::serve(&data_dir, 4, &env);

    let mut solve = SolveRequest::of_size(2);
    solve.services = Some(
        ["base", "worker", "web", "slow"]
            .map(str::to_owned)
            .to_vec(),
    );
    let request = CreateRequest {
        tenant_id: DEFAULT_TENANT_ID.to_owned(),
        owner_id: None,
        name: ClusterName::parse("drained").unwrap(),
        template: TemplateName::parse("lifecycle").unwrap(),
        solve,
        config: serde_json::Map::new(),
    };
    let (_, job_id) = create_cluster(&queue, &request, SubmitOptions::default(), now_ms())
        .await
        .unwrap();
    let slow_start = wait_for_running_slow_start(&queue, &job_id).await;

    let stopped = first.terminate();
    assert!(stopped.success(), "the server exits cleanly: {stopped}");
    let log = std::fs::read_to_string(data_dir.join("server.log")).unwrap();
    let summary = log
        .lines()
        .find(|line| line.starts_with("corral: stopped in"))
        .unwrap_or_else(|| panic!("no drain summary in the log:\n{log}"));
    eprintln!("{}: {summary}", backend.as_str());
    assert!(!summary.contains(" 0 running task"), "{summary}");

    let first_attempts = queue.task_attempts(&slow_start).await.unwrap();
    assert_eq!(first_attempts.len(), 1, "{first_attempts:?}");
    let handed_back = &first_attempts[0];
    assert!(
        handed_back
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("handed the task back"),
        "{handed_back:?}"
    );
    let task = queue
        .job_tasks(&job_id)
        .await
        .unwrap()
        .into_iter()
        .find(|task| task.id == slow_start)
        .unwrap();
    assert_eq!(
        task.state,
        TaskState::Ready,
        "the task is queued again at once"
    );
    assert_eq!(task.lease_owner, None);

    // The next process takes it up without waiting for the lease to run out.
    let second = test_server::serve(&data_dir, 4, &env);
    let ended = wait_for_end(&queue, &job_id).await;
    assert_eq!(ended, JobState::Succeeded);
    let attempts = queue.task_attempts(&slow_start).await.unwrap();
    assert_eq!(attempts.len(), 2, "{attempts:?}");
    assert_eq!(attempts[1].outcome, "succeeded");
    assert!(
        attempts[1].stdout.contains("slow resumed"),
        "{:?}",
        attempts[1]
    );
    // Without the hand-back the task could not be claimed before its lease (renewed
    // every third of it) ran out: two thirds of a lease after the stop at the earliest.
    let waited_ms = attempts[1].started_at_ms - handed_back.finished_at_ms;
    assert!(
        waited_ms < LEASE_SECS * 1000 * 2 / 3,
        "taken up {waited_ms} ms after the hand-back"
    );
    eprintln!(
        "{}: the handed-back step ran again {waited_ms} ms after the stop",
        backend.as_str()
    );
    drop(second);
    store.close().await;
}

/// The task of the `slow` service's start step, once it runs.
async fn wait_for_running_slow_start(queue: &Queue, job_id: &JobId) -> TaskRecordId {
    let started = Instant::now();
    loop {
        let tasks = queue.job_tasks(job_id).await.unwrap();
        let running = tasks.iter().find(|task| {
            task.state == TaskState::Running
                && task.action == Action::Start
                && task.service.as_ref().map(|s| s.as_str()) == Some("slow")
        });
        if let Some(task) = running {
            return task.id.clone();
        }
        let job = queue.job(job_id).await.unwrap();
        assert!(job.state.is_active(), "the job ended first: {job:?}");
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "slow never started"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn wait_for_end(queue: &Queue, job_id: &JobId) -> JobState {
    let started = Instant::now();
    loop {
        let job = queue.job(job_id).await.unwrap();
        if job.state.is_finished() {
            return job.state;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "{job:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

mod sqlite {
    #[tokio::test(flavor = "multi_thread")]
    async fn sigterm_hands_running_steps_back() {
        super::sigterm_hands_running_steps_back(engine::store::Backend::Sqlite).await;
    }
}

mod postgres {
    #[tokio::test(flavor = "multi_thread")]
    async fn sigterm_hands_running_steps_back() {
        super::sigterm_hands_running_steps_back(engine::store::Backend::Postgres).await;
    }
}

/// The command failed, saying `expected` on stderr.
fn refused_with(output: &std::process::Output, expected: &str) {
    assert!(
        !output.status.success(),
        "it succeeded: {}",
        text(&output.stdout)
    );
    let stderr = text(&output.stderr);
    assert!(stderr.contains(expected), "{stderr}");
}

/// `corral admin ARGS` on the data directory `data`.
fn admin(data: &Path, args: &[&str]) -> std::process::Output {
    let mut full = vec!["admin"];
    full.extend_from_slice(args);
    let data = data.to_str().unwrap();
    full.extend_from_slice(&["--data-dir", data]);
    corral(data.as_ref(), &full, "")
}

/// A backup taken while the server runs and is being used, restored into another data
/// directory: the users, clusters and sealed secrets come back, and the restored
/// server signs the same admin in.
#[tokio::test(flavor = "multi_thread")]
async fn backup_while_serving_then_restore_elsewhere() {
    let source = tempfile::tempdir().unwrap();
    let server = test_server::serve(source.path(), 2, &[]);
    let config = tempfile::tempdir().unwrap();
    test_server::login_as_admin(config.path(), &server);
    let created = corral(
        config.path(),
        &[
            "cluster",
            "create",
            "kept",
            "--template",
            "web-stack",
            "--size",
            "3",
            "--wait",
        ],
        "",
    );
    assert!(created.status.success(), "{}", text(&created.stderr));

    let backups = tempfile::tempdir().unwrap();
    let archive = backups.path().join("backup.tar");
    let backup = admin(
        source.path(),
        &["backup", "--out", archive.to_str().unwrap()],
    );
    assert!(backup.status.success(), "{}", text(&backup.stderr));
    assert!(
        text(&backup.stdout).contains("keep it private"),
        "{}",
        text(&backup.stdout)
    );
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&archive).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "the archive is private: {mode:o}");
    }
    // A second backup never overwrites the first.
    let again = admin(
        source.path(),
        &["backup", "--out", archive.to_str().unwrap()],
    );
    refused_with(&again, "already exists");

    // Restoring into the running server's directory is refused, and changes nothing.
    let refused = admin(
        source.path(),
        &["restore", "--from", archive.to_str().unwrap()],
    );
    refused_with(&refused, "stop it before restoring");
    let password = server.password.clone();
    drop(server);

    let target = tempfile::tempdir().unwrap();
    let restored = admin(
        target.path(),
        &["restore", "--from", archive.to_str().unwrap()],
    );
    assert!(restored.status.success(), "{}", text(&restored.stderr));
    let restarted = test_server::serve(target.path(), 2, &[]);
    assert!(
        restarted.password.is_empty(),
        "the restored admin exists: no first-start password"
    );
    let config = tempfile::tempdir().unwrap();
    let login = test_server::login(config.path(), &restarted, &password, &[]);
    assert!(login.status.success(), "{}", text(&login.stderr));
    let listed = corral(config.path(), &["cluster", "list"], "");
    assert!(
        text(&listed.stdout).contains("kept"),
        "{}",
        text(&listed.stdout)
    );
    drop(restarted);
}

/// A tar archive at `path` holding `entries` (name, bytes).
fn write_tar(path: &Path, entries: &[(&str, &[u8])]) {
    let mut archive = tar::Builder::new(std::fs::File::create(path).unwrap());
    for (name, bytes) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o600);
        // Written raw: `append_data` itself refuses names with `..`.
        let raw = header.as_gnu_mut().unwrap();
        raw.name[..name.len()].copy_from_slice(name.as_bytes());
        header.set_cksum();
        archive.append(&header, *bytes).unwrap();
    }
    archive.finish().unwrap();
}

/// What is not a whole, sound backup is refused with the reason, before anything in
/// the data directory moves; so is a PostgreSQL deployment.
#[test]
fn restore_refuses_what_is_not_a_backup() {
    let target = tempfile::tempdir().unwrap();
    let migrated = corral(
        target.path(),
        &["migrate", "--data-dir", target.path().to_str().unwrap()],
        "",
    );
    assert!(migrated.status.success(), "{}", text(&migrated.stderr));
    let database = std::fs::read(target.path().join("corral.db")).unwrap();
    let key = std::fs::read(target.path().join("secret.key")).unwrap();
    let files = tempfile::tempdir().unwrap();
    let manifest =
        br#"{"format":1,"corral_version":"0.1.0","created_at":"now","migrations_applied":1}"#;

    let not_tar = files.path().join("notes.txt");
    std::fs::write(&not_tar, "just some text, not an archive\n".repeat(40)).unwrap();
    let escaping = files.path().join("escaping.tar");
    write_tar(
        &escaping,
        &[("corral-backup.json", manifest), ("../evil", b"x")],
    );
    let incomplete = files.path().join("incomplete.tar");
    write_tar(
        &incomplete,
        &[("corral-backup.json", manifest), ("corral.db", &database)],
    );
    let garbage_db = files.path().join("garbage.tar");
    write_tar(
        &garbage_db,
        &[
            ("corral-backup.json", manifest),
            ("corral.db", b"not a database at all"),
            ("secret.key", &key),
        ],
    );
    let cases = [
        (not_tar, "not a backup archive"),
        (escaping, "\"../evil\", which no backup holds"),
        (incomplete, "has no secret.key"),
        (garbage_db, "is not an SQLite database"),
        (files.path().join("missing.tar"), "cannot read"),
    ];
    for (archive, expected) in cases {
        let refused = admin(
            target.path(),
            &["restore", "--from", archive.to_str().unwrap()],
        );
        let stderr = text(&refused.stderr);
        assert!(
            !refused.status.success(),
            "{} was restored",
            archive.display()
        );
        assert!(stderr.contains(expected), "{}: {stderr}", archive.display());
        assert_eq!(
            std::fs::read(target.path().join("corral.db")).unwrap(),
            database
        );
        assert_eq!(
            std::fs::read(target.path().join("secret.key")).unwrap(),
            key
        );
        let left: Vec<String> = std::fs::read_dir(target.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.contains("restore"))
            .collect();
        assert!(left.is_empty(), "{} left {left:?}", archive.display());
    }

    let postgres = corral(
        target.path(),
        &[
            "admin",
            "backup",
            "--out",
            files.path().join("pg.tar").to_str().unwrap(),
            "--database-url",
            "postgres://corral@127.0.0.1/corral",
        ],
        "",
    );
    refused_with(&postgres, "pg_dump");
}

/// A tenant marked for dedicated workers: `corral serve`'s shared workers leave its
/// job alone, `corral worker --tenant default` runs all of it; an unknown tenant name
/// stops the worker at start.
#[tokio::test(flavor = "multi_thread")]
async fn a_dedicated_tenant_is_served_only_by_its_worker() {
    let data = tempfile::tempdir().unwrap();
    let data_dir = data.path().canonicalize().unwrap();
    let url = engine::store::DatabaseUrl::sqlite_file(&data_dir.join("corral.db"));
    let store = Store::open(&url).await.unwrap();
    let queue = Queue::new(store.clone());
    lifecycle::seed(&store, &data_dir, &lifecycle::catalog()).await;
    store
        .set_tenant_switch(DEFAULT_TENANT_ID, TenantSwitch::DedicatedWorkers, true)
        .await
        .unwrap();
    let server = test_server::serve(&data_dir, 4, &[]);

    let request = CreateRequest {
        tenant_id: DEFAULT_TENANT_ID.to_owned(),
        owner_id: None,
        name: ClusterName::parse("kept-apart").unwrap(),
        template: TemplateName::parse("lifecycle").unwrap(),
        solve: SolveRequest::of_size(2),
        config: serde_json::Map::new(),
    };
    let (_, job_id) = create_cluster(&queue, &request, SubmitOptions::default(), now_ms())
        .await
        .unwrap();
    // The shared workers poll every half second: four polls, and nothing is taken.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let job = queue.job(&job_id).await.unwrap();
    assert_eq!(job.state, JobState::Queued, "{job:?}");

    let unknown = test_server::corral_to_its_end([
        "worker",
        "--tenant",
        "nosuch",
        "--data-dir",
        data_dir.to_str().unwrap(),
    ]);
    refused_with(&unknown, "--tenant nosuch: no such tenant");

    let mut worker = served::Options::worker(test_server::CORRAL, &data_dir)
        .worker_slots(4)
        .args(["--tenant", "default"])
        .start()
        .unwrap_or_else(|error| panic!("{error}"));
    let ended = wait_for_end(&queue, &job_id).await;
    let stopped = worker.terminate().unwrap();
    assert_eq!(ended, JobState::Succeeded);
    assert!(stopped.success(), "{stopped}");
    let banner = worker.running_line().unwrap_or_default();
    assert!(banner.contains("for tenant(s) default only"), "{banner}");
    let pool_prefix = format!("{}-", worker.pid());
    for task in queue.job_tasks(&job_id).await.unwrap() {
        for attempt in queue.task_attempts(&task.id).await.unwrap() {
            assert!(
                attempt.worker_id.starts_with(&pool_prefix),
                "task {} ran on {}, not the dedicated worker",
                task.number.0,
                attempt.worker_id
            );
        }
    }
    drop(server);
    store.close().await;
}

/// With the secret key in `CORRAL_SECRET_KEY`, a backup leaves it out and says so, and
/// restores with the same variable set.
#[test]
fn a_key_from_the_environment_stays_out_of_the_backup() {
    let key = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    let run = |dir: &Path, args: &[&str]| {
        let output = std::process::Command::new(test_server::CORRAL)
            .args(args)
            .arg("--data-dir")
            .arg(dir)
            .env("CORRAL_SECRET_KEY", key)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{args:?}: {}",
            text(&output.stderr)
        );
        text(&output.stdout)
    };
    let source = tempfile::tempdir().unwrap();
    run(source.path(), &["migrate"]);
    let archive = source.path().join("backup.tar");
    let said = run(
        source.path(),
        &["admin", "backup", "--out", archive.to_str().unwrap()],
    );
    assert!(said.contains("not in the archive"), "{said}");
    let names: Vec<String> = tar::Archive::new(std::fs::File::open(&archive).unwrap())
        .entries()
        .unwrap()
        .map(|entry| entry.unwrap().path().unwrap().display().to_string())
        .collect();
    assert!(!names.iter().any(|name| name == "secret.key"), "{names:?}");

    let target = tempfile::tempdir().unwrap();
    let restored = run(
        target.path(),
        &["admin", "restore", "--from", archive.to_str().unwrap()],
    );
    assert!(restored.contains("restored"), "{restored}");
    assert!(!target.path().join("secret.key").exists());
}

/// What a collector received: every export request Corral posted to `/v1/traces`, and
/// the raw bodies (to look for secrets in).
#[derive(Default)]
struct Collected {
    requests: Vec<opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest>,
    bodies: Vec<Vec<u8>>,
}

/// An OTLP/HTTP collector on loopback: decodes each protobuf export as a real collector
/// would, and answers as one does (an empty `ExportTraceServiceResponse`).
async fn start_collector() -> (String, std::sync::Arc<std::sync::Mutex<Collected>>) {
    use axum::body::Bytes;
    use prost::Message as _;
    let collected = std::sync::Arc::new(std::sync::Mutex::new(Collected::default()));
    let sink = collected.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: Bytes| async move {
            let request =
                opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest::decode(
                    body.as_ref(),
                );
            let Ok(request) = request else {
                return (axum::http::StatusCode::BAD_REQUEST, Vec::new());
            };
            let mut collected = sink.lock().unwrap();
            collected.requests.push(request);
            collected.bodies.push(body.to_vec());
            (axum::http::StatusCode::OK, Vec::new())
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{address}"), collected)
}

/// The value of attribute `key`, if the span or resource has it.
fn attribute<'a>(
    attributes: &'a [opentelemetry_proto::tonic::common::v1::KeyValue],
    key: &str,
) -> Option<&'a opentelemetry_proto::tonic::common::v1::any_value::Value> {
    attributes
        .iter()
        .find(|attribute| attribute.key == key)
        .and_then(|attribute| attribute.value.as_ref()?.value.as_ref())
}

fn string_attribute<'a>(
    attributes: &'a [opentelemetry_proto::tonic::common::v1::KeyValue],
    key: &str,
) -> Option<&'a str> {
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    match attribute(attributes, key)? {
        Value::StringValue(text) => Some(text.as_str()),
        _ => None,
    }
}

fn int_attribute(
    attributes: &[opentelemetry_proto::tonic::common::v1::KeyValue],
    key: &str,
) -> Option<i64> {
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    match attribute(attributes, key)? {
        Value::IntValue(number) => Some(*number),
        _ => None,
    }
}

/// A 3-node web-stack made through a server started with `--otlp-endpoint`: the
/// collector gets the request that asked for it, one span per task attempt, and the
/// SSH connections inside those attempts, all as the `corral` service; no secret is in
/// what was sent.
#[tokio::test(flavor = "multi_thread")]
async fn traces_reach_an_otlp_collector() {
    use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
    let (collector, collected) = start_collector().await;
    let data = tempfile::tempdir().unwrap();
    let mut server = test_server::serve(
        data.path(),
        4,
        &[
            ("CORRAL_OTLP_ENDPOINT", collector.as_str()),
            // The batch processor's delay (5 s by default), so spans arrive while the
            // test waits rather than only at the stop.
            ("OTEL_BSP_SCHEDULE_DELAY", "200"),
        ],
    );
    let (browser, csrf) = test_server::sign_in(&server.url, "admin", &server.password).await;
    let created = browser
        .post(format!("{}/api/v1/clusters", server.url))
        .header("x-csrf-token", &csrf)
        .json(&json!({"name": "traced", "template": "web-stack", "size": 3}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let created: Value = created.json().await.unwrap();
    let job_url = format!(
        "{}/api/v1/jobs/{}",
        server.url,
        created["job_id"].as_str().unwrap()
    );
    let started = Instant::now();
    let job = loop {
        let job: Value = browser
            .get(&job_url)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if job["state"] != "queued" && job["state"] != "running" {
            break job;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "{job}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(job["state"], "succeeded", "{job}");
    let tasks = usize::try_from(job["tasks_total"].as_u64().unwrap()).unwrap();

    // Spans were sent while the server ran (the batch delay), not only at the stop.
    let started = Instant::now();
    while collected.lock().unwrap().requests.is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no export arrived"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(server.terminate().success());

    let collected = collected.lock().unwrap();
    let mut spans = Vec::new();
    for request in &collected.requests {
        for resource_spans in &request.resource_spans {
            let resource = &resource_spans.resource.as_ref().unwrap().attributes;
            assert_eq!(string_attribute(resource, "service.name"), Some("corral"));
            assert_eq!(string_attribute(resource, "corral.role"), Some("serve"));
            for scope_spans in &resource_spans.scope_spans {
                spans.extend(scope_spans.spans.iter().cloned());
            }
        }
    }
    let names: std::collections::BTreeSet<&str> =
        spans.iter().map(|span| span.name.as_str()).collect();
    let create_request = spans
        .iter()
        .find(|span| span.name == "POST /api/v1/clusters")
        .unwrap_or_else(|| panic!("no request span among {names:?}"));
    assert_eq!(create_request.kind, SpanKind::Server as i32);
    assert_eq!(
        int_attribute(&create_request.attributes, "http.response.status_code"),
        Some(201),
        "{:?}",
        create_request.attributes
    );
    assert!(
        names.contains("GET /api/v1/jobs/{id}"),
        "requests are named by their route's pattern: {names:?}"
    );
    let task_spans: Vec<_> = spans
        .iter()
        .filter(|span| span.name.starts_with("task "))
        .collect();
    assert_eq!(task_spans.len(), tasks, "one span per attempt: {names:?}");
    for span in &task_spans {
        assert_eq!(
            string_attribute(&span.attributes, "outcome"),
            Some("succeeded")
        );
        let action = string_attribute(&span.attributes, "action").unwrap();
        assert_eq!(span.name, format!("task {action}"));
    }
    let connects: Vec<_> = spans
        .iter()
        .filter(|span| span.name == "ssh connect")
        .collect();
    assert!(
        connects.len() >= 2,
        "one handshake per node at least: {names:?}"
    );
    for connect in connects {
        let parent = task_spans
            .iter()
            .find(|task| task.span_id == connect.parent_span_id)
            .expect("an SSH connection is part of the task that opened it");
        assert_eq!(parent.trace_id, connect.trace_id);
        let address = string_attribute(&connect.attributes, "server.address").unwrap();
        assert!(
            address.starts_with("127."),
            "a local node's loopback address: {address}"
        );
    }
    for body in &collected.bodies {
        let body = String::from_utf8_lossy(body);
        assert!(
            !body.contains(&server.password),
            "the admin's password was exported"
        );
        assert!(!body.contains(&csrf), "a CSRF token was exported");
    }
    eprintln!(
        "{} spans in {} exports: {} task attempts, {names:?}",
        spans.len(),
        collected.requests.len(),
        task_spans.len()
    );
}
