//! The database goes away and comes back (issue 45 point 1): two `corral serve` and one
//! `corral worker` share a private PostgreSQL, which is stopped twice in the middle of
//! a create (once `fast`, once `immediate`, as a crash) and started again about three
//! seconds later.
//!
//! While it is down the API and the pages answer 503 with the plain message (within
//! the client's bound, never a hang), `/readyz` answers 503 and `/healthz` says not
//! ready. Once it is back every process reconnects by itself: the create finishes,
//! no task ran twice at once (nor two on one node), every attempt's events are
//! stored, an event stream opened before the first outage received every event
//! without a gap and without closing, and each process's log says "database
//! unavailable" once per outage, not once per retry.

use std::time::{Duration, Instant};

use api_types::{EventKind, DATABASE_UNAVAILABLE};
use engine::accounts::{create_user, Password};
use engine::queue::{Event, JobId, JobState, Queue};
use engine::store::users::Role as UserRole;
use engine::store::Store;
use serde_json::{json, Value};

use crate::support::chaos::{check_attempt_log, wait_for_end, wait_for_progress, Process, Role};
use crate::support::private_postgres::{PrivatePostgres, StopMode};
use crate::support::{lifecycle, one_heavy_test_at_a_time, test_server};

const NODES: u32 = 6;
const PASSWORD: &str = "the database will be right back";
/// Long enough that a step running through an outage keeps its lease: its end,
/// written while the database is down, must be retried until it lands.
const LEASE_SECS: u64 = 20;
/// When each outage starts (the create's progress) and how the server stops.
const OUTAGES: [(f64, StopMode); 2] = [(0.2, StopMode::Fast), (0.5, StopMode::Immediate)];
/// How long the database stays down at least.
const DOWN_FOR: Duration = Duration::from_secs(3);
/// How long the database stays up between outages at least: a failure sooner after
/// it came back counts as the same outage (the pools' acquire timeout, 3 s), and each
/// outage must be said once.
const UP_FOR: Duration = Duration::from_secs(5);
/// The bound on any one answer during an outage: the pools give up connecting after
/// 3 s, so a request that takes longer than this hangs, and fails the test.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);
/// The bound on waits for a state the processes reach by themselves.
const SETTLE_WITHIN: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread")]
async fn the_database_restarted_twice_mid_create_loses_nothing() {
    // First, so that it is dropped last (see `one_heavy_test_at_a_time`).
    let _heavy = one_heavy_test_at_a_time().await;
    let postgres = PrivatePostgres::start();
    let url = postgres.create_database("corral").await;
    let data = tempfile::Builder::new()
        .prefix("corral-db-outage-")
        .tempdir()
        .unwrap();
    let data_dir = data.path().canonicalize().unwrap();
    let store = Store::open(&url).await.unwrap();
    let queue = Queue::new(store.clone());
    lifecycle::seed(&store, &data_dir, &slow_catalog()).await;
    create_user(
        &store,
        "outage",
        UserRole::TenantAdmin,
        None,
        &Password::new(PASSWORD),
    )
    .await
    .unwrap();
    let mut processes: Vec<Process> = [
        ("serve-a", Role::Serve),
        ("serve-b", Role::Serve),
        ("worker-c", Role::Worker),
    ]
    .into_iter()
    .map(|(name, role)| {
        Process::new(name, role, data_dir.clone(), url.clone()).with_lease_secs(LEASE_SECS)
    })
    .collect();
    for process in &mut processes {
        process.start();
    }
    let servers: Vec<String> = processes
        .iter()
        .filter_map(|process| process.url())
        .map(|base| base.trim_end_matches('/').to_owned())
        .collect();
    assert_eq!(servers.len(), 2);

    // Signed in through the first server; the session is in the database, so the
    // same cookie works on the second.
    let (client, csrf) = test_server::sign_in(&servers[0], "outage", PASSWORD).await;
    let created = client
        .post(format!("{}/api/v1/clusters", servers[0]))
        .header("x-csrf-token", &csrf)
        .json(&json!({"name": "outage", "template": "lifecycle", "size": NODES}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let created: Value = created.json().await.unwrap();
    let job_id = JobId::from(created["job_id"].as_str().unwrap());
    // A stream opened before the first outage, on the server that did not take the
    // create, follows the job to its end.
    let stream = tokio::spawn(follow(
        client.clone(),
        format!("{}/api/v1/jobs/{job_id}/stream", servers[1]),
    ));

    let mut restarted_at: Option<Instant> = None;
    for (fraction, mode) in OUTAGES {
        wait_for_progress(&queue, &job_id, fraction).await;
        if let Some(restarted_at) = restarted_at {
            tokio::time::sleep(UP_FOR.saturating_sub(restarted_at.elapsed())).await;
        }
        let job = queue.job(&job_id).await.unwrap();
        assert!(
            job.state.is_active(),
            "the create ended before outage at {fraction}: make its steps slower"
        );
        let stopped_at = Instant::now();
        postgres.stop(mode);
        answers_while_down(&client, &servers).await;
        tokio::time::sleep(DOWN_FOR.saturating_sub(stopped_at.elapsed())).await;
        postgres.start_again();
        restarted_at = Some(Instant::now());
        for server in &servers {
            wait_until_ready(server).await;
        }
    }

    assert_eq!(wait_for_end(&queue, &job_id).await, JobState::Succeeded);
    let (tasks, attempts) = check_attempt_log(&queue, &job_id).await;
    for server in &servers {
        let clusters = client
            .get(format!("{server}/api/v1/clusters"))
            .send()
            .await
            .unwrap();
        assert_eq!(clusters.status(), 200, "{server} answers again");
    }

    // Every attempt's start and the end of each task are among the stored events.
    let stored = all_events(&queue, &job_id).await;
    for task in queue.job_tasks(&job_id).await.unwrap() {
        let states: Vec<(Option<i64>, &str)> = stored
            .iter()
            .filter(|event| {
                event.kind == EventKind::State && event.task_id.as_ref() == Some(&task.id)
            })
            .map(|event| (event.attempt, event.data.as_str()))
            .collect();
        for attempt in queue.task_attempts(&task.id).await.unwrap() {
            let started = format!("running (attempt {})", attempt.attempt);
            assert!(
                states.contains(&(Some(attempt.attempt), started.as_str())),
                "task {}: no start event of attempt {}: {states:?}",
                task.number.0,
                attempt.attempt
            );
        }
        assert!(
            states.iter().any(|(_, data)| data.starts_with("succeeded")),
            "task {}: no succeeded event: {states:?}",
            task.number.0
        );
    }

    // The stream that was open through both outages received exactly those, in order.
    let followed = tokio::time::timeout(SETTLE_WITHIN, stream)
        .await
        .expect("the event stream did not end after the job did")
        .unwrap();
    assert_eq!(followed.failure, None, "the stream gave up");
    assert!(followed.ended, "the stream closed before its end event");
    let stored_ids: Vec<i64> = stored.iter().map(|event| event.id).collect();
    assert_eq!(
        followed.ids, stored_ids,
        "the stream's events are not the stored ones"
    );

    // Each process said so once per outage, and once when it was back. A process says
    // it is back at its next call that gets through, which a loaded machine may take a
    // few seconds to make after the last outage.
    for process in &processes {
        let deadline = Instant::now() + Duration::from_secs(20);
        let (unavailable, back) = loop {
            let log = std::fs::read_to_string(process.latest_log()).unwrap();
            let counts = (
                log.matches("database unavailable").count(),
                log.matches("database available again").count(),
            );
            if counts.1 >= OUTAGES.len() || Instant::now() > deadline {
                break counts;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        assert_eq!(
            (unavailable, back),
            (OUTAGES.len(), OUTAGES.len()),
            "{}: 'database unavailable' {unavailable} times, 'available again' {back} times",
            process.name
        );
    }
    println!(
        "db-outage tasks={tasks} attempts={attempts} events={} outages={}",
        stored.len(),
        OUTAGES.len()
    );
    drop(processes);
    store.close().await;
    drop(data);
    drop(postgres);
}

/// The lifecycle catalog with steps slow enough that some run through each outage.
fn slow_catalog() -> Value {
    let mut catalog = lifecycle::catalog();
    for service in catalog["services"].as_array_mut().unwrap() {
        let actions = service["provisioner"]["actions"].as_object_mut().unwrap();
        for action in ["install", "start"] {
            let Some(run) = actions
                .get_mut(action)
                .and_then(|action| action["fields"].get_mut("run"))
            else {
                continue;
            };
            if let Some(command) = run.as_str() {
                *run = format!("sleep 2; {command}").into();
            }
        }
    }
    catalog
}

/// While the database is down: the API and a page answer 503 with the plain message,
/// `/readyz` answers 503 and `/healthz` (still 200) says not ready, on both servers.
async fn answers_while_down(client: &reqwest::Client, servers: &[String]) {
    for server in servers {
        let (api, page, ready) = tokio::join!(
            bounded(client.get(format!("{server}/api/v1/clusters"))),
            bounded(client.get(format!("{server}/clusters"))),
            bounded(client.get(format!("{server}/readyz"))),
        );
        assert_eq!(api.status(), 503, "{server}: the API during the outage");
        assert!(api.headers().contains_key("retry-after"));
        let body: Value = api.json().await.unwrap();
        assert_eq!(body["error"], "unavailable", "{body}");
        assert_eq!(body["message"], DATABASE_UNAVAILABLE, "{body}");

        assert_eq!(page.status(), 503, "{server}: a page during the outage");
        let text = page.text().await.unwrap();
        assert!(text.contains(DATABASE_UNAVAILABLE), "{text}");

        assert_eq!(ready.status(), 503, "{server}: /readyz during the outage");
        let ready: Value = ready.json().await.unwrap();
        assert_eq!(ready["status"], "not ready", "{ready}");

        let started = Instant::now();
        loop {
            let health = bounded(client.get(format!("{server}/healthz"))).await;
            assert_eq!(health.status(), 200, "/healthz stays live");
            let health: Value = health.json().await.unwrap();
            if health["ready"] == false {
                assert_eq!(health["database"], "not answering", "{health}");
                break;
            }
            assert!(
                started.elapsed() < SETTLE_WITHIN,
                "{server}: /healthz still says ready: {health}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// Sends `request`, failing the test if no answer comes within [`ANSWER_WITHIN`].
async fn bounded(request: reqwest::RequestBuilder) -> reqwest::Response {
    match request.timeout(ANSWER_WITHIN).send().await {
        Ok(response) => response,
        Err(error) => panic!("no answer within {ANSWER_WITHIN:?} during the outage: {error}"),
    }
}

/// Waits until `server`'s `/readyz` answers 200 again, and `/healthz` says ready.
async fn wait_until_ready(server: &str) {
    let client = reqwest::Client::new();
    let started = Instant::now();
    loop {
        let ready = client
            .get(format!("{server}/readyz"))
            .timeout(ANSWER_WITHIN)
            .send()
            .await
            .map(|response| response.status().as_u16());
        if let Ok(200) = ready {
            break;
        }
        assert!(
            started.elapsed() < SETTLE_WITHIN,
            "{server} is not ready again: {ready:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Every stored event of the job, oldest first.
async fn all_events(queue: &Queue, job_id: &JobId) -> Vec<Event> {
    let mut events = Vec::new();
    loop {
        let after = events.last().map_or(0, |event: &Event| event.id);
        let page = queue.events_after(job_id, after, 1_000).await.unwrap();
        if page.is_empty() {
            return events;
        }
        events.extend(page);
    }
}

/// What one event stream received.
#[derive(Debug, Default)]
struct Followed {
    /// The ids of the events, in the order they came.
    ids: Vec<i64>,
    /// Whether the `end` event came.
    ended: bool,
    /// The `failure` event's text, if one came.
    failure: Option<String>,
}

/// Reads the event stream at `url` on one connection until it ends.
async fn follow(client: reqwest::Client, url: String) -> Followed {
    let mut response = client.get(&url).send().await.unwrap();
    assert_eq!(response.status(), 200, "opening the event stream");
    let mut followed = Followed::default();
    let mut pending: Vec<u8> = Vec::new();
    while let Some(chunk) = response.chunk().await.unwrap() {
        pending.extend_from_slice(&chunk);
        while let Some(at) = pending.windows(2).position(|pair| pair == b"\n\n") {
            let frame = String::from_utf8(pending.drain(..at + 2).collect()).unwrap();
            let mut kind = "message";
            let mut data = Vec::new();
            for line in frame.lines() {
                if let Some(value) = line.strip_prefix("event: ") {
                    kind = value;
                } else if let Some(value) = line.strip_prefix("id: ") {
                    followed.ids.push(value.parse().unwrap());
                } else if let Some(value) = line.strip_prefix("data: ") {
                    data.push(value);
                }
            }
            match kind {
                "end" => {
                    followed.ended = true;
                    return followed;
                }
                "failure" => {
                    followed.failure = Some(data.join("\n"));
                    return followed;
                }
                _ => {}
            }
        }
    }
    followed
}
