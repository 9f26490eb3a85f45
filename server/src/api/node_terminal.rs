//! The browser's terminal on a node: `GET …/nodes/{number}/terminal` upgrades to a
//! WebSocket, and the server, as the SSH client, runs a shell on a PTY on the node as
//! the node user (see `engine::service::node_terminal`). The page's xterm.js sends
//! keystrokes and pastes as binary messages and window size changes as text messages
//! (`{"type":"resize","columns":C,"rows":R}`); the server sends the PTY's output as
//! binary messages, `{"type":"exit","status":N}` when the shell exits, and closes with
//! a code saying why the session ended ([`close_code`]).
//!
//! Who may, and the browser checks (Origin and `?csrf=` for a cookie session), are as
//! for the raw tunnel of [`super::node_shell`]. A session also ends while it runs: the
//! caller's credentials and rights are checked again every [`RECHECK_EVERY`] (signed
//! out everywhere, a role lost, the tenant's setting turned off), and it is closed
//! after the server's idle time (`--terminal-idle-secs`) without a keystroke or output.
//! Every session is audited when it opens (`node.terminal`) and ends
//! (`node.terminal.end`: start, end, bytes each way, why it ended). A tenant that
//! records sessions (`PUT /tenants/{id}/terminal-recording`) gets each one as asciicast
//! v2, kept with its closing audit entry and read at `GET /audit/{id}/recording`.

use std::time::Duration;

use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::Json;
use engine::service::{
    Access, Caller, NodeTerminal, Recorder, Service, SessionUser, TerminalEnd, TerminalSummary,
};
use engine::ssh::{TerminalEvent, TerminalSize};
use futures::{SinkExt, StreamExt};
use serde::{Deserialize, Serialize};
use tokio::time::Instant;
use tower_sessions::Session;
use utoipa::{IntoParams, ToSchema};

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, ApiPath, ApiQuery, Authenticated, SessionData, SESSION_USER};
use super::node_shell::check_browser_upgrade;
use crate::http::AppState;

/// How often an open terminal checks that its user may still have it.
const RECHECK_EVERY: Duration = Duration::from_secs(3);

#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TerminalQuery {
    /// A cookie session's CSRF token (from GET /api/v1/session); bearer tokens need none.
    #[serde(default)]
    pub csrf: Option<String>,
    /// The terminal's width in columns [default: 80].
    #[serde(default)]
    pub columns: Option<u32>,
    /// The terminal's height in rows [default: 24].
    #[serde(default)]
    pub rows: Option<u32>,
}

/// A window size change from the page.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Control {
    Resize { columns: u32, rows: u32 },
}

/// What the terminal was opened with, to check again while it runs, and the cookie
/// session's CSRF token (what [`Authenticated`] does not check on a GET).
pub struct TerminalCredential {
    credential: Credential,
    session_csrf: Option<String>,
}

enum Credential {
    Token(String),
    Session(SessionUser),
}

impl FromRequestParts<AppState> for TerminalCredential {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let bearer = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "));
        if let Some(raw) = bearer {
            return Ok(Self {
                credential: Credential::Token(raw.to_owned()),
                session_csrf: None,
            });
        }
        let session = Session::from_request_parts(parts, state)
            .await
            .map_err(|(_, message)| ApiError::internal(message))?;
        let data: SessionData = session
            .get(SESSION_USER)
            .await
            .map_err(ApiError::internal)?
            .ok_or_else(|| ApiError::unauthenticated("sign in or send a bearer token"))?;
        Ok(Self {
            credential: Credential::Session(data.user),
            session_csrf: Some(data.csrf),
        })
    }
}

impl Credential {
    /// The caller as they are now, if their session or token still holds. A shell
    /// changes things, so a token must allow writing.
    async fn caller_now(&self, service: &Service, address: Option<String>) -> Option<Caller> {
        let principal = match self {
            Credential::Token(raw) => service.token_principal(raw, Access::Write).await.ok()?,
            Credential::Session(user) => service.session_principal(user).await.ok()?,
        };
        Some(Caller::new(principal, address))
    }
}

/// Open a terminal on the node: a shell on a PTY as the node user, over a WebSocket.
/// Binary messages carry keystrokes to the node and output from it; a text message
/// `{"type":"resize","columns":C,"rows":R}` changes the window size. The server ends
/// with `{"type":"exit","status":N}` when the shell exits, then closes (code 1000;
/// 4000 idle, 4003 no longer allowed). A cookie session must send `Origin` and `?csrf=`.
#[utoipa::path(get, path = "/clusters/{id}/nodes/{number}/terminal", tag = "clusters",
    params(("id" = String, Path, description = "Cluster id or name"),
           ("number" = i64, Path, description = "Node number, e.g. 1000"), TerminalQuery),
    responses((status = 101, description = "Switching to the terminal's WebSocket"),
              (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
              (status = 409, body = ErrorBody)))]
pub async fn terminal(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    credential: TerminalCredential,
    ApiPath((id, number)): ApiPath<(String, i64)>,
    ApiQuery(query): ApiQuery<TerminalQuery>,
    headers: HeaderMap,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    check_browser_upgrade(
        &headers,
        credential.session_csrf.as_deref(),
        query.csrf.as_deref(),
    )?;
    let service = &state.service;
    // A read-only token may look, not type into a shell.
    if credential
        .credential
        .caller_now(service, caller.address.clone())
        .await
        .is_none()
    {
        return Err(ApiError::forbidden(
            "a terminal needs a token that may write (this one is read-only)",
        ));
    }
    let target = service.node_shell_target(&caller, &id, number).await?;
    let upgrade = upgrade.map_err(|rejection| {
        ApiError::bad_request(format!(
            "this endpoint is a WebSocket ({})",
            rejection.body_text()
        ))
    })?;
    let size = TerminalSize::clamped(query.columns.unwrap_or(80), query.rows.unwrap_or(24));
    let recorder = service.terminal_recorder(&target, size).await;
    let terminal = service.open_node_terminal(&caller, target, size).await?;
    let service = service.clone();
    Ok(upgrade
        .on_upgrade(move |socket| async move {
            let target = terminal.target.clone();
            let started_ms = service.node_terminal_opened(&caller, &target).await;
            let mut session = Relay {
                service: &service,
                caller: &caller,
                credential: credential.credential,
                recorder,
            };
            let mut summary = session.run(socket, terminal).await;
            summary.started_ms = started_ms;
            service
                .node_terminal_closed(&caller, &target, summary, session.recorder)
                .await;
        })
        .into_response())
}

/// The WebSocket close code that tells the page why its session ended.
pub fn close_code(end: TerminalEnd) -> u16 {
    match end {
        TerminalEnd::ShellExited | TerminalEnd::ClientClosed => 1000,
        TerminalEnd::Idle => 4000,
        TerminalEnd::NoLongerAllowed => 4003,
    }
}

struct Relay<'a> {
    service: &'a Service,
    caller: &'a Caller,
    credential: Credential,
    /// The session's recording, when its tenant records sessions.
    recorder: Option<Recorder>,
}

impl Relay<'_> {
    /// Moves keystrokes and output until the session ends; returns what it moved.
    async fn run(&mut self, socket: WebSocket, terminal: NodeTerminal) -> TerminalSummary {
        let NodeTerminal {
            target,
            input,
            mut output,
        } = terminal;
        let (mut to_page, mut from_page) = socket.split();
        let idle_limit = self.service.terminal_idle();
        let mut last_active = Instant::now();
        let mut recheck = tokio::time::interval_at(Instant::now() + RECHECK_EVERY, RECHECK_EVERY);
        let mut to_node = 0u64;
        let mut from_node = 0u64;
        let ended = loop {
            tokio::select! {
                message = from_page.next() => match message {
                    Some(Ok(Message::Binary(bytes))) => {
                        if input.send(&bytes).await.is_err() {
                            break TerminalEnd::ShellExited;
                        }
                        to_node += bytes.len() as u64;
                        last_active = Instant::now();
                    }
                    Some(Ok(Message::Text(text))) => {
                        // A size change is not activity: a tab left open does not
                        // keep its session.
                        if let Ok(Control::Resize { columns, rows }) = serde_json::from_str(&text) {
                            let size = TerminalSize::clamped(columns, rows);
                            let _ = input.resize(size).await;
                            if let Some(recorder) = &mut self.recorder {
                                recorder.resize(size);
                            }
                        }
                    }
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                    Some(Ok(Message::Close(_)) | Err(_)) | None => break TerminalEnd::ClientClosed,
                },
                event = output.next() => match event {
                    Some(TerminalEvent::Output(bytes)) => {
                        from_node += bytes.len() as u64;
                        if let Some(recorder) = &mut self.recorder {
                            recorder.output(&bytes);
                        }
                        last_active = Instant::now();
                        if to_page.send(Message::Binary(bytes.into())).await.is_err() {
                            break TerminalEnd::ClientClosed;
                        }
                    }
                    Some(TerminalEvent::Exited(status)) => {
                        let exit = serde_json::json!({"type": "exit", "status": status});
                        let _ = to_page.send(Message::Text(exit.to_string().into())).await;
                    }
                    None => break TerminalEnd::ShellExited,
                },
                _ = recheck.tick() => {
                    let now = self.credential.caller_now(self.service, self.caller.address.clone()).await;
                    let allowed = match now {
                        Some(caller) => self.service.node_terminal_still_allowed(&caller, &target).await,
                        None => false,
                    };
                    if !allowed {
                        break TerminalEnd::NoLongerAllowed;
                    }
                }
                () = tokio::time::sleep_until(last_active + idle_limit) => break TerminalEnd::Idle,
            }
        };
        input.close().await;
        let _ = to_page
            .send(Message::Close(Some(CloseFrame {
                code: close_code(ended),
                reason: ended.as_str().into(),
            })))
            .await;
        TerminalSummary {
            started_ms: 0,
            bytes_to_node: to_node,
            bytes_from_node: from_node,
            ended,
        }
    }
}

/// Whether a tenant's browser terminal sessions are recorded.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TerminalRecordingSetting {
    pub terminal_recording: bool,
}

/// Record the tenant's browser terminal sessions (asciicast v2, at most 1 MiB each) or
/// stop (the tenant's admins). Each recording is kept with its session's
/// `node.terminal.end` audit entry.
#[utoipa::path(put, path = "/tenants/{id}/terminal-recording", tag = "tenants",
    params(("id" = String, Path, description = "Tenant id")), request_body = TerminalRecordingSetting,
    responses((status = 200, body = TerminalRecordingSetting), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn set_terminal_recording(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
    ApiJson(setting): ApiJson<TerminalRecordingSetting>,
) -> Result<Json<TerminalRecordingSetting>, ApiError> {
    let terminal_recording = state
        .service
        .set_terminal_recording(&caller, &id, setting.terminal_recording)
        .await?;
    Ok(Json(TerminalRecordingSetting { terminal_recording }))
}

/// The recording of a browser terminal session, as asciicast v2, by the id of its
/// `node.terminal.end` audit entry (the tenant's admins). Served as
/// `application/octet-stream`: asciicast has no registered media type, and generated
/// clients read an unknown `application/x-…` type as nothing at all.
#[utoipa::path(get, path = "/audit/{id}/recording", tag = "audit",
    params(("id" = String, Path, description = "The session's node.terminal.end audit entry id")),
    responses((status = 200, description = "asciicast v2", content_type = "application/octet-stream", body = String),
              (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn recording(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
) -> Result<Response, ApiError> {
    let recording = state.service.terminal_recording(&caller, &id).await?;
    Ok((
        [(header::CONTENT_TYPE, "application/octet-stream")],
        recording.cast_text,
    )
        .into_response())
}
