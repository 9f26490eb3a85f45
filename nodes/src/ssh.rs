//! SSH to nodes through russh: one authenticated session per node, reused for all of its
//! tasks, with pinned host keys, streamed output and per-step timeouts.
//!
//! [`SessionPool`] is what the engine uses; [`SshSession`] is one connection and is public
//! for tools (benchmarks, diagnostics) that need to measure a fresh handshake.

mod client_keys;
mod error;
mod handshakes;
mod host_key;
mod output;
mod pool;
mod session;
mod step_shell;
mod terminal;
mod user_ca;

pub use client_keys::ClientKeyPair;
pub use error::SshError;
pub use handshakes::{record_handshake, SSH_HANDSHAKES, SSH_HANDSHAKE_DURATION};
pub use host_key::HostKey;
pub use output::{CommandOutcome, ExitStatus, OutputChunk, OutputStream};
pub use pool::{PoolConfig, SessionPool};
pub use session::first_seen_host_key;
pub use session::{ClientKey, RunOptions, SshSession, SshTarget};
pub use terminal::{
    open_terminal, TerminalEvent, TerminalInput, TerminalLogin, TerminalOutput, TerminalSize,
};
pub use user_ca::{
    cluster_principal, CertificateRequest, UserCa, UserCaError, DEFAULT_CERTIFICATE_MINUTES,
    MAX_CERTIFICATE_MINUTES,
};
