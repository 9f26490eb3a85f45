//! The browser's terminal on a node: who may open one (as for `corral cluster ssh`, see
//! [`super::node_shell`]), signing in to the node with a certificate made for the one
//! session, checking again while it runs, and its audit entries.
//!
//! The server is the SSH client here: it makes an Ed25519 key in memory, has the
//! tenant's user CA sign it for the node user for [`LOGIN_CERTIFICATE_VALIDITY`] (long
//! enough to sign in; an open session outlives its certificate, as with OpenSSH), and
//! starts a shell on a PTY on the node as the node user. Nothing runs on the server's
//! own host, and nothing is installed on the node.
//!
//! A tenant may have its sessions recorded ([`Recorder`]: asciicast v2, bounded by
//! [`MAX_RECORDING_BYTES`]), kept under the id of the session's closing audit entry and
//! readable by the tenant's admins.

use std::time::{Duration, Instant, SystemTime};

use api_types::AuditAction;
use rand_core::{OsRng, RngCore};
use russh::keys::ssh_key::private::Ed25519Keypair;
use russh::keys::ssh_key::Certificate;
use russh::keys::PrivateKey;

use super::{AuditRecord, Caller, NodeShellTarget, Service, ServiceError};
use crate::ssh::{
    open_terminal, CertificateRequest, SshError, TerminalInput, TerminalLogin, TerminalOutput,
    TerminalSize, UserCa,
};
use crate::store::audit::AuditEntry;
use crate::store::now_ms;
use crate::store::tenants::TenantSwitch;
use crate::store::terminal_recordings::TerminalRecording;

/// How long the certificate the server signs in with is valid.
const LOGIN_CERTIFICATE_VALIDITY: Duration = Duration::from_secs(120);
/// How long connecting and signing in to the node may take.
const OPEN_TIMEOUT: Duration = Duration::from_secs(10);
/// A terminal with no keystroke and no output for this long is closed, unless the
/// server was configured otherwise (`corral serve --terminal-idle-secs`).
pub const DEFAULT_TERMINAL_IDLE: Duration = Duration::from_secs(15 * 60);

/// An open terminal on a node, and which node it is.
pub struct NodeTerminal {
    pub target: NodeShellTarget,
    pub input: TerminalInput,
    pub output: TerminalOutput,
}

/// What a terminal session moved and how it ended, for its closing audit entry.
#[derive(Debug, Clone, Copy)]
pub struct TerminalSummary {
    pub started_ms: i64,
    /// Keystrokes (and pastes), in bytes.
    pub bytes_to_node: u64,
    /// Output, in bytes.
    pub bytes_from_node: u64,
    pub ended: TerminalEnd,
}

/// Why a terminal session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TerminalEnd {
    /// The shell on the node exited (or the node closed the connection).
    ShellExited,
    /// The browser closed the WebSocket (a closed tab, a reconnect).
    ClientClosed,
    /// No keystroke and no output for the idle time.
    Idle,
    /// The user signed out everywhere, lost the role or was deleted, or node shells
    /// were turned off.
    NoLongerAllowed,
}

impl TerminalEnd {
    /// How the audit entry and the browser name it.
    pub fn as_str(self) -> &'static str {
        match self {
            TerminalEnd::ShellExited => "shell-exited",
            TerminalEnd::ClientClosed => "client-closed",
            TerminalEnd::Idle => "idle",
            TerminalEnd::NoLongerAllowed => "no-longer-allowed",
        }
    }
}

impl Service {
    /// Closes browser terminals after `idle` without a keystroke or output.
    pub fn with_terminal_idle(mut self, idle: Duration) -> Self {
        self.terminal_idle = idle;
        self
    }

    /// How long a browser terminal may stay idle.
    pub fn terminal_idle(&self) -> Duration {
        self.terminal_idle
    }

    /// Signs in to `target`'s node (found allowed for `caller` by
    /// [`Service::node_shell_target`]) and starts a shell on a PTY of `size`.
    pub async fn open_node_terminal(
        &self,
        caller: &Caller,
        target: NodeShellTarget,
        size: TerminalSize,
    ) -> Result<NodeTerminal, ServiceError> {
        let (key, certificate) = self.login_certificate(caller, &target).await?;
        let label = target.label();
        let login = TerminalLogin {
            node: &label,
            host: &target.host,
            port: target.port,
            user: &target.user,
            host_key: &target.host_key,
            key,
            certificate,
        };
        let (input, output) = open_terminal(login, size, OPEN_TIMEOUT)
            .await
            .map_err(|error| terminal_refused(&target, error))?;
        Ok(NodeTerminal {
            target,
            input,
            output,
        })
    }

    /// Whether `caller` may open terminals on the nodes of `cluster` (id or name): its
    /// owner or a tenant admin, with node shells on for this server and the tenant. What
    /// the cluster page asks to show its Terminal buttons.
    pub async fn node_terminal_available(&self, caller: &Caller, cluster: &str) -> bool {
        let Ok(cluster) = self.visible_cluster(caller, cluster).await else {
            return false;
        };
        let tenant_on = match self.store.tenant(&cluster.tenant_id).await {
            Ok(tenant) => tenant.node_shell,
            Err(_) => false,
        };
        let owner = cluster.owner_id.as_deref() == Some(caller.principal.user_id.as_str());
        self.node_shell
            && tenant_on
            && (owner || caller.principal.can_administer_tenant(&cluster.tenant_id))
    }

    /// Whether `caller` (as they are now: roles, session and token checked again by the
    /// caller of this) may still have a terminal on `target`'s node.
    pub async fn node_terminal_still_allowed(
        &self,
        caller: &Caller,
        target: &NodeShellTarget,
    ) -> bool {
        self.node_shell_target(caller, &target.cluster_id, target.number)
            .await
            .is_ok()
    }

    /// A fresh key and its certificate for the node user, from the tenant's user CA.
    async fn login_certificate(
        &self,
        caller: &Caller,
        target: &NodeShellTarget,
    ) -> Result<(PrivateKey, Certificate), ServiceError> {
        let mut seed = [0u8; 32];
        OsRng.fill_bytes(&mut seed);
        let key = PrivateKey::from(Ed25519Keypair::from_seed(&seed));
        seed.fill(0);
        let public = key
            .public_key()
            .to_openssh()
            .map_err(ServiceError::internal)?;
        let ca = UserCa::of_tenant(&self.store, &target.tenant_id)
            .await
            .map_err(ServiceError::internal)?;
        let signed = ca
            .sign(&CertificateRequest {
                public_key: &public,
                node_user: &target.user,
                cluster_id: &target.cluster_id,
                key_id: format!(
                    "corral terminal of {} on {}",
                    caller.principal.username,
                    target.label()
                ),
                valid_from: SystemTime::now(),
                valid_for: LOGIN_CERTIFICATE_VALIDITY,
            })
            .map_err(ServiceError::internal)?;
        let certificate = Certificate::from_openssh(&signed).map_err(ServiceError::internal)?;
        Ok((key, certificate))
    }

    /// Records that `caller` opened a terminal on `target`; returns when (Unix ms).
    pub async fn node_terminal_opened(&self, caller: &Caller, target: &NodeShellTarget) -> i64 {
        let started = now_ms();
        let label = target.label();
        let mut record =
            AuditRecord::new(&target.tenant_id, AuditAction::NodeTerminal, "node", &label);
        record.after = Some(
            serde_json::json!({
                "address": format!("{}:{}", target.host, target.port),
                "user": target.user,
            })
            .to_string(),
        );
        self.audit(caller, record).await;
        started
    }

    /// A recorder for a session on `target` starting at `size`, if its tenant records
    /// terminal sessions.
    pub async fn terminal_recorder(
        &self,
        target: &NodeShellTarget,
        size: TerminalSize,
    ) -> Option<Recorder> {
        match self
            .store
            .tenant_switch(&target.tenant_id, TenantSwitch::TerminalRecording)
            .await
        {
            Ok(true) => Some(Recorder::new(size)),
            Ok(false) => None,
            Err(error) => {
                // Recording is the tenant's choice: a session that cannot tell whether
                // to record is not opened unrecorded silently.
                tracing::error!(%error, "cannot read the tenant's terminal recording setting");
                Some(Recorder::new(size))
            }
        }
    }

    /// Records that `caller`'s terminal on `target` ended, what it moved and why, with
    /// the session's recording, if it was recorded, kept under the entry's id.
    pub async fn node_terminal_closed(
        &self,
        caller: &Caller,
        target: &NodeShellTarget,
        summary: TerminalSummary,
        recording: Option<Recorder>,
    ) {
        let id = uuid::Uuid::new_v4().to_string();
        let recording = recording.map(Recorder::finish);
        let mut after = serde_json::json!({
            "started_at_ms": summary.started_ms,
            "ended_at_ms": now_ms(),
            "bytes_to_node": summary.bytes_to_node,
            "bytes_from_node": summary.bytes_from_node,
            "ended": summary.ended.as_str(),
        });
        if let Some((_, truncated)) = &recording {
            after["recorded"] = serde_json::json!(true);
            after["recording_truncated"] = serde_json::json!(truncated);
        }
        let entry = AuditEntry {
            id: id.clone(),
            tenant_id: target.tenant_id.clone(),
            actor_id: Some(caller.principal.user_id.clone()),
            actor_name: caller.principal.username.clone(),
            action: AuditAction::NodeTerminalEnd,
            target_kind: "node".to_owned(),
            target: target.label(),
            address: caller.address.clone(),
            before_json: None,
            after_json: Some(after.to_string()),
            at_ms: now_ms(),
        };
        if let Err(error) = self.store.append_audit(&entry).await {
            tracing::error!(%error, action = entry.action.as_str(), "audit entry not written");
        }
        if let Some((cast_text, truncated)) = recording {
            let saved = self
                .store
                .save_terminal_recording(&TerminalRecording {
                    audit_id: id,
                    tenant_id: target.tenant_id.clone(),
                    cast_text,
                    truncated,
                    recorded_at_ms: now_ms(),
                })
                .await;
            if let Err(error) = saved {
                tracing::error!(%error, "terminal recording not written");
            }
        }
    }

    /// The recording kept with audit entry `audit_id` (the tenant's admins).
    pub async fn terminal_recording(
        &self,
        caller: &Caller,
        audit_id: &str,
    ) -> Result<TerminalRecording, ServiceError> {
        let recording = self.store.terminal_recording(audit_id).await?;
        caller.require_visible(&recording.tenant_id, || {
            format!("recording of audit entry {audit_id:?}")
        })?;
        caller.require_tenant_admin(&recording.tenant_id)?;
        Ok(recording)
    }

    /// Turns recording the tenant's browser terminal sessions on or off (its admins).
    pub async fn set_terminal_recording(
        &self,
        caller: &Caller,
        tenant_id: &str,
        on: bool,
    ) -> Result<bool, ServiceError> {
        caller.require_visible(tenant_id, || format!("tenant {tenant_id:?}"))?;
        caller.require_tenant_admin(tenant_id)?;
        self.switch_tenant(caller, tenant_id, TenantSwitch::TerminalRecording, on)
            .await?;
        Ok(on)
    }
}

/// The most a session's recording keeps, in bytes of asciicast text; past it the rest
/// of the session is not recorded and the recording says it was cut.
pub const MAX_RECORDING_BYTES: usize = 1024 * 1024;

/// A session's recording as it is made: asciicast v2, the PTY's output (which echoes
/// what was typed) and window size changes, timed from the start.
pub struct Recorder {
    started: Instant,
    text: String,
    /// The end of a UTF-8 character split between two reads, kept for the next.
    partial: Vec<u8>,
    truncated: bool,
}

impl Recorder {
    /// A recording of a terminal of `size`, starting now.
    pub fn new(size: TerminalSize) -> Self {
        let header = serde_json::json!({
            "version": 2,
            "width": size.columns,
            "height": size.rows,
            "timestamp": now_ms() / 1000,
            "env": {"TERM": "xterm-256color"},
        });
        Self {
            started: Instant::now(),
            text: format!("{header}\n"),
            partial: Vec::new(),
            truncated: false,
        }
    }

    /// The PTY wrote `bytes`.
    pub fn output(&mut self, bytes: &[u8]) {
        self.partial.extend_from_slice(bytes);
        let whole = match std::str::from_utf8(&self.partial) {
            Ok(_) => self.partial.len(),
            // An incomplete character at the end waits for the rest; an invalid one is
            // written as U+FFFD below.
            Err(error) if error.error_len().is_none() => error.valid_up_to(),
            Err(_) => self.partial.len(),
        };
        let rest = self.partial.split_off(whole);
        let data = String::from_utf8_lossy(&self.partial).into_owned();
        self.partial = rest;
        if !data.is_empty() {
            self.event("o", &data);
        }
    }

    /// The window is now `size`.
    pub fn resize(&mut self, size: TerminalSize) {
        self.event("r", &format!("{}x{}", size.columns, size.rows));
    }

    fn event(&mut self, code: &str, data: &str) {
        if self.truncated {
            return;
        }
        let at = self.started.elapsed().as_secs_f64();
        let line = serde_json::json!([(at * 1_000_000.0).round() / 1_000_000.0, code, data]);
        let line = format!("{line}\n");
        if self.text.len() + line.len() > MAX_RECORDING_BYTES {
            self.truncated = true;
            return;
        }
        self.text.push_str(&line);
    }

    /// The asciicast text, and whether it was cut at the bound.
    pub fn finish(self) -> (String, bool) {
        (self.text, self.truncated)
    }
}

/// Why a terminal could not be opened, for the user: the node is down, or does not
/// trust the tenant's authority (made before Corral had one), or its host key changed.
fn terminal_refused(target: &NodeShellTarget, error: SshError) -> ServiceError {
    let node = target.label();
    match error {
        SshError::Connect { .. } | SshError::HandshakeTimeout { .. } => ServiceError::Conflict(
            format!("node {node} is not reachable over SSH ({error}): is it running?"),
        ),
        SshError::AuthRefused { .. } => ServiceError::Conflict(format!(
            "node {node} refused the tenant's SSH certificate (nodes made before Corral had \
             a user certificate authority do not trust it)"
        )),
        SshError::HostKeyMismatch { .. } => ServiceError::Conflict(error.to_string()),
        other => ServiceError::Conflict(format!("cannot open a terminal on node {node}: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::{Recorder, TerminalSize, MAX_RECORDING_BYTES};

    #[test]
    fn a_recording_keeps_split_characters_whole_and_stops_at_its_bound() {
        let mut recorder = Recorder::new(TerminalSize::default());
        let snowman = "☃".as_bytes();
        recorder.output(&snowman[..1]);
        recorder.output(&snowman[1..]);
        recorder.resize(TerminalSize::clamped(100, 30));
        let (text, truncated) = recorder.finish();
        assert!(!truncated);
        let events: Vec<serde_json::Value> = text
            .lines()
            .skip(1)
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(events[0][1], "o");
        assert_eq!(events[0][2], "☃");
        assert_eq!(events[1][2], "100x30");

        let mut recorder = Recorder::new(TerminalSize::default());
        let line = vec![b'x'; 4096];
        for _ in 0..(2 * MAX_RECORDING_BYTES / line.len()) {
            recorder.output(&line);
        }
        let (text, truncated) = recorder.finish();
        assert!(truncated);
        assert!(text.len() <= MAX_RECORDING_BYTES, "{}", text.len());
        assert!(text.len() > MAX_RECORDING_BYTES - 2 * line.len());
    }
}
