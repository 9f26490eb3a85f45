//! The browser's terminal on a node (issue 41, points 3–5), against a real local node's
//! sshd: the server signs in as the node user and runs a shell on a PTY of the size
//! asked, follows size changes, refuses what it must before upgrading (no session,
//! another site's page, no CSRF token, another tenant, a colleague, switched off), ends
//! the session when the user signs out everywhere, and audits each session.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use reqwest::Method;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_tungstenite::tungstenite::{Bytes, Message};
use tokio_tungstenite::WebSocketStream;

use crate::helpers::local_pool;
use crate::helpers::{json_of, spawn_app, with_catalog, TestApp};
use crate::node_shell::{audit_actions, built_cluster, upgrade, upgrade_with};
use engine::store::users::Role as UserRole;
use engine::store::Backend;

type Terminal = WebSocketStream<reqwest::Upgraded>;

/// Upgrades to the terminal with a bearer `token`.
async fn open(app: &TestApp, path: &str, token: &str) -> Terminal {
    let upgraded = upgrade(app, path, Some(token), &[]).await.unwrap();
    WebSocketStream::from_raw_socket(upgraded, Role::Client, None).await
}

/// Types `line` and a newline.
async fn type_line(terminal: &mut Terminal, line: &str) {
    terminal
        .send(Message::Binary(Bytes::from(format!("{line}\n"))))
        .await
        .unwrap();
}

/// Reads output until it holds `wanted` (at most 20 s); returns all of it.
async fn read_until(terminal: &mut Terminal, wanted: &str) -> String {
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !seen.contains(wanted) {
        let message = tokio::time::timeout_at(deadline, terminal.next())
            .await
            .unwrap_or_else(|_| panic!("no {wanted:?} in 20 s; the terminal showed {seen:?}"));
        match message {
            Some(Ok(Message::Binary(bytes))) => seen.push_str(&String::from_utf8_lossy(&bytes)),
            Some(Ok(_)) => {}
            other => panic!("the terminal ended ({other:?}) before {wanted:?}; it showed {seen:?}"),
        }
    }
    seen
}

/// Reads until the server closes; returns its close code and the text messages it sent.
async fn read_until_closed(terminal: &mut Terminal, within: Duration) -> (u16, Vec<Value>) {
    let mut texts = Vec::new();
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let message = tokio::time::timeout_at(deadline, terminal.next())
            .await
            .unwrap_or_else(|_| panic!("the terminal was not closed within {within:?}"));
        match message {
            Some(Ok(Message::Text(text))) => texts.push(serde_json::from_str(&text).unwrap()),
            Some(Ok(Message::Close(frame))) => {
                let code = frame.map(|frame| u16::from(frame.code)).unwrap_or(0);
                return (code, texts);
            }
            Some(Ok(_)) => {}
            other => panic!("the terminal ended without a close frame: {other:?}"),
        }
    }
}

/// The node user of node `number` of `cluster` (from its stored record).
async fn node_user(app: &TestApp, cluster: &str, number: i64) -> String {
    let node = app
        .store
        .list_nodes(cluster)
        .await
        .unwrap()
        .into_iter()
        .find(|node| node.number == number)
        .unwrap();
    let record: Value = serde_json::from_str(node.provider_json.as_deref().unwrap()).unwrap();
    record["user"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_terminal_runs_a_shell_on_the_node_for_its_owner_and_admins_only() {
    let app = spawn_app(Backend::Sqlite).await;
    let nodes = tempfile::tempdir().unwrap();
    let _pool = local_pool(&app, nodes.path()).await;
    let admin = with_catalog(&app, "acme").await;
    let owner = app.user("owner", UserRole::User, "acme").await;
    let colleague = app.user("colleague", UserRole::User, "acme").await;
    let stranger = with_catalog(&app, "globex").await;
    let cluster = built_cluster(&app, &owner, "shop").await;
    let user = node_user(&app, &cluster, 1000).await;
    let path = format!("/api/v1/clusters/{cluster}/nodes/1000/terminal");

    // A shell as the node user, on a PTY of the size asked, following size changes.
    let mut terminal = open(&app, &format!("{path}?columns=100&rows=30"), &owner.token).await;
    type_line(&mut terminal, "echo size=$(stty size) user=$(id -un)").await;
    read_until(&mut terminal, &format!("size=30 100 user={user}")).await;
    terminal
        .send(Message::Text(
            json!({"type": "resize", "columns": 120, "rows": 40})
                .to_string()
                .into(),
        ))
        .await
        .unwrap();
    type_line(&mut terminal, "echo size=$(stty size)").await;
    read_until(&mut terminal, "size=40 120").await;
    // The shell is the node's, not the server's: as the node user (never root), with
    // $HOME the node's own home.
    assert_ne!(user, "root");
    type_line(&mut terminal, "echo home=$HOME").await;
    read_until(&mut terminal, "-1000/home\r\n").await;
    // The shell exits: the page is told its status and the socket closes normally.
    type_line(&mut terminal, "exit 3").await;
    let (code, texts) = read_until_closed(&mut terminal, Duration::from_secs(10)).await;
    assert_eq!(code, 1000);
    assert!(
        texts.contains(&json!({"type": "exit", "status": 3})),
        "{texts:?}"
    );

    // The tenant's admin may too.
    let mut terminal = open(&app, &path, &admin.token).await;
    type_line(&mut terminal, "echo by=$(id -un)").await;
    read_until(&mut terminal, &format!("by={user}")).await;
    drop(terminal);

    // Refused before any upgrade: no session at all, a colleague, another tenant, a
    // node that does not exist, and not a WebSocket.
    assert_eq!(upgrade(&app, &path, None, &[]).await.unwrap_err(), 401);
    assert_eq!(
        upgrade(&app, &path, Some(&colleague.token), &[])
            .await
            .unwrap_err(),
        403
    );
    assert_eq!(
        upgrade(&app, &path, Some(&stranger.token), &[])
            .await
            .unwrap_err(),
        404
    );
    let missing = format!("/api/v1/clusters/{cluster}/nodes/4242/terminal");
    assert_eq!(
        upgrade(&app, &missing, Some(&owner.token), &[])
            .await
            .unwrap_err(),
        404
    );
    let (status, body) = json_of(app.call(&owner, Method::GET, &path, None).await).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("WebSocket"),
        "{body}"
    );

    // A browser session needs this server's Origin and its CSRF token.
    let (browser, csrf) = app.browser("owner").await;
    let origin = app.address.clone();
    let with_csrf = format!("{path}?csrf={csrf}");
    for (path, headers, why) in [
        (&with_csrf, vec![], "no Origin"),
        (
            &with_csrf,
            vec![("origin", "http://evil.example")],
            "another site's Origin",
        ),
        (&path, vec![("origin", origin.as_str())], "no CSRF token"),
        (
            &format!("{path}?csrf=not-the-token"),
            vec![("origin", origin.as_str())],
            "a wrong CSRF token",
        ),
    ] {
        let status = upgrade_with(&browser, &app.url(path), None, &headers)
            .await
            .unwrap_err();
        assert_eq!(status, 403, "{why}");
    }
    let upgraded = upgrade_with(
        &browser,
        &app.url(&with_csrf),
        None,
        &[("origin", origin.as_str())],
    )
    .await
    .unwrap();
    let mut terminal = WebSocketStream::from_raw_socket(upgraded, Role::Client, None).await;
    type_line(&mut terminal, "echo browser=$(id -un)").await;
    read_until(&mut terminal, &format!("browser={user}")).await;

    // Signing out everywhere ends the open terminal (within the recheck interval).
    let response = browser
        .post(app.url("/api/v1/session/logout-everywhere"))
        .header("x-csrf-token", &csrf)
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    let (code, _) = read_until_closed(&mut terminal, Duration::from_secs(15)).await;
    assert_eq!(code, 4003, "closed as no longer allowed");

    // Every session is on the record: who, which node, from where, start, end, bytes.
    let mut ended = Vec::new();
    for _ in 0..100 {
        ended = audit_actions(&app, &admin)
            .await
            .into_iter()
            .filter(|(action, _, _)| action == "node.terminal.end")
            .collect();
        if ended.len() == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(ended.len(), 3, "{ended:?}");
    let reasons: Vec<&str> = ended
        .iter()
        .map(|(_, _, after)| after["ended"].as_str().unwrap())
        .collect();
    for reason in ["shell-exited", "client-closed", "no-longer-allowed"] {
        assert!(reasons.contains(&reason), "{reasons:?}");
    }
    for (_, _, after) in &ended {
        assert!(after["bytes_to_node"].as_u64().unwrap() > 0, "{after}");
        assert!(after["bytes_from_node"].as_u64().unwrap() > 0, "{after}");
        assert!(after["ended_at_ms"].as_i64() >= after["started_at_ms"].as_i64());
    }
    let (_, page) = json_of(
        app.call(
            &admin,
            Method::GET,
            "/api/v1/audit?action=node.terminal",
            None,
        )
        .await,
    )
    .await;
    let opened: Vec<&Value> = page
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry["action"] == "node.terminal")
        .collect();
    assert_eq!(opened.len(), 3, "{page}");
    for entry in opened {
        assert_eq!(entry["target"], "shop/1000", "{entry}");
        assert_eq!(entry["address"], "127.0.0.1", "{entry}");
        assert!(
            ["owner", "acme-admin"].contains(&entry["actor"].as_str().unwrap()),
            "{entry}"
        );
    }

    // Switched off for the tenant: the endpoint is gone (404).
    let setting = format!("/api/v1/tenants/{}/node-shell", admin.tenant_id);
    let (status, _) = json_of(
        app.call(
            &admin,
            Method::PUT,
            &setting,
            Some(&json!({"node_shell": false})),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200);
    // (The owner's tokens went with signing out everywhere: the admin asks.)
    assert_eq!(
        upgrade(&app, &path, Some(&admin.token), &[])
            .await
            .unwrap_err(),
        404
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tenant_that_records_sessions_keeps_each_as_asciicast_for_its_admins() {
    let app = spawn_app(Backend::Sqlite).await;
    let nodes = tempfile::tempdir().unwrap();
    let _pool = local_pool(&app, nodes.path()).await;
    let admin = with_catalog(&app, "acme").await;
    let owner = app.user("owner", UserRole::User, "acme").await;
    let stranger = with_catalog(&app, "globex").await;
    let cluster = built_cluster(&app, &owner, "shop").await;
    let path = format!("/api/v1/clusters/{cluster}/nodes/1000/terminal");
    let setting = format!("/api/v1/tenants/{}/terminal-recording", admin.tenant_id);

    // Only the tenant's admins turn it on; a body that does not fit is refused.
    let on = json!({"terminal_recording": true});
    let (status, _) = json_of(app.call(&owner, Method::PUT, &setting, Some(&on)).await).await;
    assert_eq!(status, 403);
    let (status, body) = json_of(
        app.call(
            &admin,
            Method::PUT,
            &setting,
            Some(&json!({"terminal_recording": "yes"})),
        )
        .await,
    )
    .await;
    assert_eq!(status, 422, "{body}");
    let (status, body) = json_of(app.call(&admin, Method::PUT, &setting, Some(&on)).await).await;
    assert_eq!((status, body), (200, on.clone()));

    let mut terminal = open(&app, &format!("{path}?columns=90&rows=20"), &owner.token).await;
    type_line(&mut terminal, "echo recorded-$((6*7))").await;
    read_until(&mut terminal, "recorded-42").await;
    terminal
        .send(Message::Text(
            json!({"type": "resize", "columns": 100, "rows": 30})
                .to_string()
                .into(),
        ))
        .await
        .unwrap();
    type_line(&mut terminal, "exit").await;
    read_until_closed(&mut terminal, Duration::from_secs(10)).await;

    let mut entry = Value::Null;
    for _ in 0..100 {
        let (_, page) = json_of(
            app.call(
                &admin,
                Method::GET,
                "/api/v1/audit?action=node.terminal.end",
                None,
            )
            .await,
        )
        .await;
        if let Some(found) = page.as_array().and_then(|entries| entries.first()) {
            entry = found.clone();
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(entry["after"]["recorded"], true, "{entry}");
    assert_eq!(entry["after"]["recording_truncated"], false, "{entry}");
    let recording = format!("/api/v1/audit/{}/recording", entry["id"].as_str().unwrap());

    // The tenant's admins read it: asciicast v2 holding what was typed and shown.
    let response = app.call(&admin, Method::GET, &recording, None).await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"],
        "application/octet-stream"
    );
    let cast = response.text().await.unwrap();
    let mut lines = cast.lines();
    let header: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(header["version"], 2);
    assert_eq!(
        (header["width"].as_u64(), header["height"].as_u64()),
        (Some(90), Some(20))
    );
    let events: Vec<Value> = lines
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let output: String = events
        .iter()
        .filter(|event| event[1] == "o")
        .map(|event| event[2].as_str().unwrap())
        .collect();
    assert!(output.contains("echo recorded-$((6*7))"), "{output:?}");
    assert!(output.contains("recorded-42"), "{output:?}");
    assert!(
        events
            .iter()
            .any(|event| event[1] == "r" && event[2] == "100x30"),
        "{events:?}"
    );
    let times: Vec<f64> = events
        .iter()
        .map(|event| event[0].as_f64().unwrap())
        .collect();
    assert!(times.windows(2).all(|pair| pair[0] <= pair[1]), "{times:?}");

    // The session's owner, a plain user, may not; another tenant finds nothing.
    let status = app
        .call(&owner, Method::GET, &recording, None)
        .await
        .status();
    assert_eq!(status, 403);
    let status = app
        .call(&stranger, Method::GET, &recording, None)
        .await
        .status();
    assert_eq!(status, 404);

    // Off again: the next session is not recorded.
    app.call(
        &admin,
        Method::PUT,
        &setting,
        Some(&json!({"terminal_recording": false})),
    )
    .await;
    let mut terminal = open(&app, &path, &owner.token).await;
    type_line(&mut terminal, "exit").await;
    read_until_closed(&mut terminal, Duration::from_secs(10)).await;
    let mut ended = Vec::new();
    for _ in 0..100 {
        ended = audit_actions(&app, &admin)
            .await
            .into_iter()
            .filter(|(action, _, _)| action == "node.terminal.end")
            .collect();
        if ended.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(ended.len(), 2);
    assert!(
        ended
            .iter()
            .any(|(_, _, after)| after.get("recorded").is_none()),
        "{ended:?}"
    );
}
