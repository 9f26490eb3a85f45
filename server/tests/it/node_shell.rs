//! Reaching nodes through the server (issue 41): certificates of the tenant's SSH user
//! CA for a cluster's owner and admins only, accepted by a real local node's sshd while
//! valid and for that cluster only, the WebSocket relay to the node's sshd with its
//! browser checks, the audit rows of a session, and the tenant's switch.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use engine::resources::ResourceFiles;
use engine::service::{Caller, Service, ServiceError};
use engine::ssh::{CertificateRequest, ClientKeyPair, UserCa};
use engine::store::users::Role;
use engine::store::Backend;
use reqwest::Method;
use russh::keys::ssh_key::Certificate;
use russh::keys::{PrivateKey, PublicKey, PublicKeyOrCertificate};
use serde_json::{json, Value};
use tokio::io::AsyncReadExt;

use crate::helpers::{json_of, local_pool, spawn_app, with_catalog, ApiUser, TestApp};

/// Creates a lifecycle cluster as `owner` and waits (at most 3 minutes) until its
/// create job is over; returns its id. Its nodes are made and ready whatever its
/// service steps do (this catalog's scripts are not uploaded, so installs fail).
pub(crate) async fn built_cluster(app: &TestApp, owner: &ApiUser, name: &str) -> String {
    let (status, created) = json_of(
        app.call(
            owner,
            Method::POST,
            "/api/v1/clusters",
            Some(&json!({"name": name, "template": "lifecycle", "size": 2})),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = created["cluster"]["id"].as_str().unwrap().to_owned();
    for _ in 0..1800 {
        let (_, shown) = json_of(
            app.call(owner, Method::GET, &format!("/api/v1/clusters/{id}"), None)
                .await,
        )
        .await;
        if shown["state"] != "creating" {
            assert_eq!(shown["nodes"][0]["state"], "ready", "{shown}");
            return id;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("cluster {name} was not built in 3 minutes");
}

/// Accepts the node's pinned host key only.
pub(crate) struct Pinned(pub(crate) PublicKey);

impl russh::client::Handler for Pinned {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        presented: &PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        Ok(
            matches!(presented, PublicKeyOrCertificate::PublicKey { key, .. }
            if key.key_data() == self.0.key_data()),
        )
    }
}

/// Signs in to the sshd at `address` as `user` with `key` and `certificate` and runs
/// `id -un`: its output, or `None` when the certificate was refused.
async fn run_with_certificate(
    address: &str,
    host_key: &str,
    user: &str,
    key: &PrivateKey,
    certificate: &str,
) -> Option<String> {
    let stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let handler = Pinned(PublicKey::from_openssh(host_key).unwrap());
    let mut handle =
        russh::client::connect_stream(Arc::new(russh::client::Config::default()), stream, handler)
            .await
            .unwrap();
    let auth = handle
        .authenticate_openssh_cert(
            user,
            Arc::new(key.clone()),
            Certificate::from_openssh(certificate).unwrap(),
        )
        .await
        .unwrap();
    if !auth.success() {
        return None;
    }
    let mut channel = handle.channel_open_session().await.unwrap();
    channel.exec(true, "id -un").await.unwrap();
    let mut output = Vec::new();
    while let Some(message) = channel.wait().await {
        if let russh::ChannelMsg::Data { data } = message {
            output.extend_from_slice(&data);
        }
    }
    Some(String::from_utf8(output).unwrap().trim().to_owned())
}

/// The node's sshd address as Corral reaches it (from its stored record).
async fn node_address(app: &TestApp, cluster: &str, number: i64) -> String {
    let node = app
        .store
        .list_nodes(cluster)
        .await
        .unwrap()
        .into_iter()
        .find(|node| node.number == number)
        .unwrap();
    let record: Value = serde_json::from_str(node.provider_json.as_deref().unwrap()).unwrap();
    format!("{}:{}", record["host"].as_str().unwrap(), record["port"])
}

pub(crate) async fn audit_actions(app: &TestApp, admin: &ApiUser) -> Vec<(String, String, Value)> {
    let (_, page) = json_of(
        app.call(admin, Method::GET, "/api/v1/audit?action=node.", None)
            .await,
    )
    .await;
    page.as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            (
                entry["action"].as_str().unwrap().to_owned(),
                entry["actor"].as_str().unwrap_or_default().to_owned(),
                entry["after"].clone(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn owners_and_admins_reach_their_nodes_with_short_lived_certificates() {
    let app = spawn_app(Backend::Sqlite).await;
    let nodes = tempfile::tempdir().unwrap();
    let _pool = local_pool(&app, nodes.path()).await;
    let admin = with_catalog(&app, "acme").await;
    let owner = app.user("owner", Role::User, "acme").await;
    let colleague = app.user("colleague", Role::User, "acme").await;
    let stranger = with_catalog(&app, "globex").await;
    let cluster = built_cluster(&app, &owner, "shop").await;
    let other_cluster = built_cluster(&app, &owner, "depot").await;
    let path = format!("/api/v1/clusters/{cluster}/nodes/1000/ssh/certificate");
    let user_key = ClientKeyPair::generate("test user").unwrap();
    let key = PrivateKey::from_openssh(&user_key.private_openssh).unwrap();
    let body = json!({"public_key": user_key.public_openssh});

    // Who may: the owner and the tenant's admin; not a colleague (403), and for another
    // tenant the cluster does not exist (404).
    let (status, signed) = json_of(app.call(&owner, Method::POST, &path, Some(&body)).await).await;
    assert_eq!(status, 200, "{signed}");
    let (status, by_admin) =
        json_of(app.call(&admin, Method::POST, &path, Some(&body)).await).await;
    assert_eq!(status, 200, "{by_admin}");
    let (status, refused) =
        json_of(app.call(&colleague, Method::POST, &path, Some(&body)).await).await;
    assert_eq!(status, 403, "{refused}");
    let (status, hidden) =
        json_of(app.call(&stranger, Method::POST, &path, Some(&body)).await).await;
    assert_eq!(status, 404, "{hidden}");
    let missing = format!("/api/v1/clusters/{cluster}/nodes/4242/ssh/certificate");
    let (status, _) = json_of(app.call(&owner, Method::POST, &missing, Some(&body)).await).await;
    assert_eq!(status, 404);

    // Bad input names the problem.
    for (bad, field) in [
        (json!({"public_key": "ssh-ed25519 not-a-key"}), "public_key"),
        (
            json!({"public_key": user_key.public_openssh, "minutes": 0}),
            "minutes",
        ),
        (
            json!({"public_key": user_key.public_openssh, "minutes": 100000}),
            "minutes",
        ),
    ] {
        let (status, body) = json_of(app.call(&owner, Method::POST, &path, Some(&bad)).await).await;
        assert_eq!(status, 422, "{bad}: {body}");
        assert_eq!(body["details"][0]["path"], field, "{body}");
    }

    // The certificate opens the node as the node user, checked against the pinned key.
    let user = signed["user"].as_str().unwrap();
    let host_key = signed["host_key"].as_str().unwrap();
    let address = node_address(&app, &cluster, 1000).await;
    let certificate = signed["certificate"].as_str().unwrap();
    let logged_in = run_with_certificate(&address, host_key, user, &key, certificate).await;
    assert_eq!(logged_in.as_deref(), Some(user));

    // A certificate of the same CA past its validity is refused, and so is a valid one
    // for another cluster of the tenant (its nodes list their own cluster's principal).
    let ca = UserCa::of_tenant(&app.store, &owner.tenant_id)
        .await
        .unwrap();
    let sign = |cluster_id: &str, valid_from: SystemTime| {
        ca.sign(&CertificateRequest {
            public_key: &user_key.public_openssh,
            node_user: user,
            cluster_id,
            key_id: "test".to_owned(),
            valid_from,
            valid_for: Duration::from_secs(600),
        })
        .unwrap()
    };
    let expired = sign(
        &cluster,
        SystemTime::now() - Duration::from_secs(11 * 60 + 60),
    );
    assert_eq!(
        run_with_certificate(&address, host_key, user, &key, &expired).await,
        None,
        "a certificate 10+ minutes old is refused"
    );
    let elsewhere = sign(&other_cluster, SystemTime::now());
    assert_eq!(
        run_with_certificate(&address, host_key, user, &key, &elsewhere).await,
        None,
        "a certificate for another cluster is refused"
    );
    let other_address = node_address(&app, &other_cluster, 1000).await;
    let other_host_key = app
        .store
        .list_nodes(&other_cluster)
        .await
        .unwrap()
        .into_iter()
        .find(|node| node.number == 1000)
        .map(|node| {
            let record: Value =
                serde_json::from_str(node.provider_json.as_deref().unwrap()).unwrap();
            record["host_key"].as_str().unwrap().to_owned()
        })
        .unwrap();
    assert_eq!(
        run_with_certificate(&other_address, &other_host_key, user, &key, &elsewhere)
            .await
            .as_deref(),
        Some(user),
        "it opens its own cluster's nodes"
    );

    // The tunnel: a bearer token needs no Origin; the node's sshd greets through it.
    let tunnel = format!("/api/v1/clusters/{cluster}/nodes/1000/ssh");
    let mut upgraded = upgrade(&app, &tunnel, Some(&owner.token), &[])
        .await
        .unwrap();
    let greeting = read_websocket_payload(&mut upgraded).await;
    assert!(greeting.starts_with("SSH-2.0-"), "{greeting:?}");
    drop(upgraded);
    let refused = upgrade(&app, &tunnel, Some(&colleague.token), &[])
        .await
        .unwrap_err();
    assert_eq!(refused, 403);
    let hidden = upgrade(&app, &tunnel, Some(&stranger.token), &[])
        .await
        .unwrap_err();
    assert_eq!(hidden, 404);

    // A browser session needs this server's Origin and its CSRF token.
    let (browser, csrf) = app.browser("owner").await;
    let host = app.address.trim_start_matches("http://").to_owned();
    let origin = format!("http://{host}");
    let with_csrf = format!("{tunnel}?csrf={csrf}");
    for (path, headers, why) in [
        (&with_csrf, vec![], "no Origin"),
        (
            &with_csrf,
            vec![("origin", "http://evil.example")],
            "another site's Origin",
        ),
        (&tunnel, vec![("origin", origin.as_str())], "no CSRF token"),
    ] {
        let status = upgrade_with(&browser, &app.url(path), None, &headers)
            .await
            .unwrap_err();
        assert_eq!(status, 403, "{why}");
    }
    let mut upgraded = upgrade_with(
        &browser,
        &app.url(&with_csrf),
        None,
        &[("origin", origin.as_str())],
    )
    .await
    .unwrap();
    assert!(read_websocket_payload(&mut upgraded)
        .await
        .starts_with("SSH-2.0-"));
    drop(upgraded);

    // Each session is on the record, opened and ended, with the bytes it moved.
    let mut ended = Vec::new();
    for _ in 0..100 {
        ended = audit_actions(&app, &admin)
            .await
            .into_iter()
            .filter(|(action, _, _)| action == "node.ssh.end")
            .collect();
        if ended.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(ended.len(), 2, "{ended:?}");
    for (_, actor, after) in &ended {
        assert_eq!(actor, "owner");
        assert!(after["bytes_from_node"].as_u64().unwrap() > 0, "{after}");
        assert!(after["ended_at_ms"].as_i64() >= after["started_at_ms"].as_i64());
    }
    let actions = audit_actions(&app, &admin).await;
    assert_eq!(
        actions
            .iter()
            .filter(|(action, ..)| action == "node.ssh")
            .count(),
        2
    );
    assert!(actions
        .iter()
        .any(|(action, ..)| action == "node.ssh-certificate"));

    // The tenant's admins turn it off: the endpoints are gone (404) for everyone.
    let setting = format!("/api/v1/tenants/{}/node-shell", admin.tenant_id);
    let (status, _) = json_of(
        app.call(
            &owner,
            Method::PUT,
            &setting,
            Some(&json!({"node_shell": false})),
        )
        .await,
    )
    .await;
    assert_eq!(status, 403, "a plain user cannot");
    let (status, view) = json_of(
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
    assert_eq!(view["node_shell"], false);
    let (status, _) = json_of(app.call(&owner, Method::POST, &path, Some(&body)).await).await;
    assert_eq!(status, 404);
    assert_eq!(
        upgrade(&app, &tunnel, Some(&admin.token), &[])
            .await
            .unwrap_err(),
        404
    );
    app.call(
        &admin,
        Method::PUT,
        &setting,
        Some(&json!({"node_shell": true})),
    )
    .await;

    // And a server started with --no-node-shell has none at all.
    let owner_user = app.store.user_by_username("owner").await.unwrap();
    let caller = Caller::new(engine::principal::Principal::from_user(&owner_user), None);
    let switched_off = Service::new(
        app.queue.clone(),
        ResourceFiles::in_directory(nodes.path().join("resources")),
    )
    .with_node_shell(false);
    let refused = switched_off
        .node_shell_target(&caller, &cluster, 1000)
        .await
        .unwrap_err();
    assert!(matches!(refused, ServiceError::NotFound(_)), "{refused}");
}

/// Asks for a WebSocket at `path` with a bearer `token`: the upgraded connection, or
/// the refusal's status.
pub(crate) async fn upgrade(
    app: &TestApp,
    path: &str,
    token: Option<&str>,
    headers: &[(&str, &str)],
) -> Result<reqwest::Upgraded, u16> {
    upgrade_with(&app.client, &app.url(path), token, headers).await
}

pub(crate) async fn upgrade_with(
    client: &reqwest::Client,
    url: &str,
    token: Option<&str>,
    headers: &[(&str, &str)],
) -> Result<reqwest::Upgraded, u16> {
    let mut request = client
        .get(url)
        .header("connection", "Upgrade")
        .header("upgrade", "websocket")
        .header("sec-websocket-version", "13")
        .header("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==");
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    if response.status() != 101 {
        return Err(response.status().as_u16());
    }
    Ok(response.upgrade().await.unwrap())
}

/// The payload of the first WebSocket frame the server sends (unmasked, as servers
/// send them), as text.
async fn read_websocket_payload(stream: &mut reqwest::Upgraded) -> String {
    let mut header = [0u8; 2];
    stream.read_exact(&mut header).await.unwrap();
    assert_eq!(header[0] & 0x0f, 2, "a binary frame");
    let length = match header[1] & 0x7f {
        126 => {
            let mut extended = [0u8; 2];
            stream.read_exact(&mut extended).await.unwrap();
            usize::from(u16::from_be_bytes(extended))
        }
        127 => panic!("an SSH greeting is short"),
        short => usize::from(short),
    };
    let mut payload = vec![0u8; length];
    stream.read_exact(&mut payload).await.unwrap();
    String::from_utf8_lossy(&payload).into_owned()
}
