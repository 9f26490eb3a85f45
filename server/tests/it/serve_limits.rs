//! The server's limits against the attacks they stop, on a real `corral serve`:
//! - a dry run of thousands of nodes is refused before anything is planned, a dry run
//!   at the server's cluster size limit answers step counts instead of its N² task
//!   graph, and the process's peak memory stays small through both;
//! - half-open connections (a request line and half the headers, never finished) are
//!   closed by the server once the header read timeout passes, and `/healthz` answers
//!   while they are open, also past the connection limit.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{lifecycle, test_server};

/// The process's peak resident memory (`VmHWM`), in bytes.
fn peak_rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

const MEMORY_LIMIT: u64 = 512 * 1024 * 1024;

#[tokio::test(flavor = "multi_thread")]
async fn a_dry_run_of_thousands_of_nodes_is_refused_before_it_is_planned() {
    let data = tempfile::tempdir().unwrap();
    let served = test_server::serve(data.path(), 1, &[]);
    let (browser, csrf) = test_server::sign_in(&served.url, "admin", &served.password).await;
    let post = |path: &str, body: Value| {
        browser
            .post(format!("{}{path}", served.url))
            .header("x-csrf-token", &csrf)
            .json(&body)
            .send()
    };
    let imported = post("/api/v1/catalog/import", lifecycle::catalog())
        .await
        .unwrap();
    assert_eq!(imported.status(), 200, "{}", imported.text().await.unwrap());

    // The attack: 5,000 nodes (an N² plan of gigabytes) in a dry run. The first
    // admin's tenant has no node quota; the server's own limit refuses it.
    let refused = post(
        "/api/v1/clusters?dry_run=true",
        json!({"name": "huge", "template": "lifecycle", "size": 5000}),
    )
    .await
    .unwrap();
    assert_eq!(refused.status(), 422);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["details"][0]["path"], "size", "{body}");
    let message = body["message"].as_str().unwrap();
    assert!(
        message.contains("at most 1000 node(s)") && message.contains("5000"),
        "{message}"
    );

    // At the limit the dry run is planned, and answers counts by step: no task graph.
    let planned = post(
        "/api/v1/clusters?dry_run=true",
        json!({"name": "big", "template": "lifecycle", "size": 1000}),
    )
    .await
    .unwrap();
    assert_eq!(planned.status(), 200);
    let text = planned.text().await.unwrap();
    let plan: Value = serde_json::from_str(&text).unwrap();
    assert!(plan["tasks"].as_u64().unwrap() > 1000, "{}", plan["tasks"]);
    assert!(
        plan.get("graph").is_none(),
        "a 1,000-node plan sends its graph"
    );
    let counted: u64 = plan["step_counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|count| count["tasks"].as_u64().unwrap())
        .sum();
    assert_eq!(Some(counted), plan["tasks"].as_u64());
    assert!(
        text.len() < 2 * 1024 * 1024,
        "the answer is {} bytes",
        text.len()
    );

    // A small plan still comes with every task and edge.
    let small = post(
        "/api/v1/clusters?dry_run=true",
        json!({"name": "small", "template": "lifecycle", "size": 3}),
    )
    .await
    .unwrap();
    let small: Value = small.json().await.unwrap();
    let graph = &small["graph"];
    assert_eq!(
        graph["steps"].as_array().unwrap().len() as u64,
        small["tasks"].as_u64().unwrap()
    );
    assert!(!graph["dag"]["tasks"].as_array().unwrap().is_empty());

    // A tenant made without a node quota gets the server's default one.
    let tenant = post("/api/v1/tenants", json!({"name": "fresh"}))
        .await
        .unwrap();
    assert_eq!(tenant.status(), 201, "{}", tenant.text().await.unwrap());
    let tenant: Value = tenant.json().await.unwrap();
    assert_eq!(tenant["max_nodes"], 100, "{tenant}");

    let peak = peak_rss_bytes(served.pid());
    eprintln!(
        "1,000-node dry run: {} tasks, {} bytes; peak RSS {} MB",
        plan["tasks"],
        text.len(),
        peak / 1024 / 1024
    );
    assert!(
        peak < MEMORY_LIMIT,
        "the server's peak RSS was {} MB",
        peak / 1024 / 1024
    );
}

/// Connects and sends a request line and half its headers, never the blank line that
/// ends them.
fn half_open(address: &str) -> TcpStream {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: corral\r\nX-Slow: ")
        .unwrap();
    stream
}

/// Whether the server has closed `stream` (end of file or a reset), waiting at most
/// `wait` for it.
fn closed_by_server(stream: &mut TcpStream, wait: Duration) -> bool {
    stream.set_read_timeout(Some(wait)).unwrap();
    let mut buffer = [0u8; 512];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return true,
            // An answer (408, say) before the close is fine: read on to the end.
            Ok(_) => continue,
            Err(error) if error.kind() == ErrorKind::ConnectionReset => return true,
            Err(error) if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return false
            }
            Err(error) => panic!("reading a half-open connection: {error}"),
        }
    }
}

/// GET `{base}/healthz` on a new connection: its status.
fn healthz(base: &str) -> u16 {
    let mut stream = TcpStream::connect(base.trim_start_matches("http://")).unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: corral\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|status| status.parse().ok())
        .unwrap_or(0)
}

#[test]
fn half_open_connections_are_closed_and_healthz_answers_meanwhile() {
    const ATTACKERS: usize = 1500;
    let data = tempfile::tempdir().unwrap();
    // A limit below the attack: the half-open connections must make room, not hold it.
    let served = test_server::serve(
        data.path(),
        1,
        &[
            ("CORRAL_HEADER_READ_TIMEOUT_SECS", "2"),
            ("CORRAL_MAX_CONNECTIONS", "1024"),
        ],
    );
    let address = served.url.trim_start_matches("http://").to_owned();
    let mut attack: Vec<TcpStream> = (0..ATTACKERS).map(|_| half_open(&address)).collect();
    // While they are open (the timeout is 2 s, and the last ones were just made).
    assert_eq!(healthz(&served.url), 200);
    let opened = Instant::now();
    // Each is closed by the server: by the timeout, or displaced at the limit. Waiting
    // far longer than the timeout only bounds the test if the server never closes them.
    for (number, stream) in attack.iter_mut().enumerate() {
        let left = Duration::from_secs(60).saturating_sub(opened.elapsed());
        assert!(
            closed_by_server(stream, left.max(Duration::from_millis(1))),
            "half-open connection {number} of {ATTACKERS} is still open"
        );
    }
    assert_eq!(healthz(&served.url), 200);
    eprintln!(
        "{ATTACKERS} half-open connections closed {:.1} s after the last was opened",
        opened.elapsed().as_secs_f64()
    );
}
