//! Lifecycle hooks' events of the monitor and of node replacements (issue 43), end to
//! end on `local` nodes over real SSH, with the lab's own monitor (every half second)
//! and a delivery loop sending to real HTTP receivers on 127.0.0.1: the `worker`
//! service of the lifecycle template gets a health check every 2 s; killing its
//! process sends exactly one signed `health.down` (however many checks fail after it),
//! starting it again one `health.up`, and replacing its node one `node.replaced` naming
//! the old node and the new (number and hostname), in JSON and in Slack's format.
//! Two processes recording the same change at once send it once. A node that dies in
//! a cluster that heals is replaced by healing, and told as replaced the same way.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use api_types::{GateFailurePolicy, HookEvent, HookFormat, ServiceHealth};
use engine::hooks::{Deliverer, DeliverySettings, HookNetwork};
use engine::operations::ClusterChange;
use engine::queue::JobState;
use engine::resources::ResourceKind;
use engine::store::health::{CheckKey, HealthRow};
use engine::store::hooks::Hook;
use engine::store::tenants::DEFAULT_TENANT_ID;
use engine::store::{now_ms, Backend, Store, Window};
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::lab::Lab;

const JOB_LIMIT: Duration = Duration::from_secs(60);
/// Far longer than a few 2 s checks and a delivery take.
const PATIENCE: Duration = Duration::from_secs(45);
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/lifecycle");
const SECRET: &str = "the receiver's shared secret";
const SLACK_SECRET: &str = "the chat's shared secret";

/// One request a receiver got: its headers (names in lower case) and body.
#[derive(Debug, Clone)]
struct Received {
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Received {
    fn header(&self, name: &str) -> String {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
            .unwrap_or_default()
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }

    /// Whether it carries a valid `Corral-Signature` of its timestamp and body under
    /// `secret`, checked with ring's HMAC directly (not Corral's signing code).
    fn verifies(&self, secret: &str) -> bool {
        let Some(hex) = self
            .header("corral-signature")
            .strip_prefix("sha256=")
            .map(str::to_owned)
        else {
            return false;
        };
        let Some(tag) = (0..hex.len())
            .step_by(2)
            .map(|at| u8::from_str_radix(hex.get(at..at + 2)?, 16).ok())
            .collect::<Option<Vec<u8>>>()
        else {
            return false;
        };
        let mut signed = format!("{}.", self.header("corral-timestamp")).into_bytes();
        signed.extend_from_slice(&self.body);
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes());
        ring::hmac::verify(&key, &signed, &tag).is_ok()
    }
}

/// An HTTP/1.1 receiver on a free loopback port answering every POST 200.
#[derive(Clone, Default)]
struct Receiver {
    got: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    async fn start() -> (Self, String) {
        let receiver = Self::default();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/corral", listener.local_addr().unwrap());
        let got = receiver.got.clone();
        tokio::spawn(async move {
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                let got = got.clone();
                tokio::spawn(async move {
                    if let Some(request) = read_request(stream).await {
                        got.lock().unwrap().push(request);
                    }
                });
            }
        });
        (receiver, url)
    }

    fn got(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }

    /// The bodies received of `event`.
    fn of(&self, event: HookEvent) -> Vec<Received> {
        self.got()
            .into_iter()
            .filter(|request| request.header("corral-event") == event.as_str())
            .collect()
    }
}

/// Reads one request (headers, then as much body as they announce) and answers 200.
async fn read_request(mut stream: tokio::net::TcpStream) -> Option<Received> {
    let mut request = Vec::new();
    let mut buffer = [0u8; 8192];
    let (head_end, length) = loop {
        let read = stream.read(&mut buffer).await.ok()?;
        if read == 0 {
            return None;
        }
        request.extend_from_slice(&buffer[..read]);
        let Some(end) = request.windows(4).position(|window| window == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&request[..end]).to_string();
        let length = head
            .lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse::<usize>().ok())
                    .flatten()
            })
            .unwrap_or(0);
        break (end, length);
    };
    while request.len() < head_end + 4 + length {
        let read = stream.read(&mut buffer).await.ok()?;
        if read == 0 {
            return None;
        }
        request.extend_from_slice(&buffer[..read]);
    }
    let head = String::from_utf8_lossy(&request[..head_end]).to_string();
    let headers = head
        .lines()
        .skip(1)
        .filter_map(|line| {
            let (name, value) = line.split_once(':')?;
            Some((name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        })
        .collect();
    let body = request[head_end + 4..head_end + 4 + length].to_vec();
    stream
        .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nthanks")
        .await
        .ok()?;
    Some(Received { headers, body })
}

/// A lab whose lifecycle `worker` service is checked every 2 s: up while its process
/// runs; with `healing`, the template replaces dead nodes (up to half the cluster).
async fn watched_lab(backend: Backend, healing: bool) -> Lab {
    let mut catalog: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{FIXTURES}/catalog.json")).unwrap())
            .unwrap();
    let worker = catalog["services"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|service| service["name"] == "worker")
        .unwrap();
    // The check runs in the service's folder, where its start step wrote the pid.
    worker["healthcheck"] =
        serde_json::json!({"run": "kill -0 \"$(cat worker.pid)\"", "interval": 2, "timeout": 2});
    if healing {
        catalog["clustertemplates"][0]["administration"] = serde_json::json!({
            "healing": {"enabled": true, "heal_after": "1m", "max_unhealthy": 50}
        });
    }
    let script = std::fs::read(format!("{FIXTURES}/web.sh")).unwrap();
    Lab::start_catalog(
        backend,
        &catalog.to_string(),
        &[(ResourceKind::Scripts, "web.sh", script)],
    )
    .await
}

/// Registers a hook of the default tenant hearing the three events.
async fn add_hook(store: &Store, url: &str, format: HookFormat, secret: &str) {
    let hook = Hook {
        id: uuid::Uuid::new_v4().to_string(),
        tenant_id: DEFAULT_TENANT_ID.to_owned(),
        url: url.to_owned(),
        events: vec![
            HookEvent::HealthDown,
            HookEvent::HealthUp,
            HookEvent::NodeReplaced,
        ],
        gates: Vec::new(),
        format,
        timeout_ms: 5_000,
        on_failure: GateFailurePolicy::Refuse,
        created_by: None,
        created_at_ms: now_ms(),
    };
    store.insert_hook(&hook, secret).await.unwrap();
}

/// Waits until `wanted` holds, or panics saying `what`.
async fn until(what: &str, mut wanted: impl FnMut() -> bool) -> Duration {
    let started = Instant::now();
    while !wanted() {
        assert!(
            started.elapsed() < PATIENCE,
            "{what}: not within {PATIENCE:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    started.elapsed()
}

/// Waits until the worker's check row satisfies `wanted`; the row.
async fn until_worker(
    lab: &Lab,
    cluster_id: &str,
    wanted: impl Fn(&HealthRow) -> bool,
) -> HealthRow {
    let started = Instant::now();
    loop {
        let rows = lab.store.cluster_health(cluster_id).await.unwrap();
        if let Some(row) = rows
            .iter()
            .find(|row| row.service == "worker" && wanted(row))
        {
            return row.clone();
        }
        assert!(started.elapsed() < PATIENCE, "worker check: {rows:#?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn hostname_of(nodes: &[engine::store::clusters::nodes::Node], number: i64) -> String {
    nodes
        .iter()
        .find(|node| node.number == number)
        .and_then(|node| node.hostname.clone())
        .unwrap()
}

/// Sends the lab's deliveries every 100 ms, allowed to reach loopback (the operator's
/// `--hook-allow 127.0.0.0/8`: the receivers are there).
fn deliver(lab: &Lab) -> tokio::task::JoinHandle<()> {
    let sending = lab
        .store
        .clone()
        .with_hook_network(HookNetwork::allowing(vec!["127.0.0.0/8".parse().unwrap()]));
    Deliverer::new(
        sending,
        DeliverySettings {
            poll: Duration::from_millis(100),
            ..DeliverySettings::default()
        },
    )
    .spawn()
}

async fn health_and_replacement_events_arrive_once(backend: Backend) {
    let mut lab = watched_lab(backend, false).await;
    let (json, json_url) = Receiver::start().await;
    let (slack, slack_url) = Receiver::start().await;
    add_hook(&lab.store, &json_url, HookFormat::Json, SECRET).await;
    add_hook(&lab.store, &slack_url, HookFormat::Slack, SLACK_SECRET).await;
    let deliverer = deliver(&lab);

    let (cluster, job) = lab.create("watched", 2).await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    // The first answer after `unknown` is no change: nothing is sent for it.
    let up = until_worker(&lab, &cluster.id, |row| row.health == ServiceHealth::Up).await;
    let node = up.node_number;
    let nodes = lab.store.list_nodes(&cluster.id).await.unwrap();
    let hostname = hostname_of(&nodes, node);

    // The worker dies behind Corral's back.
    let (code, _) = lab
        .run_on_node(
            &cluster.id,
            node,
            "kill \"$(cat \"$HOME\"/corral/services/worker/worker.pid)\"",
        )
        .await;
    assert_eq!(code, 0);
    let took = until("health.down", || !json.of(HookEvent::HealthDown).is_empty()).await;
    eprintln!("health.down arrived {took:?} after the kill");
    // Two more failed checks later, still one.
    let down = until_worker(&lab, &cluster.id, |row| row.health == ServiceHealth::Down).await;
    let first_down = down.checked_at_ms.unwrap();
    until_worker(&lab, &cluster.id, |row| {
        row.checked_at_ms.unwrap_or(0) >= first_down + 3_500
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let downs = json.of(HookEvent::HealthDown);
    assert_eq!(downs.len(), 1, "one health.down: {downs:?}");
    let request = &downs[0];
    assert!(
        request.verifies(SECRET),
        "signature of {:?}",
        request.headers
    );
    assert!(!request.verifies("another secret"));
    let body = request.json();
    assert_eq!(body["schema"], 1);
    assert_eq!(body["event"], "health.down");
    assert_eq!(body["cluster"]["id"], cluster.id.as_str());
    assert_eq!(body["cluster"]["name"], "watched");
    assert_eq!(body["health"]["service"], "worker");
    assert_eq!(body["health"]["node"]["number"], node);
    assert_eq!(body["health"]["node"]["hostname"], hostname.as_str());
    assert_eq!(
        body["health"]["node"]["id"],
        format!("{}-{node}", cluster.id)
    );
    let message = body["health"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("the check exited with code"),
        "{message}"
    );
    assert_eq!(
        body["links"]["cluster"],
        format!("/clusters/{}", cluster.id)
    );
    assert!(
        body["job"].is_null() && body.get("replacement").is_none(),
        "{body}"
    );

    // It is started again by hand: one health.up, saying since when it was down.
    let (code, _) = lab
        .run_on_node(
            &cluster.id,
            node,
            "cd \"$HOME\"/corral/services/worker && \
             (setsid sh -c 'while :; do sleep 1; done' > /dev/null 2>&1 < /dev/null & \
              echo $! > worker.pid)",
        )
        .await;
    assert_eq!(code, 0);
    let took = until("health.up", || !json.of(HookEvent::HealthUp).is_empty()).await;
    eprintln!("health.up arrived {took:?} after the restart");
    let ups = json.of(HookEvent::HealthUp);
    assert_eq!(ups.len(), 1, "{ups:?}");
    assert!(ups[0].verifies(SECRET));
    let body = ups[0].json();
    assert_eq!(body["health"]["service"], "worker");
    assert_eq!(body["health"]["node"]["number"], node);
    assert!(body["health"]["message"].is_null(), "{body}");
    assert!(body["health"]["down_since"].is_string(), "{body}");

    // The worker's node is replaced (a user's replace-nodes, as healing submits it).
    let job = lab
        .change(
            &cluster.id,
            ClusterChange::ReplaceNodes {
                nodes: BTreeSet::from([u32::try_from(node).unwrap()]),
                accept_data_loss: false,
            },
        )
        .await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let nodes = lab.store.list_nodes(&cluster.id).await.unwrap();
    assert!(
        nodes.iter().all(|row| row.number != node),
        "old node deleted"
    );
    let successor = nodes.iter().map(|row| row.number).max().unwrap();
    assert!(successor > node);
    let took = until("node.replaced", || {
        !json.of(HookEvent::NodeReplaced).is_empty()
    })
    .await;
    eprintln!("node.replaced arrived {took:?} after the job ended");
    let replaced = json.of(HookEvent::NodeReplaced);
    assert_eq!(replaced.len(), 1, "{replaced:?}");
    assert!(replaced[0].verifies(SECRET));
    let body = replaced[0].json();
    assert_eq!(body["replacement"]["old"]["number"], node);
    assert_eq!(body["replacement"]["old"]["hostname"], hostname.as_str());
    assert_eq!(body["replacement"]["new"]["number"], successor);
    assert_eq!(
        body["replacement"]["new"]["hostname"],
        hostname_of(&nodes, successor).as_str()
    );
    assert_eq!(body["job"]["id"], job.as_str());
    assert_eq!(body["job"]["operation"], "replace nodes");
    assert_eq!(body["job"]["state"], "succeeded");
    assert_eq!(
        body["links"]["job"],
        format!("/clusters/{}/jobs/{job}", cluster.id)
    );
    // The successor's worker answers: its first answer is no change either.
    until_worker(&lab, &cluster.id, |row| {
        row.node_number == successor && row.health == ServiceHealth::Up
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(json.got().len(), 3, "down, up, replaced and nothing else");

    // The Slack hook heard the same, a line each.
    until("three slack lines", || slack.got().len() >= 3).await;
    let mut lines: Vec<String> = slack
        .got()
        .iter()
        .map(|request| {
            assert!(request.verifies(SLACK_SECRET));
            request.json()["text"].as_str().unwrap().to_owned()
        })
        .collect();
    lines.sort();
    eprintln!("slack: {lines:#?}");
    assert_eq!(lines.len(), 3, "{lines:?}");
    let mentions = |needle: &str| lines.iter().any(|line| line.contains(needle));
    assert!(
        mentions(&format!(
            "worker on node {node} ({hostname}) of cluster watched stopped answering"
        )),
        "{lines:?}"
    );
    assert!(mentions("answers its health check again"), "{lines:?}");
    assert!(
        mentions(&format!(
            "node {node} ({hostname}) of cluster watched was replaced by node {successor} ("
        )),
        "{lines:?}"
    );

    // Two processes record the same change at once (the monitor stopped, so nothing
    // else checks): one of them sends it.
    lab.stop_workers().await;
    let key = CheckKey {
        cluster_id: cluster.id.clone(),
        node_number: successor,
        service: "worker".to_owned(),
    };
    let other = Store::open(&lab.store_url())
        .await
        .unwrap()
        .with_secret_key(engine::testing::test_secret_key());
    let now = now_ms();
    let (first, second) = tokio::join!(
        lab.store
            .record_check(&key, ServiceHealth::Down, Some("a"), now, now + 60_000),
        other.record_check(&key, ServiceHealth::Down, Some("b"), now, now + 60_000),
    );
    first.unwrap();
    second.unwrap();
    let (hooks, _) = lab
        .store
        .hooks_window(
            Some(DEFAULT_TENANT_ID),
            Window {
                offset: 0,
                limit: 100,
            },
        )
        .await
        .unwrap();
    for hook in hooks {
        let (deliveries, _) = lab
            .store
            .deliveries_window(
                &hook.id,
                Window {
                    offset: 0,
                    limit: 100,
                },
            )
            .await
            .unwrap();
        let downs = deliveries
            .iter()
            .filter(|delivery| delivery.event == "health.down")
            .count();
        assert_eq!(downs, 2, "the kill's and one of the two processes'");
    }
    deliverer.abort();
}

/// Healing: the worker's node dies (its sshd and everything under it killed); the
/// monitor finds its machine gone, a heal job replaces it, and `node.replaced` names
/// the dead node and its successor (the dead node's checks failing first send
/// `health.down`, which is true).
async fn a_healed_node_is_told_as_replaced(backend: Backend) {
    let lab = watched_lab(backend, true).await;
    let (json, json_url) = Receiver::start().await;
    add_hook(&lab.store, &json_url, HookFormat::Json, SECRET).await;
    let deliverer = deliver(&lab);
    let (cluster, job) = lab.create("healed", 2).await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let node = until_worker(&lab, &cluster.id, |row| row.health == ServiceHealth::Up)
        .await
        .node_number;
    let hostname = hostname_of(&lab.store.list_nodes(&cluster.id).await.unwrap(), node);

    let dead = lab.nodes_dir.join(engine::execute::node_id(
        &cluster.id,
        u32::try_from(node).unwrap(),
    ));
    assert!(engine::provider::LocalProvider::kill_everything_under(&dead) > 0);
    let took = until("node.replaced", || {
        !json.of(HookEvent::NodeReplaced).is_empty()
    })
    .await;
    eprintln!("node.replaced arrived {took:?} after the node died");
    let replaced = json.of(HookEvent::NodeReplaced);
    assert_eq!(replaced.len(), 1, "{replaced:?}");
    assert!(replaced[0].verifies(SECRET));
    let body = replaced[0].json();
    let nodes = lab.store.list_nodes(&cluster.id).await.unwrap();
    let successor = nodes.iter().map(|row| row.number).max().unwrap();
    assert!(successor > node && nodes.iter().all(|row| row.number != node));
    assert_eq!(body["replacement"]["old"]["number"], node);
    assert_eq!(body["replacement"]["old"]["hostname"], hostname.as_str());
    assert_eq!(body["replacement"]["new"]["number"], successor);
    assert_eq!(
        body["replacement"]["new"]["hostname"],
        hostname_of(&nodes, successor).as_str()
    );
    assert_eq!(body["job"]["operation"], "replace nodes");
    assert!(
        body["job"]["requested_by"].is_null(),
        "healing asked: {body}"
    );
    deliverer.abort();
}

engine::on_both_backends!(
    health_and_replacement_events_arrive_once,
    a_healed_node_is_told_as_replaced
);
