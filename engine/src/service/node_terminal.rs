//! The browser's terminal on a node: who may open one (as for `corral cluster ssh`, see
//! [`super::node_shell`]), signing in to the node with a certificate made for the one
//! session, checking again while it runs, and its audit entries.
//!
//! The server is the SSH client here: it makes an Ed25519 key in memory, has the
//! tenant's user CA sign it for the node user for [`LOGIN_CERTIFICATE_VALIDITY`] (long
//! enough to sign in; an open session outlives its certificate, as with OpenSSH), and
//! starts a shell on a PTY on the node as the node user. Nothing runs on the server's
//! own host, and nothing is installed on the node.

use std::time::{Duration, SystemTime};

use rand_core::{OsRng, RngCore};
use russh::keys::PrivateKey;
use russh::keys::ssh_key::Certificate;
use russh::keys::ssh_key::private::Ed25519Keypair;

use super::{AuditRecord, Caller, NodeShellTarget, Service, ServiceError};
use crate::ssh::{
    CertificateRequest, SshError, TerminalInput, TerminalLogin, TerminalOutput, TerminalSize,
    UserCa, open_terminal,
};
use crate::store::now_ms;

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
        let mut record = AuditRecord::new(&target.tenant_id, "node.terminal", "node", &label);
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

    /// Records that `caller`'s terminal on `target` ended, what it moved and why.
    pub async fn node_terminal_closed(
        &self,
        caller: &Caller,
        target: &NodeShellTarget,
        summary: TerminalSummary,
    ) {
        let label = target.label();
        let mut record = AuditRecord::new(&target.tenant_id, "node.terminal.end", "node", &label);
        record.after = Some(
            serde_json::json!({
                "started_at_ms": summary.started_ms,
                "ended_at_ms": now_ms(),
                "bytes_to_node": summary.bytes_to_node,
                "bytes_from_node": summary.bytes_from_node,
                "ended": summary.ended.as_str(),
            })
            .to_string(),
        );
        self.audit(caller, record).await;
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
