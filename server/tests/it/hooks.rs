//! Lifecycle hooks (issue 43) against real HTTP receivers on 127.0.0.1: a job's
//! events arrive signed (checked here with an HMAC of our own, not Corral's); a
//! receiver that is down gets the delivery once it is back, once, with one delivery id;
//! a gate refusing more than 4 nodes refuses a 5-node create through the API and the
//! CLI and nothing is stored; a gate that is down refuses with its policy; a hook
//! to a private address is refused when saved unless the operator allows the range; and
//! the API reference describes the health and replacement events' bodies (their
//! delivery end to end is engine/tests/it/hook_events.rs, with real nodes).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use engine::hooks::{Deliverer, DeliverySettings, HookNetwork};
use engine::queue::{ClaimLimits, JobId, JobState, Outcome, Queue};
use engine::store::users::Role;
use engine::store::{now_ms, Backend, Store};
use engine::testing::TestDatabase;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{json_of, spawn_with_store, with_catalog, ApiUser, TestApp, PASSWORD};
use crate::support::test_server::{self, text};

/// Far longer than anything here takes; a bound so a broken loop fails its test.
const PATIENCE: Duration = Duration::from_secs(60);

/// A test server whose hooks may reach loopback (`--hook-allow 127.0.0.0/8`), or only
/// public addresses.
async fn spawn(backend: Backend, allow_loopback: bool) -> TestApp {
    let db = TestDatabase::new(backend).await;
    let network = if allow_loopback {
        HookNetwork::allowing(vec!["127.0.0.0/8".parse().unwrap()])
    } else {
        HookNetwork::default()
    };
    let store = Store::open(&db.url)
        .await
        .unwrap()
        .with_secret_key(engine::testing::test_secret_key())
        .with_hook_network(network);
    spawn_with_store(db, store).await
}

/// One request a receiver got.
#[derive(Debug, Clone)]
struct Received {
    headers: HeaderMap,
    body: Bytes,
}

impl Received {
    fn header(&self, name: &str) -> String {
        self.headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

/// What a receiver answers a request with.
type Answer = fn(&Value) -> (StatusCode, String);

#[derive(Clone)]
struct Receiver {
    got: Arc<Mutex<Vec<Received>>>,
    answer: Answer,
}

impl Receiver {
    fn new(answer: Answer) -> Self {
        Self {
            got: Arc::default(),
            answer,
        }
    }

    fn got(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }

    /// Serves on `listener` until the test ends.
    fn serve(&self, listener: tokio::net::TcpListener) {
        let router = axum::Router::new()
            .fallback(record)
            .with_state(self.clone());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    }

    /// Serves on a free loopback port; returns its address.
    async fn start(&self) -> SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        self.serve(listener);
        address
    }
}

async fn record(
    State(receiver): State<Receiver>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, String) {
    let parsed = serde_json::from_slice(&body).unwrap_or(Value::Null);
    receiver
        .got
        .lock()
        .unwrap()
        .push(Received { headers, body });
    (receiver.answer)(&parsed)
}

fn accept(_: &Value) -> (StatusCode, String) {
    (StatusCode::OK, "thanks".to_owned())
}

/// A gate allowing clusters of at most 4 nodes.
fn at_most_four_nodes(question: &Value) -> (StatusCode, String) {
    let nodes = question["plan"]["nodes_after"].as_u64().unwrap_or(0);
    let answer = if nodes > 4 {
        json!({"allow": false, "reason": format!("{nodes} nodes: this team may have at most 4")})
    } else {
        json!({"allow": true})
    };
    (StatusCode::OK, answer.to_string())
}

/// HMAC-SHA256 (RFC 2104) over sha2, in hex: the receiver's own check of the
/// signature, independent of the ring code Corral signs with.
fn hmac_sha256_hex(key: &[u8], message: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let inner_pad: Vec<u8> = block.iter().map(|byte| byte ^ 0x36).collect();
    let outer_pad: Vec<u8> = block.iter().map(|byte| byte ^ 0x5c).collect();
    let inner = Sha256::new()
        .chain_update(&inner_pad)
        .chain_update(message)
        .finalize();
    let outer = Sha256::new()
        .chain_update(&outer_pad)
        .chain_update(inner)
        .finalize();
    outer.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Whether `request` carries a valid signature of its timestamp and body with `secret`.
fn verifies(request: &Received, secret: &str) -> bool {
    let timestamp = request.header("Corral-Timestamp");
    let mut signed = format!("{timestamp}.").into_bytes();
    signed.extend_from_slice(&request.body);
    request.header("Corral-Signature")
        == format!("sha256={}", hmac_sha256_hex(secret.as_bytes(), &signed))
}

/// Adds a hook through the API; its id and secret.
async fn add_hook(app: &TestApp, admin: &ApiUser, body: Value) -> (String, String) {
    let (status, created) = json_of(
        app.call(admin, Method::POST, "/api/v1/hooks", Some(&body))
            .await,
    )
    .await;
    assert_eq!(status, 201, "{created}");
    (
        created["hook"]["id"].as_str().unwrap().to_owned(),
        created["secret"].as_str().unwrap().to_owned(),
    )
}

/// Runs every step of the job as a worker would report it (each succeeding).
async fn run_job(queue: &Queue, job_id: &JobId) -> JobState {
    run_job_at(queue, job_id, now_ms()).await
}

/// [`run_job`] at the time `at` (a job submitted by a janitor round run at a later
/// time than now cannot be claimed before then).
async fn run_job_at(queue: &Queue, job_id: &JobId, at: i64) -> JobState {
    while let Some(task) = queue
        .claim("hooks-test", 60_000, ClaimLimits::default(), at)
        .await
        .unwrap()
    {
        queue
            .complete(&task.lease(), &Outcome::succeeded(), at)
            .await
            .unwrap();
    }
    queue.job(job_id).await.unwrap().state
}

/// Sends due deliveries until `done` holds (or [`PATIENCE`] runs out).
async fn deliver_until(deliverer: &Deliverer, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < PATIENCE, "deliveries never got there");
        deliverer.run_once().await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn quick_retries() -> DeliverySettings {
    DeliverySettings {
        first_backoff: Duration::from_millis(200),
        max_backoff: Duration::from_millis(400),
        ..DeliverySettings::default()
    }
}

async fn job_events_arrive_signed(backend: Backend) {
    let app = spawn(backend, true).await;
    let admin = with_catalog(&app, "acme").await;
    let receiver = Receiver::new(accept);
    let address = receiver.start().await;
    let (hook_id, secret) = add_hook(
        &app,
        &admin,
        json!({"url": format!("http://{address}/corral"),
               "events": ["job.started", "job.succeeded", "job.failed"]}),
    )
    .await;
    // A second tenant's hook hears nothing of this tenant's jobs.
    let other = with_catalog(&app, "other").await;
    let other_receiver = Receiver::new(accept);
    let other_address = other_receiver.start().await;
    add_hook(
        &app,
        &other,
        json!({"url": format!("http://{other_address}/"), "events": ["job.succeeded"]}),
    )
    .await;

    let (status, created) = json_of(
        app.call(
            &admin,
            Method::POST,
            "/api/v1/clusters",
            Some(&json!({"name": "shop", "template": "lifecycle", "size": 2})),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let job_id = JobId::from(created["job_id"].as_str().unwrap());
    let cluster_id = created["cluster"]["id"].as_str().unwrap().to_owned();
    assert_eq!(run_job(&app.queue, &job_id).await, JobState::Succeeded);
    let ended = Instant::now();

    let deliverer = Deliverer::new(app.store.clone(), DeliverySettings::default());
    deliver_until(&deliverer, || receiver.got().len() >= 2).await;
    println!(
        "job.started and job.succeeded delivered {} ms after the job ended",
        ended.elapsed().as_millis()
    );
    let got = receiver.got();
    assert_eq!(got.len(), 2, "started and succeeded, nothing else");
    let mut events = Vec::new();
    for request in &got {
        assert!(
            verifies(request, &secret),
            "signature of {:?}",
            request.headers
        );
        assert!(!verifies(request, "another secret"));
        let body = request.json();
        assert_eq!(body["schema"], 1);
        assert_eq!(
            request.header("Corral-Event"),
            body["event"].as_str().unwrap()
        );
        assert_eq!(body["tenant"]["name"], "acme");
        assert_eq!(body["cluster"]["id"], cluster_id.as_str());
        assert_eq!(body["cluster"]["name"], "shop");
        assert_eq!(body["job"]["id"], job_id.as_str());
        assert_eq!(body["job"]["operation"], "create");
        assert_eq!(body["job"]["requested_by"], "acme-admin");
        assert_eq!(
            body["links"]["job"],
            format!("/clusters/{cluster_id}/jobs/{job_id}")
        );
        let age = now_ms() / 1000 - request.header("Corral-Timestamp").parse::<i64>().unwrap();
        assert!((0..3600).contains(&age), "a current Unix time");
        events.push(body["event"].as_str().unwrap().to_owned());
    }
    events.sort();
    assert_eq!(events, ["job.started", "job.succeeded"]);
    assert!(
        other_receiver.got().is_empty(),
        "another tenant's hook heard nothing"
    );

    // The log shows each delivery's one attempt with the receiver's answer.
    let (status, deliveries) = json_of(
        app.call(
            &admin,
            Method::GET,
            &format!("/api/v1/hooks/{hook_id}/deliveries"),
            None,
        )
        .await,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(deliveries["total"], 2);
    for delivery in deliveries["items"].as_array().unwrap() {
        assert_eq!(delivery["state"], "delivered", "{delivery}");
        assert_eq!(delivery["log"][0]["status"], 200);
        assert_eq!(delivery["log"][0]["response_excerpt"], "thanks");
    }
    // The secret is in no answer after the one that made the hook.
    for path in [
        "/api/v1/hooks".to_owned(),
        format!("/api/v1/hooks/{hook_id}"),
        format!("/api/v1/hooks/{hook_id}/deliveries"),
        "/api/v1/audit".to_owned(),
    ] {
        let text = app
            .call(&admin, Method::GET, &path, None)
            .await
            .text()
            .await
            .unwrap();
        assert!(!text.contains(&secret), "{path} shows the secret");
    }
}

/// Fails the job's first step for good (every retry fails too); the job's state.
async fn fail_job(queue: &Queue, job_id: &JobId) -> JobState {
    let started = Instant::now();
    loop {
        assert!(started.elapsed() < PATIENCE, "the job never failed");
        let state = queue.job(job_id).await.unwrap().state;
        if state.is_finished() {
            return state;
        }
        match queue
            .claim("hooks-test", 60_000, ClaimLimits::default(), now_ms())
            .await
            .unwrap()
        {
            Some(task) => {
                queue
                    .complete(
                        &task.lease(),
                        &Outcome::failed("exit status 3: port 80 is taken"),
                        now_ms(),
                    )
                    .await
                    .unwrap();
            }
            // Waiting out a retry's backoff.
            None => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

async fn a_failed_job_names_its_step_in_json_and_slack(backend: Backend) {
    let app = spawn(backend, true).await;
    let admin = with_catalog(&app, "acme").await;
    let receiver = Receiver::new(accept);
    let address = receiver.start().await;
    let (_, secret) = add_hook(
        &app,
        &admin,
        json!({"url": format!("http://{address}/json"), "events": ["job.failed"]}),
    )
    .await;
    add_hook(
        &app,
        &admin,
        json!({"url": format!("http://{address}/slack"), "events": ["job.failed"],
               "format": "slack"}),
    )
    .await;
    let (status, created) = json_of(
        app.call(
            &admin,
            Method::POST,
            "/api/v1/clusters",
            Some(&json!({"name": "shop", "template": "lifecycle", "size": 2})),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let job_id = JobId::from(created["job_id"].as_str().unwrap());
    assert_eq!(fail_job(&app.queue, &job_id).await, JobState::Failed);

    let deliverer = Deliverer::new(app.store.clone(), DeliverySettings::default());
    deliver_until(&deliverer, || receiver.got().len() >= 2).await;
    let got = receiver.got();
    assert_eq!(got.len(), 2, "one delivery per hook");
    let json_request = got
        .iter()
        .find(|request| request.json().get("schema").is_some())
        .unwrap();
    assert!(verifies(json_request, &secret));
    let body = json_request.json();
    assert_eq!(body["event"], "job.failed");
    assert_eq!(body["job"]["state"], "failed");
    let step = &body["failed_step"];
    assert!(
        step["message"]
            .as_str()
            .unwrap()
            .contains("port 80 is taken"),
        "{body}"
    );
    assert!(step["action"].is_string(), "{body}");
    assert!(
        step["node"]
            .as_str()
            .unwrap()
            .starts_with(created["cluster"]["id"].as_str().unwrap()),
        "{body}"
    );
    let slack = got
        .iter()
        .find(|request| request.json().get("schema").is_none())
        .unwrap()
        .json();
    let text = slack["text"].as_str().unwrap();
    assert!(text.contains("shop") && text.contains("FAILED"), "{text}");
    assert!(text.contains("port 80 is taken"), "{text}");
}

async fn a_receiver_that_was_down_gets_the_delivery_once(backend: Backend) {
    let app = spawn(backend, true).await;
    let admin = app.user("admin", Role::TenantAdmin, "acme").await;
    // The receiver's port, with nothing listening on it yet.
    let parked = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = parked.local_addr().unwrap();
    drop(parked);
    let (hook_id, secret) = add_hook(
        &app,
        &admin,
        json!({"url": format!("http://{address}/"), "events": ["job.failed"]}),
    )
    .await;
    let (status, queued) = json_of(
        app.call(
            &admin,
            Method::POST,
            &format!("/api/v1/hooks/{hook_id}/test"),
            None,
        )
        .await,
    )
    .await;
    assert_eq!(status, 202, "{queued}");
    let delivery_id = queued["id"].as_str().unwrap().to_owned();

    let deliverer = Deliverer::new(app.store.clone(), quick_retries());
    let attempts = || async {
        let (_, page) = json_of(
            app.call(
                &admin,
                Method::GET,
                &format!("/api/v1/hooks/{hook_id}/deliveries"),
                None,
            )
            .await,
        )
        .await;
        page["items"][0].clone()
    };
    // Refused twice while down.
    let started = Instant::now();
    loop {
        assert!(started.elapsed() < PATIENCE);
        deliverer.run_once().await.unwrap();
        let delivery = attempts().await;
        if delivery["log"].as_array().unwrap().len() >= 2 {
            assert_eq!(delivery["state"], "pending", "{delivery}");
            assert!(delivery["log"][0]["status"].is_null(), "{delivery}");
            assert!(
                delivery["log"][0]["error"]
                    .as_str()
                    .unwrap()
                    .contains("connect"),
                "{delivery}"
            );
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Back on the same port.
    let receiver = Receiver::new(accept);
    receiver.serve(tokio::net::TcpListener::bind(address).await.unwrap());
    deliver_until(&deliverer, || !receiver.got().is_empty()).await;
    // More rounds send nothing more.
    for _ in 0..5 {
        deliverer.run_once().await.unwrap();
    }
    let got = receiver.got();
    assert_eq!(got.len(), 1, "delivered once");
    assert_eq!(got[0].header("Corral-Delivery"), delivery_id);
    assert!(verifies(&got[0], &secret));
    assert_eq!(got[0].json()["event"], "test");
    let delivery = attempts().await;
    assert_eq!(delivery["state"], "delivered", "{delivery}");
    assert_eq!(delivery["id"], delivery_id.as_str());
    assert_eq!(delivery["log"][0]["status"], 200, "newest attempt first");

    // Redelivered on request: the same id again.
    let (status, again) = json_of(
        app.call(
            &admin,
            Method::POST,
            &format!("/api/v1/hooks/{hook_id}/deliveries/{delivery_id}/redeliver"),
            None,
        )
        .await,
    )
    .await;
    assert_eq!(status, 202, "{again}");
    deliver_until(&deliverer, || receiver.got().len() >= 2).await;
    assert_eq!(receiver.got()[1].header("Corral-Delivery"), delivery_id);
}

/// `corral ARGS` with its config in `config`, run off the runtime's thread: the test
/// server answering the CLI runs on that thread.
async fn cli(config: &std::path::Path, args: &[&str], stdin: &str) -> std::process::Output {
    let config = config.to_owned();
    let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
    let stdin = stdin.to_owned();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        test_server::corral(&config, &args, &stdin)
    })
    .await
    .unwrap()
}

/// A CLI config directory signed in to `app` as `username`.
async fn cli_login(app: &TestApp, username: &str) -> tempfile::TempDir {
    let config = tempfile::tempdir().unwrap();
    let output = cli(
        config.path(),
        &[
            "login",
            "--server",
            &app.address,
            "--username",
            username,
            "--password-stdin",
        ],
        &format!("{PASSWORD}\n"),
    )
    .await;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    config
}

async fn clusters_of(app: &TestApp, user: &ApiUser) -> u64 {
    let (_, page) = json_of(app.call(user, Method::GET, "/api/v1/clusters", None).await).await;
    page["total"].as_u64().unwrap()
}

async fn a_gate_refuses_big_creates_and_nothing_is_stored(backend: Backend) {
    let app = spawn(backend, true).await;
    let admin = with_catalog(&app, "acme").await;
    let gate = Receiver::new(at_most_four_nodes);
    let address = gate.start().await;

    // Added through the CLI, which prints the secret once on a line of its own.
    let config = cli_login(&app, "acme-admin").await;
    let added = cli(
        config.path(),
        &[
            "hook",
            "add",
            &format!("http://{address}/gate"),
            "--gate",
            "create",
        ],
        "",
    )
    .await;
    assert!(added.status.success(), "{}", text(&added.stderr));
    let stdout = text(&added.stdout);
    let secret = stdout
        .lines()
        .find_map(|line| line.strip_prefix("secret: "))
        .unwrap_or_else(|| panic!("no secret line: {stdout}"))
        .to_owned();
    let listed = cli(config.path(), &["hook", "list"], "").await;
    assert!(
        text(&listed.stdout).contains("gates:      create"),
        "{}",
        text(&listed.stdout)
    );
    assert!(!text(&listed.stdout).contains(&secret));

    let (status, refused) = json_of(
        app.call(
            &admin,
            Method::POST,
            "/api/v1/clusters",
            Some(&json!({"name": "big", "template": "lifecycle", "size": 5})),
        )
        .await,
    )
    .await;
    assert_eq!(status, 403, "{refused}");
    assert_eq!(refused["error"], "gate_refused");
    let message = refused["message"].as_str().unwrap();
    assert!(message.contains("at most 4"), "{message}");
    assert!(
        !message.contains("/gate"),
        "the gate's path is not shown: {message}"
    );
    assert_eq!(clusters_of(&app, &admin).await, 0, "nothing stored");

    // The gate was asked with the request and the plan, signed.
    let asked = gate.got();
    assert_eq!(asked.len(), 1);
    assert!(verifies(&asked[0], &secret));
    let question = asked[0].json();
    assert_eq!(question["gate"], "create");
    assert_eq!(question["request"]["size"], 5);
    assert_eq!(question["plan"]["nodes_after"], 5);
    assert_eq!(question["cluster"]["name"], "big");
    assert_eq!(question["requested_by"], "acme-admin");

    // The CLI shows the gate's reason too.
    let create = cli(
        config.path(),
        &[
            "cluster",
            "create",
            "big",
            "--template",
            "lifecycle",
            "--size",
            "5",
        ],
        "",
    )
    .await;
    assert!(!create.status.success());
    assert!(
        text(&create.stderr).contains("at most 4"),
        "{}",
        text(&create.stderr)
    );
    assert_eq!(clusters_of(&app, &admin).await, 0, "nothing stored");

    // So does the portal's create form (the post its page sends).
    let (browser, csrf) = app.browser("acme-admin").await;
    let response = browser
        .post(app.url("/sfn/create-cluster"))
        .header(reqwest::header::ACCEPT, "application/json")
        .form(&[
            ("csrf", csrf.as_str()),
            ("form[name]", "big"),
            ("form[template]", "lifecycle"),
            ("form[size]", "5"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    let body = response.text().await.unwrap();
    assert!(body.contains("at most 4"), "{body}");
    assert_eq!(clusters_of(&app, &admin).await, 0, "nothing stored");

    // Within the gate's rule it goes ahead.
    let (status, created) = json_of(
        app.call(
            &admin,
            Method::POST,
            "/api/v1/clusters",
            Some(&json!({"name": "small", "template": "lifecycle", "size": 3})),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(clusters_of(&app, &admin).await, 1);
}

async fn a_gate_that_is_down_refuses_by_its_policy(backend: Backend) {
    let app = spawn(backend, true).await;
    let admin = with_catalog(&app, "acme").await;
    let parked = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = parked.local_addr().unwrap();
    drop(parked);
    let (refusing, _) = add_hook(
        &app,
        &admin,
        json!({"url": format!("http://{address}/"), "gates": ["create"], "timeout_secs": 2}),
    )
    .await;
    let (status, refused) = json_of(
        app.call(
            &admin,
            Method::POST,
            "/api/v1/clusters",
            Some(&json!({"name": "web", "template": "lifecycle", "size": 2})),
        )
        .await,
    )
    .await;
    assert_eq!(status, 403, "{refused}");
    assert_eq!(refused["error"], "gate_refused");
    assert!(
        refused["message"].as_str().unwrap().contains("unreachable"),
        "{refused}"
    );
    assert_eq!(clusters_of(&app, &admin).await, 0);

    // With the policy "allow", a gate that is down lets creates through.
    let response = app
        .call(
            &admin,
            Method::DELETE,
            &format!("/api/v1/hooks/{refusing}"),
            None,
        )
        .await;
    assert_eq!(response.status(), 204);
    add_hook(
        &app,
        &admin,
        json!({"url": format!("http://{address}/"), "gates": ["create"], "on_failure": "allow"}),
    )
    .await;
    let (status, created) = json_of(
        app.call(
            &admin,
            Method::POST,
            "/api/v1/clusters",
            Some(&json!({"name": "web", "template": "lifecycle", "size": 2})),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{created}");
}

async fn private_addresses_are_refused_unless_allowed(backend: Backend) {
    let app = spawn(backend, false).await;
    let admin = app.user("admin", Role::TenantAdmin, "acme").await;
    for (url, address) in [
        ("http://127.0.0.1:8080/hook", "127.0.0.1"),
        ("http://10.1.2.3/hook", "10.1.2.3"),
        ("http://169.254.169.254/latest/meta-data", "169.254.169.254"),
        ("http://[::1]:9/", "::1"),
        ("http://localhost:9/", "localhost"),
    ] {
        let (status, refused) = json_of(
            app.call(
                &admin,
                Method::POST,
                "/api/v1/hooks",
                Some(&json!({"url": url, "events": ["job.failed"]})),
            )
            .await,
        )
        .await;
        assert_eq!(status, 422, "{url}: {refused}");
        assert_eq!(refused["details"][0]["path"], "url", "{refused}");
        let message = refused["message"].as_str().unwrap();
        if address != "localhost" {
            assert!(message.contains(address), "{message}");
        }
        assert!(message.contains("--hook-allow"), "{message}");
    }
    for (body, field) in [
        (
            json!({"url": "ftp://example.com/", "events": ["test"]}),
            "url",
        ),
        (json!({"url": "http://8.8.8.8/"}), "events"),
        (
            json!({"url": "http://8.8.8.8/", "events": ["test"], "timeout_secs": 60}),
            "timeout_secs",
        ),
    ] {
        let (status, refused) = json_of(
            app.call(&admin, Method::POST, "/api/v1/hooks", Some(&body))
                .await,
        )
        .await;
        assert_eq!(status, 422, "{body}: {refused}");
        assert_eq!(refused["details"][0]["path"], field, "{refused}");
    }
    let (status, unknown) = json_of(
        app.call(
            &admin,
            Method::POST,
            "/api/v1/hooks",
            Some(&json!({"url": "http://8.8.8.8/", "events": ["job.done"]})),
        )
        .await,
    )
    .await;
    assert!(status == 400 || status == 422, "{unknown}");
    let (_, listed) = json_of(app.call(&admin, Method::GET, "/api/v1/hooks", None).await).await;
    assert_eq!(listed["total"], 0, "nothing stored");

    // Plain users may not add hooks.
    let user = app.user("plain", Role::User, "acme").await;
    let response = app
        .call(
            &user,
            Method::POST,
            "/api/v1/hooks",
            Some(&json!({"url": "http://8.8.8.8/", "events": ["test"]})),
        )
        .await;
    assert_eq!(response.status(), 403);
}

/// A tenant admin whose `lifecycle` template has a lease of `initial` with a 2-minute
/// grace, and a 2-node cluster of it, built (its job run); the cluster's id.
async fn leased_cluster(app: &TestApp, tenant: &str, initial: &str) -> (ApiUser, String) {
    let admin = with_catalog(app, tenant).await;
    let mut catalog = crate::helpers::lifecycle_catalog();
    catalog["clustertemplates"][0]["administration"] =
        json!({"leaseduration": {"initial": initial, "grace": "2m"}});
    let (status, body) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/catalog/import",
            Some(catalog),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, created) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/clusters",
            Some(json!({"name": "leased", "template": "lifecycle", "size": 2})),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let job_id = JobId::from(created["job_id"].as_str().unwrap());
    assert_eq!(run_job(&app.queue, &job_id).await, JobState::Succeeded);
    (admin, created["cluster"]["id"].as_str().unwrap().to_owned())
}

/// `lease.expiring` reaches a real receiver a day before the lease ends and again an
/// hour before, each once however many janitor rounds (or servers) see it, signed and
/// saying when the lease ends and the grace; extending the lease forgets the warnings.
async fn lease_warnings_arrive_once_a_day_and_an_hour_before(backend: Backend) {
    let app = spawn(backend, true).await;
    let (admin, cluster_id) = leased_cluster(&app, "acme", "50m").await;
    let receiver = Receiver::new(accept);
    let address = receiver.start().await;
    let (hook_id, secret) = add_hook(
        &app,
        &admin,
        json!({"url": format!("http://{address}/lease"), "events": ["lease.expiring"]}),
    )
    .await;
    let (_, shown) = app
        .call_json(
            &admin,
            Method::GET,
            &format!("/api/v1/clusters/{cluster_id}"),
            None,
        )
        .await;
    let expires = shown["lease_expires_ms"].as_i64().unwrap();
    let sweep = |at: i64| {
        let queue = app.queue.clone();
        async move { engine::operations::lease::sweep(&queue, at).await.unwrap() }
    };
    let deliverer = Deliverer::new(app.store.clone(), DeliverySettings::default());

    // Rounds run as if it were earlier (the lease ends in 50 min): with 10 h left,
    // within the day; two janitors' rounds at once send it once.
    let earlier = now_ms() - 10 * 3_600_000;
    assert_eq!(
        sweep(earlier - 14 * 3_600_000 - 60_000).await.warned,
        0,
        "a day away"
    );
    let (first, second) = tokio::join!(sweep(earlier), sweep(earlier));
    assert_eq!(first.warned + second.warned, 1, "{first:?} {second:?}");
    assert_eq!(
        sweep(earlier + 3_600_000).await.warned,
        0,
        "the day's warning is sent once"
    );
    deliver_until(&deliverer, || !receiver.got().is_empty()).await;
    // Now, within the hour: the hour's warning, once.
    assert_eq!(sweep(now_ms()).await.warned, 1);
    assert_eq!(sweep(now_ms()).await.warned, 0);
    deliver_until(&deliverer, || receiver.got().len() >= 2).await;
    let got = receiver.got();
    assert_eq!(got.len(), 2);
    for (request, warning) in got.iter().zip(["day", "hour"]) {
        assert!(verifies(request, &secret));
        let body = request.json();
        assert_eq!(request.header("Corral-Event"), "lease.expiring");
        assert_eq!(body["event"], "lease.expiring");
        assert_eq!(body["cluster"]["id"], cluster_id.as_str());
        assert_eq!(body["cluster"]["name"], "leased");
        assert_eq!(body["lease"]["warning"], warning, "{body}");
        assert_eq!(
            body["lease"]["expires"],
            engine::store::hooks::rfc3339(expires).as_str()
        );
        assert_eq!(body["lease"]["grace_seconds"], 120);
        assert_eq!(body["links"]["cluster"], format!("/clusters/{cluster_id}"));
    }
    let (_, deliveries) = app
        .call_json(
            &admin,
            Method::GET,
            &format!("/api/v1/hooks/{hook_id}/deliveries"),
            None,
        )
        .await;
    assert_eq!(deliveries["total"], 2, "{deliveries}");

    // A new end gets its own warnings.
    let (status, body) = app
        .call_json(
            &admin,
            Method::PUT,
            &format!("/api/v1/clusters/{cluster_id}/lease"),
            Some(json!({"seconds": 3 * 3600})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(sweep(now_ms()).await.warned, 1, "the new end's day warning");
}

/// At the end of a lease with a grace the janitor submits one stop job (not a delete)
/// and the cluster reads as stopped with its deletion time; extending while that job
/// runs is refused (409, saying to retry), and once it ended starts the cluster again;
/// other changes wait for the extension; past the grace the cluster is deleted.
async fn a_lease_stop_is_undone_by_extending_within_the_grace(backend: Backend) {
    let app = spawn(backend, true).await;
    let (admin, cluster_id) = leased_cluster(&app, "acme", "2h").await;
    let path = format!("/api/v1/clusters/{cluster_id}");
    let (_, shown) = app.call_json(&admin, Method::GET, &path, None).await;
    let expires = shown["lease_expires_ms"].as_i64().unwrap();
    let sweep = |at: i64| {
        let queue = app.queue.clone();
        async move { engine::operations::lease::sweep(&queue, at).await.unwrap() }
    };
    // Rounds run as if it were later: jobs are ordered by the time they were submitted,
    // so the one waiting is the one to look at.
    let waiting = |queue: Queue| {
        let cluster_id = cluster_id.clone();
        async move {
            let jobs = queue.cluster_jobs(&cluster_id).await.unwrap();
            let job = jobs
                .into_iter()
                .find(|job| job.state == JobState::Queued)
                .expect("a job waits");
            (job.id, job.operation)
        }
    };

    let after_end = expires + 1_000;
    let (first, second) = tokio::join!(sweep(after_end), sweep(after_end));
    assert_eq!(
        (
            first.stopped + second.stopped,
            first.deleted + second.deleted
        ),
        (1, 0),
        "one stop: {first:?} {second:?}"
    );
    assert_eq!(sweep(after_end + 1_000).await.stopped, 0);
    let (stop_job, operation) = waiting(app.queue.clone()).await;
    assert_eq!(operation, api_types::Operation::Stop);
    let (_, shown) = app.call_json(&admin, Method::GET, &path, None).await;
    assert_eq!(shown["lease_deletes_at_ms"], expires + 120_000);
    // The CLI says so too: its list with the time left, its show with the deletion time.
    let config = cli_login(&app, "acme-admin").await;
    let listed = cli(config.path(), &["cluster", "list"], "").await;
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    assert!(
        text(&listed.stdout).contains("stopped; deleted in 2 h"),
        "{}",
        text(&listed.stdout)
    );
    let shown_cli = cli(config.path(), &["cluster", "show", &cluster_id], "").await;
    assert!(shown_cli.status.success(), "{}", text(&shown_cli.stderr));
    let deletes_at = chrono::DateTime::<chrono::Utc>::from_timestamp_millis(expires + 120_000)
        .unwrap()
        .format("%Y-%m-%d %H:%M:%S UTC")
        .to_string();
    assert!(
        text(&shown_cli.stdout).contains(&format!(
            "stopped: lease expired; deleted at {deletes_at} unless extended"
        )),
        "{}",
        text(&shown_cli.stdout)
    );

    // The stop job has not run: extending is refused, saying why and what to do.
    let lease = format!("{path}/lease");
    let extend = json!({"seconds": 3600});
    let (status, body) = app
        .call_json(&admin, Method::PUT, &lease, Some(extend.clone()))
        .await;
    assert_eq!(status, 409, "{body}");
    let message = body["message"].as_str().unwrap();
    assert!(
        message.contains("being stopped because its lease ended"),
        "{message}"
    );
    assert!(message.contains("again once that job ended"), "{message}");
    assert_eq!(
        run_job_at(&app.queue, &stop_job, after_end).await,
        JobState::Succeeded
    );
    // Stopped by its lease, it takes no other change.
    let (status, body) = app
        .call_json(
            &admin,
            Method::POST,
            &format!("{path}/changes"),
            Some(json!({"operation": "restart"})),
        )
        .await;
    assert_eq!(status, 409, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("extend the lease first"),
        "{body}"
    );
    let (status, body) = app
        .call_json(&admin, Method::PUT, &lease, Some(extend.clone()))
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.get("lease_deletes_at_ms").is_none(), "{body}");
    let (start_job, operation) = waiting(app.queue.clone()).await;
    assert_eq!(operation, api_types::Operation::Start);
    assert_eq!(run_job(&app.queue, &start_job).await, JobState::Succeeded);

    // The new lease ends: stopped again, then deleted once its grace is over.
    let (_, shown) = app.call_json(&admin, Method::GET, &path, None).await;
    let expires = shown["lease_expires_ms"].as_i64().unwrap();
    assert_eq!(sweep(expires + 1).await.stopped, 1);
    let (stop_job, _) = waiting(app.queue.clone()).await;
    assert_eq!(
        run_job_at(&app.queue, &stop_job, expires + 1).await,
        JobState::Succeeded
    );
    assert_eq!(
        sweep(expires + 119_000).await,
        Default::default(),
        "still in its grace"
    );
    assert_eq!(sweep(expires + 120_000).await.deleted, 1);
    let (delete_job, operation) = waiting(app.queue.clone()).await;
    assert_eq!(operation, api_types::Operation::Delete);
    assert_eq!(
        run_job_at(&app.queue, &delete_job, expires + 120_000).await,
        JobState::Succeeded
    );
    let (_, shown) = app.call_json(&admin, Method::GET, &path, None).await;
    assert_eq!(shown["state"], "deleted");
}

engine::on_both_backends!(
    job_events_arrive_signed,
    a_failed_job_names_its_step_in_json_and_slack,
    a_receiver_that_was_down_gets_the_delivery_once,
    a_gate_refuses_big_creates_and_nothing_is_stored,
    a_gate_that_is_down_refuses_by_its_policy,
    private_addresses_are_refused_unless_allowed,
    lease_warnings_arrive_once_a_day_and_an_hour_before,
    a_lease_stop_is_undone_by_extending_within_the_grace,
);

/// The API reference (generated from the wire types) describes the event body's
/// optional fields of the health and replacement events, and names the events.
#[tokio::test]
async fn the_api_reference_describes_health_and_replacement_bodies() {
    let app = spawn(Backend::Sqlite, false).await;
    let doc: Value = app.get("/api/v1/openapi.json").await.json().await.unwrap();
    let schemas = &doc["components"]["schemas"];
    let body = &schemas["HookEventBody"]["properties"];
    for field in ["health", "replacement", "lease", "approval"] {
        assert!(
            body.get(field).is_some(),
            "HookEventBody lacks {field}: {body}"
        );
    }
    for (schema, fields) in [
        (
            "HookHealth",
            &["node", "service", "message", "down_since"][..],
        ),
        ("HookReplacement", &["old", "new"][..]),
        ("HookNode", &["id", "number", "hostname"][..]),
    ] {
        for field in fields {
            assert!(
                schemas[schema]["properties"].get(*field).is_some(),
                "{schema}.{field}: {}",
                schemas[schema]
            );
        }
    }
    let events = schemas["HookEvent"].to_string();
    for event in ["health.down", "health.up", "node.replaced"] {
        assert!(events.contains(event), "{event}: {events}");
    }
    assert!(!events.contains("Reserved"), "{events}");
}
