//! The node's side of running steps: one long-lived bash per SSH session, fed each step's
//! text on its stdin, that runs the step in a process group of its own and reports how it
//! ended. A step then costs the node one fork, in which bash execs the step's last
//! program, instead of a new SSH channel, a new login shell and a lifeline process.
//!
//! The protocol, all over one session channel:
//! - the client sends a frame per step: a header line `<nonce> <length>` and then the
//!   step's text, exactly `<length>` bytes of POSIX sh;
//! - the driver runs the text in a subshell with stdin from `/dev/null`, as a background
//!   job (its own process group), waits for it, and then writes the end markers
//!   `\x1f<nonce> <exit code>\n` to stdout and `\x1f<nonce>\n` to stderr; the client
//!   takes everything before the markers as the step's output;
//! - the client sends nothing while a step runs; when the channel's stdin ends (the
//!   client closed it on a timeout or a cancelled task, or the connection dropped because
//!   the engine died) or anything arrives, the driver kills the running step's whole
//!   process group and exits. A step that ended by itself is not killed later, so
//!   services it started in the background live on until the node is deleted.
//!
//! The nonce is random per step, so output cannot end a step early by accident.

use std::sync::LazyLock;

use futures::FutureExt as _;
use rand_core::{OsRng, RngCore};
use russh::client::{Handle, Msg};
use russh::{ChannelMsg, ChannelReadHalf, ChannelWriteHalf};
use tokio::sync::mpsc;

use crate::node_scripts::STEP_DRIVER;

use super::{CommandOutcome, ExitStatus, OutputChunk, OutputStream, RunOptions, SshError};

/// What the session channel execs: the driver ([`STEP_DRIVER`], `node_scripts/step_driver.sh`),
/// in bash. The driver's text has no `'`, so that this can quote it whole.
///
/// While a step runs, the driver waits for it by polling, at intervals that grow by a
/// quarter from 1 ms to 50 ms, whether it still runs and whether stdin has ended (bash
/// cannot wait for a child and a file descriptor at once). A step is seen to end within
/// a quarter of its own duration, and a dropped connection kills a long one within 50 ms,
/// with no lifeline process to start (on a fresh connection that fork costs the node as
/// much as the polling of many steps).
///
/// Whether the step still runs is read from `/proc` where there is one, not from
/// `kill -0` alone: bash 5.2's `read -t` sometimes returns with SIGCHLD left blocked, after
/// which bash no longer reaps its children by itself, and a zombie still answers `kill -0`.
/// (`wait` then reaps it.) The process must also still be the driver's child, so that a
/// pid reused after bash reaped the step does not keep the step running.
///
/// The driver's own stderr is `/dev/null` (fd 3 is the channel's), so that the polling
/// loop needs no redirection of its own; steps and `eval`'s syntax errors get the channel.
///
/// Bash up to 5.2 reads those intervals with a `.` whatever the locale; the driver checks
/// once, so that a bash that takes the locale's decimal comma does not end every step as
/// if stdin had closed.
///
/// The step's text is parsed as the body of the background subshell (not `eval`ed inside
/// one), so that bash execs the step's last command in the subshell's process instead of
/// forking once more. A step that does not parse starts no job (`corral_leader` stays
/// empty) and ends with `eval`'s status 2 and bash's message on stderr.
///
/// Bash, not POSIX sh: only bash gives a non-interactive shell job control (`set -m`,
/// which puts each step in its own process group), fractional `read` timeouts, and
/// reads an exact byte count from a pipe in one system call (`read -N`). The node's
/// login shell may be any Bourne-family shell; it execs `/bin/bash` when it is not bash
/// itself.
static DRIVER_COMMAND: LazyLock<String> = LazyLock::new(|| {
    let driver = STEP_DRIVER.text;
    format!(
        "[ -n \"${{BASH_VERSION-}}\" ] && ! shopt -oq posix || exec /bin/bash -c '{driver}'\n{driver}"
    )
});

/// One driver running on the node, idle or running one step.
pub(super) struct StepShell {
    reader: ChannelReadHalf,
    /// `None` once the channel has been closed.
    writer: Option<ChannelWriteHalf<Msg>>,
}

impl StepShell {
    /// Opens a session channel and starts the driver on it. The driver's start is not
    /// waited for: the first step's frame follows right behind it.
    pub(super) async fn open<H: russh::client::Handler>(
        handle: &Handle<H>,
        node: &str,
    ) -> Result<Self, SshError> {
        let channel =
            handle
                .channel_open_session()
                .await
                .map_err(|source| SshError::ChannelOpen {
                    node: node.to_owned(),
                    source,
                })?;
        let (reader, writer) = channel.split();
        writer
            .exec(true, DRIVER_COMMAND.as_str())
            .await
            .map_err(|source| SshError::Protocol {
                node: node.to_owned(),
                source,
            })?;
        Ok(Self {
            reader,
            writer: Some(writer),
        })
    }

    /// Whether an idle driver can take another step: its channel is open and it has not
    /// exited. Output that arrived while it was idle, from processes an earlier step left
    /// running with the channel as their stdout, belongs to no step and is dropped.
    pub(super) fn is_ready(&mut self) -> bool {
        if self.writer.is_none() {
            return false;
        }
        while let Some(message) = self.reader.wait().now_or_never() {
            match message {
                Some(
                    ChannelMsg::Data { .. }
                    | ChannelMsg::ExtendedData { .. }
                    | ChannelMsg::Success
                    | ChannelMsg::WindowAdjusted { .. },
                ) => {}
                _ => return false,
            }
        }
        true
    }

    /// Runs one step, streaming its output to `options.output`. On any error the driver
    /// is left in an unknown state: the caller drops it, which closes its channel and so
    /// kills whatever still runs of the step.
    pub(super) async fn run(
        &mut self,
        node: &str,
        command: &str,
        options: RunOptions,
    ) -> Result<CommandOutcome, SshError> {
        let Some(writer) = &self.writer else {
            return Err(SshError::NoExitStatus {
                node: node.to_owned(),
            });
        };
        let nonce = format!("{:016x}", OsRng.next_u64());
        // Nothing has run if the frame cannot be sent, so the caller may retry elsewhere.
        writer
            .data_bytes(frame(&nonce, command))
            .await
            .map_err(|source| SshError::ChannelOpen {
                node: node.to_owned(),
                source,
            })?;
        let mut stdout = EndMarker::new(format!("\x1f{nonce} "));
        let mut stderr = EndMarker::new(format!("\x1f{nonce}"));
        let mut output = options.output;
        let deadline = tokio::time::sleep(options.timeout);
        tokio::pin!(deadline);
        while !(stdout.is_found() && stderr.is_found()) {
            tokio::select! {
                message = self.reader.wait() => match message {
                    Some(ChannelMsg::Data { data }) => {
                        let passed = stdout.scan(&data);
                        forward(&mut output, OutputStream::Stdout, passed).await;
                    }
                    Some(ChannelMsg::ExtendedData { data, ext: 1 }) => {
                        let passed = stderr.scan(&data);
                        forward(&mut output, OutputStream::Stderr, passed).await;
                    }
                    Some(ChannelMsg::Failure) => {
                        return Err(SshError::ExecRefused { node: node.to_owned() });
                    }
                    Some(
                        ChannelMsg::Eof
                        | ChannelMsg::Close
                        | ChannelMsg::ExitStatus { .. }
                        | ChannelMsg::ExitSignal { .. },
                    )
                    | None => {
                        return Err(SshError::NoExitStatus { node: node.to_owned() });
                    }
                    Some(_) => {}
                },
                () = &mut deadline => {
                    self.close().await;
                    return Err(SshError::CommandTimedOut {
                        node: node.to_owned(),
                        timeout: options.timeout,
                    });
                }
            }
        }
        let code = stdout
            .trailer()
            .and_then(|text| std::str::from_utf8(text).ok())
            .and_then(|text| text.trim().parse::<u32>().ok())
            .ok_or_else(|| SshError::NoExitStatus {
                node: node.to_owned(),
            })?;
        Ok(CommandOutcome {
            exit: ExitStatus(code),
        })
    }

    /// Ends the driver by closing its stdin and channel; it kills a step still running.
    /// Best effort: the connection may already be gone.
    pub(super) async fn close(&mut self) {
        if let Some(writer) = self.writer.take() {
            close(&writer).await;
        }
    }
}

impl Drop for StepShell {
    fn drop(&mut self) {
        if let Some(writer) = self.writer.take() {
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move { close(&writer).await });
            }
        }
    }
}

/// A step's frame: header line, then the text. The text gets a newline, which changes
/// nothing for the shell and keeps the length above zero, as `read -N` needs.
fn frame(nonce: &str, command: &str) -> Vec<u8> {
    let mut frame = format!("{nonce} {}\n", command.len() + 1).into_bytes();
    frame.extend_from_slice(command.as_bytes());
    frame.push(b'\n');
    frame
}

async fn close(writer: &ChannelWriteHalf<Msg>) {
    let _ = writer.eof().await;
    let _ = writer.close().await;
}

async fn forward(
    output: &mut Option<mpsc::Sender<OutputChunk>>,
    stream: OutputStream,
    bytes: Vec<u8>,
) {
    if bytes.is_empty() {
        return;
    }
    if let Some(sender) = output {
        if sender.send(OutputChunk { stream, bytes }).await.is_err() {
            *output = None;
        }
    }
}

/// Watches one stream for its end marker: passes on what comes before it, keeps the line
/// that follows it (the exit code, on stdout) and drops whatever comes after that.
#[derive(Debug)]
struct EndMarker {
    marker: Vec<u8>,
    /// Bytes not yet passed on: the end of what arrived, which may be the start of the
    /// marker, or, once the marker was seen, the trailer line so far.
    held: Vec<u8>,
    state: MarkerState,
}

#[derive(Debug, PartialEq, Eq)]
enum MarkerState {
    Searching,
    /// The marker was seen; its line is being read.
    Trailer,
    /// The marker's line is complete: it is in `held`, without its newline.
    Found,
}

impl EndMarker {
    fn new(marker: String) -> Self {
        Self {
            marker: marker.into_bytes(),
            held: Vec::new(),
            state: MarkerState::Searching,
        }
    }

    fn is_found(&self) -> bool {
        self.state == MarkerState::Found
    }

    /// The marker line's rest (after the marker, before its newline), once found.
    fn trailer(&self) -> Option<&[u8]> {
        self.is_found().then_some(self.held.as_slice())
    }

    /// Takes the next bytes of the stream and returns those that are the step's output.
    fn scan(&mut self, data: &[u8]) -> Vec<u8> {
        match self.state {
            MarkerState::Found => Vec::new(),
            MarkerState::Trailer => {
                self.read_trailer(data);
                Vec::new()
            }
            MarkerState::Searching => {
                self.held.extend_from_slice(data);
                if let Some(at) = find(&self.held, &self.marker) {
                    let after = self.held.split_off(at + self.marker.len());
                    self.held.truncate(at);
                    let output = std::mem::take(&mut self.held);
                    self.state = MarkerState::Trailer;
                    self.read_trailer(&after);
                    output
                } else {
                    let keep = partial_marker_at_end(&self.held, &self.marker);
                    let tail = self.held.split_off(self.held.len() - keep);
                    std::mem::replace(&mut self.held, tail)
                }
            }
        }
    }

    fn read_trailer(&mut self, data: &[u8]) {
        match data.iter().position(|&byte| byte == b'\n') {
            Some(end) => {
                self.held.extend_from_slice(&data[..end]);
                self.state = MarkerState::Found;
            }
            None => self.held.extend_from_slice(data),
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// The length of the longest end of `bytes` that is a start of `marker` (shorter than it).
fn partial_marker_at_end(bytes: &[u8], marker: &[u8]) -> usize {
    (1..marker.len().min(bytes.len() + 1))
        .rev()
        .find(|&length| bytes.ends_with(&marker[..length]))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

    use super::*;

    #[test]
    fn the_driver_can_be_quoted_whole() {
        assert!(!STEP_DRIVER.text.contains('\''));
    }

    #[test]
    fn the_command_runs_the_driver_in_bash_whatever_the_login_shell() {
        let (guard, rest) = DRIVER_COMMAND.split_once(" -c '").unwrap();
        assert_eq!(
            guard,
            "[ -n \"${BASH_VERSION-}\" ] && ! shopt -oq posix || exec /bin/bash"
        );
        assert_eq!(rest, format!("{0}'\n{0}", STEP_DRIVER.text));
    }

    #[test]
    fn output_before_the_marker_passes_and_the_trailer_is_kept() {
        let mut marker = EndMarker::new("\x1fabc ".to_owned());
        assert_eq!(marker.scan(b"hello\n"), b"hello\n");
        // A chunk ending in what may be the marker's start holds that part back.
        assert_eq!(marker.scan(b"partial\x1fa"), b"partial");
        assert_eq!(marker.scan(b"x"), b"\x1fax");
        assert_eq!(marker.scan(b"last\x1fab"), b"last");
        assert_eq!(marker.scan(b"c 4"), b"");
        assert!(!marker.is_found());
        assert_eq!(marker.scan(b"2\nstray"), b"");
        assert!(marker.is_found());
        assert_eq!(marker.trailer(), Some(&b"42"[..]));
        assert_eq!(marker.scan(b"more stray"), b"");
    }

    #[test]
    fn a_marker_for_another_nonce_is_output() {
        let mut marker = EndMarker::new("\x1fabc".to_owned());
        assert_eq!(marker.scan(b"\x1fabd\n\x1fabc\n"), b"\x1fabd\n");
        assert_eq!(marker.trailer(), Some(&b""[..]));
    }

    /// The driver as sshd would run it: `sh -c`, stdin and stdout pipes, `$HOME` set.
    struct Driver {
        child: Child,
        stdin: Option<ChildStdin>,
        stdout: BufReader<ChildStdout>,
    }

    /// `shell -c` the driver, with `$HOME` set and stdin a pipe.
    fn driver_command(shell: &str, home: &std::path::Path) -> Command {
        let mut command = Command::new(shell);
        command
            .env("HOME", home)
            .args(["-c", DRIVER_COMMAND.as_str()])
            .stdin(Stdio::piped());
        command
    }

    impl Driver {
        fn start(shell: &str, home: &std::path::Path) -> Self {
            let mut child = driver_command(shell, home)
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let stdin = child.stdin.take();
            let stdout = BufReader::new(child.stdout.take().unwrap());
            Self {
                child,
                stdin,
                stdout,
            }
        }

        fn send(&mut self, nonce: &str, step: &str) {
            let stdin = self.stdin.as_mut().unwrap();
            stdin.write_all(&frame(nonce, step)).unwrap();
            stdin.flush().unwrap();
        }

        /// Runs a step to its end: its stdout and exit code.
        fn run(&mut self, nonce: &str, step: &str) -> (String, u32) {
            self.send(nonce, step);
            let mut marker = EndMarker::new(format!("\x1f{nonce} "));
            let mut output = Vec::new();
            while !marker.is_found() {
                let mut line = Vec::new();
                self.stdout.read_until(b'\n', &mut line).unwrap();
                assert!(!line.is_empty(), "the driver ended");
                output.extend(marker.scan(&line));
            }
            let code = std::str::from_utf8(marker.trailer().unwrap())
                .unwrap()
                .parse()
                .unwrap();
            (String::from_utf8(output).unwrap(), code)
        }
    }

    #[test]
    fn steps_run_verbatim_one_after_another_without_leaking_state() {
        let home = std::env::temp_dir().canonicalize().unwrap();
        // Whichever Bourne-family shell the node logs in with.
        for shell in ["/bin/sh", "/bin/bash"] {
            let mut driver = Driver::start(shell, &home);
            let tricky = "printf '%s|' \"$PWD\" 'x'\"'\"'y' $((1+1)) \"$#\" é; exit 3";
            assert_eq!(
                driver.run("n1", tricky),
                (format!("{}|x'y|2|0|é|", home.display()), 3),
                "{shell}"
            );
            // What one step changes stays in it; output without a newline ends cleanly.
            let (_, code) = driver.run("n2", "cd /; X=changed; export Y=changed; false");
            assert_eq!(code, 1);
            let (output, code) = driver.run("n3", "printf %s \"$PWD:${X-}:${Y-}\"");
            assert_eq!((output, code), (format!("{}::", home.display()), 0));
            // A syntax error fails its step only, stray parentheses included.
            assert_eq!(driver.run("n4", "if then").1, 2);
            assert_eq!(driver.run("n4a", "echo hi )").1, 2);
            assert_eq!(driver.run("n4b", "echo (").1, 2);
            // Text that ends in a comment, a here-document or an exec, and a case.
            let endings = [
                ("echo a # no newline after me", "a\n"),
                ("cat <<EOF\nb )\nEOF", "b )\n"),
                ("case x in x) echo c;; esac", "c\n"),
                ("exec echo d", "d\n"),
            ];
            for (step, printed) in endings {
                assert_eq!(driver.run("n4c", step), (printed.to_owned(), 0), "{step}");
            }
            let big = format!("echo {}", "é".repeat(20_000));
            assert_eq!(driver.run("n5", &big).0.chars().count(), 20_001);
            // The end of its stdin ends the driver.
            drop(driver.stdin.take());
            driver.child.wait().unwrap();
        }
    }

    #[test]
    fn stderr_carries_the_steps_errors_and_markers_and_nothing_of_the_drivers() {
        let home = std::env::temp_dir();
        let mut child = driver_command("/bin/bash", &home)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        // One step at a time, as the client sends them: a step that polls long enough to
        // be checked many times, one with a syntax error, and one that closes its stderr.
        let steps = [
            ("n1", "echo one >&2; sleep 0.2; ls /no-such-dir"),
            ("n2", "if then"),
            ("n3", "exec 2>&-; true"),
        ];
        let mut lines = Vec::new();
        for (nonce, step) in steps {
            stdin.write_all(&frame(nonce, step)).unwrap();
            stdin.flush().unwrap();
            loop {
                let mut line = String::new();
                stderr.read_line(&mut line).unwrap();
                assert!(!line.is_empty(), "the driver ended: {lines:?}");
                let end = line == format!("\x1f{nonce}\n");
                lines.push(line);
                if end {
                    break;
                }
            }
        }
        drop(stdin);
        let mut rest = String::new();
        stderr.read_to_string(&mut rest).unwrap();
        child.wait().unwrap();
        assert_eq!(rest, "", "the driver said something of its own");
        // bash reports a syntax error in two lines: the error, then the text.
        assert_eq!(lines.len(), 7, "{lines:?}");
        assert_eq!(lines[0], "one\n");
        assert!(lines[1].contains("/no-such-dir"), "{lines:?}");
        assert!(lines[3].contains("syntax error"), "{lines:?}");
        assert!(lines[4].contains("if then"), "{lines:?}");
    }

    #[test]
    fn closing_stdin_kills_a_running_step_but_not_what_a_finished_one_left() {
        let home = std::env::temp_dir();
        let mut driver = Driver::start("/bin/sh", &home);
        // A finished step's background service lives on; the running step dies.
        let (service, _) = driver.run("n1", "sleep 4261 >/dev/null 2>&1 & echo $!");
        driver.send("n2", "echo started; sleep 4262; echo never");
        let mut started = String::new();
        driver.stdout.read_line(&mut started).unwrap();
        assert_eq!(started, "started\n");
        drop(driver.stdin.take());
        let mut rest = String::new();
        driver.stdout.read_to_string(&mut rest).unwrap();
        assert_eq!(
            rest, "",
            "the step was killed before it printed anything more"
        );
        driver.child.wait().unwrap();
        let service: i32 = service.trim().parse().unwrap();
        let alive = Command::new("kill")
            .args(["-0", &service.to_string()])
            .status()
            .unwrap()
            .success();
        assert!(alive, "the finished step's service still runs");
        let _ = Command::new("kill").arg(service.to_string()).status();
    }
}
