//! The node tunnel's client end: the WebSocket the server relays to the node's sshd,
//! turned back into a byte stream, for russh or for standard input and output.
//!
//! The client never sends a WebSocket close when its input ends: a close ends the
//! relay both ways, while the node may still be answering. The session ends when the
//! node closes its side (the server then closes the WebSocket).

use anyhow::Context;
use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, DuplexStream};
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_tungstenite::tungstenite::{Bytes, Message};
use tokio_tungstenite::WebSocketStream;

use super::super::remote::Client;

/// An open tunnel to a node's sshd.
pub type Tunnel = WebSocketStream<reqwest::Upgraded>;

/// The most bytes one message carries to the node.
const CHUNK: usize = 32 * 1024;

/// Opens the tunnel to node `node` of `cluster`.
pub async fn open(client: &Client, cluster: &str, node: i64) -> anyhow::Result<Tunnel> {
    let path = format!("{}/ssh", super::node_path(cluster, node));
    let upgraded = client.websocket(&path).await?;
    Ok(WebSocketStream::from_raw_socket(upgraded, Role::Client, None).await)
}

/// Moves bytes between `input`/`output` and the tunnel until the node closes it.
async fn relay(
    tunnel: Tunnel,
    mut input: impl AsyncRead + Unpin,
    mut output: impl AsyncWrite + Unpin,
) -> anyhow::Result<()> {
    let (mut to_node, mut from_node) = tunnel.split();
    let upstream = async {
        let mut buffer = vec![0u8; CHUNK];
        loop {
            let read = input.read(&mut buffer).await?;
            if read == 0 {
                return anyhow::Ok(());
            }
            to_node
                .send(Message::Binary(Bytes::copy_from_slice(&buffer[..read])))
                .await
                .context("the tunnel to the node closed")?;
        }
    };
    let downstream = async {
        while let Some(message) = from_node.next().await {
            match message.context("the tunnel to the node broke")? {
                Message::Binary(bytes) => {
                    output.write_all(&bytes).await?;
                    output.flush().await?;
                }
                Message::Close(_) => break,
                _ => {}
            }
        }
        anyhow::Ok(())
    };
    tokio::pin!(upstream, downstream);
    tokio::select! {
        done = &mut downstream => return done,
        sent = &mut upstream => sent?,
    }
    // Input ended; the node may still be talking.
    downstream.await
}

/// The tunnel on this process's standard input and output (`--proxy`).
pub async fn relay_stdio(tunnel: Tunnel) -> anyhow::Result<()> {
    let (mut writer, reader) = tokio::io::duplex(CHUNK);
    let mut chunks = super::terminal::stdin_chunks();
    tokio::spawn(async move {
        while let Some(chunk) = chunks.recv().await {
            if writer.write_all(&chunk).await.is_err() {
                break;
            }
        }
    });
    relay(tunnel, reader, super::terminal::Stdout).await
}

/// The tunnel as an in-process byte stream (for russh), relayed by a task of its own.
pub fn into_stream(tunnel: Tunnel) -> DuplexStream {
    let (ours, theirs) = tokio::io::duplex(4 * CHUNK);
    tokio::spawn(async move {
        let (input, output) = tokio::io::split(theirs);
        if let Err(error) = relay(tunnel, input, output).await {
            tracing::debug!(%error, "node tunnel ended");
        }
    });
    ours
}
