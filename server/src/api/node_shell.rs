//! Reaching a node through the server: `POST …/nodes/{number}/ssh/certificate` signs the
//! caller's public key with the tenant's SSH user CA, and `GET …/nodes/{number}/ssh`
//! upgrades to a WebSocket relaying a raw TCP stream to the node's sshd (the address
//! Corral itself reaches it at), so the client speaks SSH end to end with the node and
//! docker nodes published on the server's loopback are reachable from a workstation.
//!
//! The upgrade is a GET, which the API's CSRF check lets through, so a browser session
//! (cookie) must also send an `Origin` naming this server and the session's CSRF token
//! as the `csrf` query parameter (a page cannot set headers on a WebSocket); a bearer
//! token needs neither, as no browser sends one by itself. Each session is audited when
//! it opens (`node.ssh`) and when it ends (`node.ssh.end`, with the bytes each way); it
//! ends when either side closes or after [`IDLE_TIMEOUT`] without a byte.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use api_types::{NodeCertificate, NodeCertificateRequest, NodeShellUpdate, TenantView};
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::Json;
use engine::service::{NodeShellTarget, SessionBytes};
use futures::{SinkExt, StreamExt};
use serde::Deserialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tower_sessions::Session;
use utoipa::IntoParams;

use super::error::{ApiError, ErrorBody, ErrorCode};
use super::extract::{ApiJson, ApiPath, ApiQuery, Authenticated, SessionData, SESSION_USER};
use crate::http::AppState;

/// A session with no byte either way for this long is closed.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(15 * 60);
/// How long connecting to the node's sshd may take before the upgrade is refused.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The most bytes one message carries from the node.
const CHUNK: usize = 32 * 1024;

#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TunnelQuery {
    /// A cookie session's CSRF token (from GET /api/v1/session); bearer tokens need none.
    #[serde(default)]
    pub csrf: Option<String>,
}

/// The CSRF token of the request's cookie session, when it has no bearer token (what
/// [`Authenticated`] does not check on a GET).
pub struct CookieSessionCsrf(Option<String>);

impl FromRequestParts<AppState> for CookieSessionCsrf {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        if parts.headers.contains_key(header::AUTHORIZATION) {
            return Ok(Self(None));
        }
        let session = Session::from_request_parts(parts, state)
            .await
            .map_err(|(_, message)| ApiError::internal(message))?;
        let data: Option<SessionData> = session
            .get(SESSION_USER)
            .await
            .map_err(ApiError::internal)?;
        Ok(Self(data.map(|data| data.csrf)))
    }
}

/// A cookie session's upgrade must come from a page of this server and carry the CSRF
/// token: otherwise any site the user visits could open a shell on their nodes.
pub(super) fn check_browser_upgrade(
    headers: &HeaderMap,
    session_csrf: Option<&str>,
    sent_csrf: Option<&str>,
) -> Result<(), ApiError> {
    let Some(expected) = session_csrf else {
        return Ok(());
    };
    let host = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok());
    let origin = headers
        .get(header::ORIGIN)
        .and_then(|value| value.to_str().ok())
        .and_then(|origin| url::Url::parse(origin).ok());
    let origin_authority = origin.as_ref().map(|origin| match origin.port() {
        Some(port) => format!("{}:{port}", origin.host_str().unwrap_or_default()),
        None => origin.host_str().unwrap_or_default().to_owned(),
    });
    if host.is_none() || origin_authority.as_deref() != host {
        return Err(ApiError::forbidden(
            "a browser session's WebSocket must come from a page of this server (Origin)",
        ));
    }
    if sent_csrf != Some(expected) {
        return Err(ApiError::forbidden(
            "missing or wrong CSRF token: send it as ?csrf= from GET /api/v1/session",
        ));
    }
    Ok(())
}

/// Sign your public key into a short-lived SSH certificate for a node of a cluster you
/// own (or of your tenant, as its admin): principals the node user and the cluster,
/// a terminal and no forwarding. The answer also holds the node's pinned host key.
#[utoipa::path(post, path = "/clusters/{id}/nodes/{number}/ssh/certificate", tag = "clusters",
    params(("id" = String, Path, description = "Cluster id or name"),
           ("number" = i64, Path, description = "Node number, e.g. 1000")),
    request_body = NodeCertificateRequest,
    responses((status = 200, body = NodeCertificate), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn certificate(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath((id, number)): ApiPath<(String, i64)>,
    ApiJson(request): ApiJson<NodeCertificateRequest>,
) -> Result<Json<NodeCertificate>, ApiError> {
    Ok(Json(
        state
            .service
            .sign_node_certificate(&caller, &id, number, &request)
            .await?,
    ))
}

/// Open a WebSocket relaying a raw TCP stream to the node's sshd: binary messages
/// carry the bytes each way, and the client speaks SSH over them (e.g. with a
/// certificate from …/ssh/certificate). A cookie session must send `Origin` and
/// `?csrf=`.
#[utoipa::path(get, path = "/clusters/{id}/nodes/{number}/ssh", tag = "clusters",
    params(("id" = String, Path, description = "Cluster id or name"),
           ("number" = i64, Path, description = "Node number, e.g. 1000"), TunnelQuery),
    responses((status = 101, description = "Switching to the WebSocket relay"),
              (status = 400, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn tunnel(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    CookieSessionCsrf(session_csrf): CookieSessionCsrf,
    ApiPath((id, number)): ApiPath<(String, i64)>,
    ApiQuery(query): ApiQuery<TunnelQuery>,
    headers: HeaderMap,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    check_browser_upgrade(&headers, session_csrf.as_deref(), query.csrf.as_deref())?;
    let target = state
        .service
        .node_shell_target(&caller, &id, number)
        .await?;
    let upgrade = upgrade.map_err(|rejection| {
        ApiError::bad_request(format!(
            "this endpoint is a WebSocket ({})",
            rejection.body_text()
        ))
    })?;
    let address = (target.host.clone(), target.port);
    let node = match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(address)).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(error)) => {
            return Err(unreachable(&target, &error.to_string()));
        }
        Err(_) => return Err(unreachable(&target, "no answer within 10 s")),
    };
    // Keystrokes go one by one: no waiting to fill a packet.
    node.set_nodelay(true)
        .map_err(|error| unreachable(&target, &error.to_string()))?;
    let service = state.service.clone();
    Ok(upgrade
        .on_upgrade(move |socket| async move {
            let started = service.node_shell_opened(&caller, &target).await;
            let bytes = relay(socket, node).await;
            service
                .node_shell_closed(&caller, &target, started, bytes)
                .await;
        })
        .into_response())
}

fn unreachable(target: &NodeShellTarget, reason: &str) -> ApiError {
    ApiError::new(
        ErrorCode::Conflict,
        format!(
            "node {} is not reachable over SSH ({reason}): is it running?",
            target.label()
        ),
    )
}

/// Moves bytes between the WebSocket and the node until either side closes or the
/// session is idle for [`IDLE_TIMEOUT`]; returns what it moved.
async fn relay(socket: WebSocket, node: TcpStream) -> SessionBytes {
    let (mut to_client, mut from_client) = socket.split();
    let (mut from_node, mut to_node) = node.into_split();
    let up = Arc::new(AtomicU64::new(0));
    let down = Arc::new(AtomicU64::new(0));
    let last_active = Arc::new(AtomicI64::new(engine::store::now_ms()));
    let touch = |last: &AtomicI64| last.store(engine::store::now_ms(), Ordering::Relaxed);
    let upstream = async {
        while let Some(Ok(message)) = from_client.next().await {
            let bytes = match message {
                Message::Binary(bytes) => bytes,
                Message::Text(text) => axum::body::Bytes::copy_from_slice(text.as_bytes()),
                Message::Close(_) => break,
                Message::Ping(_) | Message::Pong(_) => continue,
            };
            if to_node.write_all(&bytes).await.is_err() {
                break;
            }
            up.fetch_add(bytes.len() as u64, Ordering::Relaxed);
            touch(&last_active);
        }
        // The client is done sending: the node sees end of input, and answers the rest.
        let _ = to_node.shutdown().await;
    };
    let downstream = async {
        let mut buffer = vec![0u8; CHUNK];
        loop {
            let read = match from_node.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(read) => read,
            };
            let chunk = axum::body::Bytes::copy_from_slice(&buffer[..read]);
            if to_client.send(Message::Binary(chunk)).await.is_err() {
                break;
            }
            down.fetch_add(read as u64, Ordering::Relaxed);
            touch(&last_active);
        }
        let _ = to_client.send(Message::Close(None)).await;
    };
    let idle = async {
        let limit = i64::try_from(IDLE_TIMEOUT.as_millis()).unwrap_or(i64::MAX);
        loop {
            let quiet = engine::store::now_ms() - last_active.load(Ordering::Relaxed);
            if quiet >= limit {
                break;
            }
            let left = u64::try_from(limit - quiet).unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(left)).await;
        }
    };
    tokio::select! {
        _ = async { tokio::join!(upstream, downstream) } => {}
        () = idle => {}
    }
    SessionBytes {
        to_node: up.load(Ordering::Relaxed),
        from_node: down.load(Ordering::Relaxed),
    }
}

/// Turn SSH sessions to the tenant's nodes (`corral cluster ssh`) on or off (the
/// tenant's admins). Off, the node endpoints answer 404.
#[utoipa::path(put, path = "/tenants/{id}/node-shell", tag = "tenants",
    params(("id" = String, Path, description = "Tenant id")), request_body = NodeShellUpdate,
    responses((status = 200, body = TenantView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn set_node_shell(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
    ApiJson(update): ApiJson<NodeShellUpdate>,
) -> Result<Json<TenantView>, ApiError> {
    Ok(Json(
        state.service.set_node_shell(&caller, &id, &update).await?,
    ))
}
