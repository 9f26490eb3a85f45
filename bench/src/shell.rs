//! `shell`: the browser terminal's cost. A real `corral serve` builds a `web-stack` of
//! local nodes; then, on node 1000:
//!
//! - keystroke echo round trips through the server's terminal WebSocket (one byte
//!   typed, waited for in the output; alternately a letter and a DEL, so the line never
//!   grows), against the same through a direct SSH session to the node's sshd (russh,
//!   the same kind of certificate and PTY): the baseline, measured in the same run;
//! - the server's CPU while 50 terminals each print 100 lines a second for 10 seconds
//!   (a python3 loop on the node, which stops by itself), the output read as a page
//!   would.
//!
//! Prints `shell p50_ms= p99_ms= direct_p50_ms= direct_p99_ms= cpu_pct_50_terminals=`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use api_types::{AuditAction, NodeCertificateRequest, TokenRequest, TokenScope};
use futures::{SinkExt, StreamExt};
use russh::keys::ssh_key::private::Ed25519Keypair;
use russh::keys::ssh_key::Certificate;
use russh::keys::{PrivateKey, PublicKey, PublicKeyOrCertificate};
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_tungstenite::tungstenite::{Bytes, Message};
use tokio_tungstenite::WebSocketStream;

use crate::served::{
    create_request, failed, sign_in, wait_for_job, with_server_log, Client, Server,
};
use crate::BenchError;

/// Round trips measured each way.
const ROUND_TRIPS: usize = 300;
const TERMINALS: usize = 50;
/// What each terminal runs for the CPU measure: 100 lines a second for 10 seconds.
const PRINTER: &str = "python3 -c 'import time\nfor i in range(1000):\n    print(\"line\", i, \"x\" * 60, flush=True); time.sleep(0.01)\nprint(\"printer-\" + \"done\")'";
const DONE: &str = "printer-done";
/// Opening sessions this many at a time: sshd drops unauthenticated connections past
/// its MaxStartups (10 by default).
const OPEN_AT_ONCE: usize = 8;

type Socket = WebSocketStream<reqwest::Upgraded>;

pub fn run(args: &[String]) -> Result<String, BenchError> {
    if let Some(arg) = args.first() {
        return Err(BenchError::Usage(format!("unknown argument {arg:?}")));
    }
    let corral = crate::corral_binary()?;
    crate::run_in_scratch_dir("corral-shell-", |base| async move {
        let data = base.join("data");
        std::fs::create_dir_all(&data)?;
        let server = Server::start(&corral, &data, 8)?;
        measure(&server)
            .await
            .map_err(|error| with_server_log(error, &data))
    })
}

async fn measure(server: &Server) -> Result<String, BenchError> {
    let client = sign_in(server).await?;
    let created = client
        .create_cluster(&create_request("bench", "web-stack", 3))
        .await?;
    wait_for_job(&client, &created.job_id).await?;
    let cluster = created.cluster.id;
    let token = client
        .create_token(&TokenRequest {
            name: "bench shell".to_owned(),
            expires_in_seconds: None,
            renew_on_use: false,
            scope: TokenScope::default(),
        })
        .await?
        .secret;
    // The terminals authenticate as the CLI does, with a token.
    let terminals = Client::new(&server.url, Some(token), None)?;
    let terminal_path =
        format!("/api/v1/clusters/{cluster}/nodes/1000/terminal?columns=120&rows=40");

    // Through the server.
    let mut socket = open_terminal(&terminals, &terminal_path).await?;
    settle(&mut socket).await?;
    let mut through = Vec::with_capacity(ROUND_TRIPS);
    for index in 0..ROUND_TRIPS {
        let key = if index % 2 == 0 { b'x' } else { 0x7f };
        let started = Instant::now();
        socket
            .send(Message::Binary(Bytes::copy_from_slice(&[key])))
            .await
            .map_err(failed)?;
        read_socket_until(&mut socket, |seen| seen.contains(echo_of(key))).await?;
        through.push(started.elapsed());
    }
    drop(socket);

    // Directly to the node's sshd.
    let direct = direct_round_trips(&client, &cluster).await?;

    // 50 terminals printing.
    let mut sockets = Vec::with_capacity(TERMINALS);
    for _ in 0..TERMINALS.div_ceil(OPEN_AT_ONCE) {
        let batch = (sockets.len()..TERMINALS.min(sockets.len() + OPEN_AT_ONCE))
            .map(|_| open_terminal(&terminals, &terminal_path));
        for socket in futures::future::join_all(batch).await {
            sockets.push(socket?);
        }
    }
    for socket in &mut sockets {
        settle(socket).await?;
    }
    let (_, cpu_before) = server.usage();
    let started = Instant::now();
    let printers = sockets.into_iter().map(|mut socket| async move {
        socket
            .send(Message::Binary(Bytes::from(format!("{PRINTER}\n"))))
            .await
            .map_err(failed)?;
        // The command line is echoed first: wait for the marker's own output line.
        read_socket_until(&mut socket, |seen| seen.contains(&format!("\n{DONE}"))).await
    });
    for done in futures::future::join_all(printers).await {
        done?;
    }
    let wall = started.elapsed().as_secs_f64();
    let (_, cpu_after) = server.usage();
    let cpu_pct = (cpu_after - cpu_before) / wall * 100.0;

    let (p50, p99) = percentiles(&mut through);
    let (direct_p50, direct_p99) = percentiles(&mut direct.clone());
    Ok(format!(
        "shell p50_ms={p50:.2} p99_ms={p99:.2} direct_p50_ms={direct_p50:.2} \
         direct_p99_ms={direct_p99:.2} cpu_pct_50_terminals={cpu_pct:.1}"
    ))
}

async fn open_terminal(client: &Client, path: &str) -> Result<Socket, BenchError> {
    let upgraded = client
        .websocket(path)
        .await
        .map_err(|error| failed(format!("the terminal was refused: {error:#}")))?;
    Ok(WebSocketStream::from_raw_socket(upgraded, Role::Client, None).await)
}

/// Waits for the shell's first prompt and then for quiet, so the measure starts clean.
async fn settle(socket: &mut Socket) -> Result<(), BenchError> {
    read_socket_until(socket, |seen| seen.contains('$')).await?;
    while let Ok(Some(_)) = tokio::time::timeout(Duration::from_millis(200), socket.next()).await {}
    Ok(())
}

/// Reads output until `done` says what was seen is enough (30 s at most).
async fn read_socket_until(
    socket: &mut Socket,
    done: impl Fn(&str) -> bool,
) -> Result<String, BenchError> {
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let message = tokio::time::timeout_at(deadline, socket.next())
            .await
            .map_err(|_| failed(format!("no answer in 30 s; the terminal showed {seen:?}")))?;
        match message {
            Some(Ok(Message::Binary(bytes))) => {
                seen.push_str(&String::from_utf8_lossy(&bytes));
                if done(&seen) {
                    return Ok(seen);
                }
            }
            Some(Ok(_)) => {}
            other => return Err(failed(format!("the terminal ended: {other:?}"))),
        }
    }
}

/// Accepts the node's pinned host key only.
struct Pinned(PublicKey);

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

/// The same round trips on a direct SSH session to the node (a certificate from the
/// server, the node's sshd at the address the cluster page shows).
async fn direct_round_trips(client: &Client, cluster: &str) -> Result<Vec<Duration>, BenchError> {
    let key = PrivateKey::from(Ed25519Keypair::from_seed(&rand_seed()));
    let public = key.public_key().to_openssh().map_err(failed)?;
    let signed = client
        .node_certificate(
            cluster,
            1000,
            &NodeCertificateRequest {
                public_key: public,
                minutes: None,
            },
        )
        .await?;
    let address = node_address(client).await?;
    let host_key = PublicKey::from_openssh(&signed.host_key).map_err(failed)?;
    let certificate = Certificate::from_openssh(&signed.certificate).map_err(failed)?;
    let stream = tokio::net::TcpStream::connect(&address).await?;
    stream.set_nodelay(true)?;
    let config = Arc::new(russh::client::Config {
        nodelay: true,
        ..russh::client::Config::default()
    });
    let mut handle = russh::client::connect_stream(config, stream, Pinned(host_key))
        .await
        .map_err(failed)?;
    let auth = handle
        .authenticate_openssh_cert(signed.user, Arc::new(key), certificate)
        .await
        .map_err(failed)?;
    if !auth.success() {
        return Err(failed("the node refused the certificate"));
    }
    let mut channel = handle.channel_open_session().await.map_err(failed)?;
    channel
        .request_pty(false, "xterm-256color", 120, 40, 0, 0, &[])
        .await
        .map_err(failed)?;
    channel.request_shell(true).await.map_err(failed)?;
    // The prompt, then quiet.
    let mut seen = String::new();
    while !seen.contains('$') {
        match tokio::time::timeout(Duration::from_secs(30), channel.wait()).await {
            Ok(Some(russh::ChannelMsg::Data { data })) => {
                seen.push_str(&String::from_utf8_lossy(&data));
            }
            Ok(Some(_)) => {}
            _ => return Err(failed(format!("no prompt from the node: {seen:?}"))),
        }
    }
    while let Ok(Some(_)) = tokio::time::timeout(Duration::from_millis(200), channel.wait()).await {
    }
    let mut times = Vec::with_capacity(ROUND_TRIPS);
    for index in 0..ROUND_TRIPS {
        let key = if index % 2 == 0 { b'x' } else { 0x7f };
        let started = Instant::now();
        channel.data(&[key][..]).await.map_err(failed)?;
        let mut seen = String::new();
        while !seen.contains(echo_of(key)) {
            match tokio::time::timeout(Duration::from_secs(30), channel.wait()).await {
                Ok(Some(russh::ChannelMsg::Data { data })) => {
                    seen.push_str(&String::from_utf8_lossy(&data));
                }
                Ok(Some(_)) => {}
                _ => return Err(failed("the direct session ended")),
            }
        }
        times.push(started.elapsed());
    }
    let _ = handle
        .disconnect(russh::Disconnect::ByApplication, "", "en")
        .await;
    Ok(times)
}

/// Where node 1000's sshd listens: the node's address as the server's audit entry of
/// a terminal session on it names it (`node.terminal`, its `address`).
async fn node_address(client: &Client) -> Result<String, BenchError> {
    let opened = AuditAction::NodeTerminal;
    // The filter is a prefix (it keeps `node.terminal.end` too).
    let entries = client.audit(&format!("action={opened}")).await?;
    entries
        .iter()
        .filter(|entry| entry.known_action() == Some(opened))
        // What an audit entry recorded after the action is free-form JSON (each
        // action's own), so the address is read by name.
        .find_map(|entry| entry.after.as_ref()?["address"].as_str())
        .map(str::to_owned)
        .ok_or_else(|| {
            failed(format!(
                "no node.terminal audit entry names the node: {entries:?}"
            ))
        })
}

/// 32 random bytes from the operating system: the seed of a throwaway key.
fn rand_seed() -> [u8; 32] {
    use rand_core::RngCore;
    let mut seed = [0u8; 32];
    rand_core::OsRng.fill_bytes(&mut seed);
    seed
}

/// What the shell echoes for `key`: the letter, or for DEL the backspace that erases it
/// (waited for whole, so a round trip never ends on the previous key's echo).
fn echo_of(key: u8) -> &'static str {
    if key == b'x' {
        "x"
    } else {
        "\u{8}"
    }
}

/// The 50th and 99th percentiles, in milliseconds.
fn percentiles(times: &mut [Duration]) -> (f64, f64) {
    times.sort();
    let at = |fraction: f64| {
        let index = ((times.len() as f64 - 1.0) * fraction).round() as usize;
        times
            .get(index)
            .map_or(0.0, |time| time.as_secs_f64() * 1000.0)
    };
    (at(0.50), at(0.99))
}
