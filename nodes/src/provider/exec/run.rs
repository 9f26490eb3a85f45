//! Running a plugin once: one request on stdin, one response on stdout, within bounds.
//!
//! The plugin gets a cleared environment (PATH, HOME, LANG and the protocol version
//! only), so nothing of the server's environment (database URLs, keys) leaks into it;
//! credentials travel only on stdin. It runs in a process group of its own, which is
//! killed when the call times out, when stdout grows past [`MAX_STDOUT`], and when the
//! call is over (a forgotten background process does not outlive it). Its stderr is kept
//! (the last [`STDERR_TAIL`] bytes) for error messages, with every credential value
//! blotted out, as in everything else shown.

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use super::protocol::{ExecOp, PROTOCOL_VERSION};
use crate::provider::{ProviderError, Scrubber};

/// Most bytes a response may have: a node's answer is a few hundred.
pub const MAX_STDOUT: usize = 1024 * 1024;
/// How much of the end of stderr goes into error messages.
pub const STDERR_TAIL: usize = 4 * 1024;
/// How long stdout may stay open after the plugin exited: a background process it
/// started without redirecting its output would otherwise hold the call forever.
const PIPE_GRACE: Duration = Duration::from_secs(2);

/// One call: which plugin, for what, and the secret values to keep out of messages.
pub struct Call<'a> {
    pub plugin: &'a str,
    pub path: &'a Path,
    pub op: ExecOp,
    pub node: Option<&'a str>,
    pub timeout: Duration,
    /// What blots the credentials' values (in any escaped form) out of errors.
    pub scrubber: &'a Scrubber,
}

/// What a finished plugin left: its exit status, stdout and stderr's tail (scrubbed).
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr_tail: String,
}

impl Call<'_> {
    /// A [`ProviderError::PluginFailed`] for this call.
    pub fn failed(&self, detail: impl Into<String>) -> ProviderError {
        ProviderError::PluginFailed {
            plugin: self.plugin.to_owned(),
            op: self.op.as_str(),
            node: self.node.map(str::to_owned),
            detail: self.scrub(&detail.into()),
        }
    }

    /// `text` with every secret value replaced.
    pub fn scrub(&self, text: &str) -> String {
        self.scrubber.scrub(text)
    }

    /// Runs the plugin with `request` on its stdin.
    pub async fn run(&self, request: &[u8]) -> Result<Finished, ProviderError> {
        let mut command = Command::new(self.path);
        command
            .env_clear()
            .env("CORRAL_PROVIDER_PROTOCOL", PROTOCOL_VERSION.to_string())
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        for name in ["PATH", "HOME", "LANG"] {
            if let Some(value) = std::env::var_os(name) {
                command.env(name, value);
            }
        }
        if std::env::var_os("PATH").is_none() {
            command.env("PATH", "/usr/local/bin:/usr/bin:/bin");
        }
        let mut child = command.spawn().map_err(|error| {
            self.failed(format!("cannot start {}: {error}", self.path.display()))
        })?;
        let group = ProcessGroup(child.id().and_then(|pid| i32::try_from(pid).ok()));
        let (Some(mut stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(self.failed("its stdin, stdout or stderr was not a pipe"));
        };
        let request = request.to_vec();
        // A plugin that exits without reading its request breaks the pipe; what it said
        // on stdout is what counts, so a failed write is not an error of its own.
        let writer = tokio::spawn(async move {
            let _ = stdin.write_all(&request).await;
            let _ = stdin.shutdown().await;
        });
        let mut reader = tokio::spawn(read_bounded(stdout, MAX_STDOUT));
        let stderr_reader = tokio::spawn(read_tail(stderr, STDERR_TAIL));

        let outcome = tokio::time::timeout(self.timeout, async {
            tokio::select! {
                status = child.wait() => Ok(status),
                read = &mut reader => Err(read),
            }
        })
        .await;
        let status = match outcome {
            Ok(Ok(status)) => status,
            // stdout ended or overflowed before the plugin exited.
            Ok(Err(read)) => {
                let overflowed = matches!(read, Ok(Ok(Read::TooLong)));
                if overflowed {
                    group.kill();
                }
                match tokio::time::timeout(self.timeout, child.wait()).await {
                    Ok(status) => {
                        let stdout = self.stdout_of(read)?;
                        return self
                            .finish(status, stdout, stderr_reader, writer, &group)
                            .await;
                    }
                    Err(_) => {
                        group.kill();
                        return Err(self.timed_out(stderr_reader).await);
                    }
                }
            }
            Err(_) => {
                group.kill();
                let _ = child.wait().await;
                reader.abort();
                return Err(self.timed_out(stderr_reader).await);
            }
        };
        let read = match tokio::time::timeout(PIPE_GRACE, &mut reader).await {
            Ok(read) => read,
            Err(_) => {
                reader.abort();
                group.kill();
                return Err(self.failed(
                    "it exited but its stdout stayed open: a process it started in the \
                     background still holds it (start background processes with stdin, \
                     stdout and stderr redirected, e.g. to /dev/null)",
                ));
            }
        };
        let stdout = self.stdout_of(read)?;
        self.finish(status, stdout, stderr_reader, writer, &group)
            .await
    }

    fn stdout_of(
        &self,
        read: Result<std::io::Result<Read>, tokio::task::JoinError>,
    ) -> Result<Vec<u8>, ProviderError> {
        match read {
            Ok(Ok(Read::Whole(bytes))) => Ok(bytes),
            Ok(Ok(Read::TooLong)) => Err(self.failed(format!(
                "it printed more than {} KiB on stdout (a response is one JSON object)",
                MAX_STDOUT / 1024
            ))),
            Ok(Err(error)) => Err(self.failed(format!("reading its stdout failed: {error}"))),
            Err(error) => Err(self.failed(format!("reading its stdout failed: {error}"))),
        }
    }

    async fn finish(
        &self,
        status: std::io::Result<ExitStatus>,
        stdout: Vec<u8>,
        stderr_reader: tokio::task::JoinHandle<Vec<u8>>,
        writer: tokio::task::JoinHandle<()>,
        group: &ProcessGroup,
    ) -> Result<Finished, ProviderError> {
        let status =
            status.map_err(|error| self.failed(format!("waiting for it failed: {error}")))?;
        writer.abort();
        let stderr = match tokio::time::timeout(PIPE_GRACE, stderr_reader).await {
            Ok(Ok(bytes)) => bytes,
            // Held open by a background process: what was read so far is lost, and the
            // response decides the call.
            _ => {
                group.kill();
                Vec::new()
            }
        };
        Ok(Finished {
            status,
            stdout,
            stderr_tail: self.scrub(String::from_utf8_lossy(&stderr).trim()),
        })
    }

    async fn timed_out(&self, stderr_reader: tokio::task::JoinHandle<Vec<u8>>) -> ProviderError {
        let stderr = match tokio::time::timeout(PIPE_GRACE, stderr_reader).await {
            Ok(Ok(bytes)) => self.scrub(String::from_utf8_lossy(&bytes).trim()),
            _ => String::new(),
        };
        ProviderError::PluginTimeout {
            plugin: self.plugin.to_owned(),
            op: self.op.as_str(),
            node: self.node.map(str::to_owned),
            seconds: self.timeout.as_secs(),
            stderr: stderr_suffix(&stderr),
        }
    }
}

/// `; stderr: ...` for an error message, or nothing when stderr was empty.
pub fn stderr_suffix(tail: &str) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!("; stderr: {tail}")
    }
}

/// The plugin's process group, killed where a call ends early and again when the call
/// is over, whichever way (also when the calling task is cancelled): nothing a plugin
/// started stays behind unless it left the group on purpose (`setsid`, as a daemon does).
/// Killing a group that has ended does nothing.
struct ProcessGroup(Option<i32>);

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

impl ProcessGroup {
    fn kill(&self) {
        if let Some(pid) = self.0.and_then(rustix::process::Pid::from_raw) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

#[derive(Debug)]
enum Read {
    Whole(Vec<u8>),
    TooLong,
}

/// Reads to the end, or stops after `limit` bytes.
async fn read_bounded(mut source: impl AsyncRead + Unpin, limit: usize) -> std::io::Result<Read> {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let read = source.read(&mut chunk).await?;
        if read == 0 {
            return Ok(Read::Whole(bytes));
        }
        if bytes.len() + read > limit {
            return Ok(Read::TooLong);
        }
        bytes.extend_from_slice(&chunk[..read]);
    }
}

/// Reads to the end keeping the last `keep` bytes (a plugin may log a lot; the end says
/// why it failed).
async fn read_tail(mut source: impl AsyncRead + Unpin, keep: usize) -> Vec<u8> {
    let mut tail = Vec::new();
    let mut chunk = [0u8; 8192];
    while let Ok(read) = source.read(&mut chunk).await {
        if read == 0 {
            break;
        }
        tail.extend_from_slice(&chunk[..read]);
        if tail.len() > keep {
            tail.drain(..tail.len() - keep);
        }
    }
    tail
}
