//! The local end of a session: standard input read on a thread of its own, and the
//! terminal put in raw mode (restored on drop) with its size, for interactive shells.

use std::io::{IsTerminal, Read, Write};
use std::pin::Pin;
use std::task::{Context, Poll};

use rustix::termios::{tcgetattr, tcgetwinsize, tcsetattr, OptionalActions, Termios};
use tokio::sync::mpsc;

/// Chunks of standard input as they are read; the channel closes at end of input.
///
/// A plain thread, not tokio's stdin: tokio reads stdin on a blocking thread it waits
/// for at shutdown, so a session that ended would hang until the user pressed a key.
pub fn stdin_chunks() -> mpsc::Receiver<Vec<u8>> {
    let (sender, receiver) = mpsc::channel(16);
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buffer = vec![0u8; 16 * 1024];
        loop {
            match stdin.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(read) => {
                    if sender.blocking_send(buffer[..read].to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    receiver
}

/// Standard output for async writers, written with plain blocking writes: a terminal or
/// pipe takes them at once (tokio's own stdout is not built into this binary).
pub struct Stdout;

impl tokio::io::AsyncWrite for Stdout {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buffer: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Poll::Ready(std::io::stdout().write(buffer))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(std::io::stdout().flush())
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Whether the session is interactive: standard input and output are a terminal.
pub fn is_interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

/// The terminal's size (columns, rows), 80x24 when it cannot be read.
pub fn size() -> (u32, u32) {
    match tcgetwinsize(std::io::stdout()) {
        Ok(size) if size.ws_col > 0 && size.ws_row > 0 => {
            (u32::from(size.ws_col), u32::from(size.ws_row))
        }
        _ => (80, 24),
    }
}

/// The terminal in raw mode (keys go to the node as typed, Ctrl-C included) until
/// dropped, when its settings are put back.
pub struct RawMode {
    saved: Termios,
}

impl RawMode {
    pub fn enter() -> anyhow::Result<Self> {
        let saved = tcgetattr(std::io::stdin())?;
        let mut raw = saved.clone();
        raw.make_raw();
        tcsetattr(std::io::stdin(), OptionalActions::Now, &raw)?;
        Ok(Self { saved })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, &self.saved);
    }
}
