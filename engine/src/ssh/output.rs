//! What a remote command produces: output chunks as they arrive, and how it ended.

/// Which remote stream a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutputStream {
    Stdout,
    Stderr,
}

/// Bytes exactly as the node sent them; a chunk boundary means nothing (lines may be split).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputChunk {
    pub stream: OutputStream,
    pub bytes: Vec<u8>,
}

/// How a remote command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExitStatus {
    Code(u32),
    /// Killed by a signal, named as SSH names it (`KILL`, `TERM`, …).
    Signal(String),
}

impl ExitStatus {
    pub fn success(&self) -> bool {
        matches!(self, ExitStatus::Code(0))
    }
}

/// The result of one command that ran to its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutcome {
    pub exit: ExitStatus,
}
