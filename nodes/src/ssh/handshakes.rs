//! The SSH handshakes' metrics (through the `metrics` facade; the engine's `metrics`
//! module describes them with every other metric).

use std::time::Duration;

use metrics::{counter, histogram};

/// SSH handshakes this process made, by `result` (`ok`, `failed`).
pub const SSH_HANDSHAKES: &str = "corral_ssh_handshakes_total";
/// How long successful SSH handshakes took.
pub const SSH_HANDSHAKE_DURATION: &str = "corral_ssh_handshake_duration_seconds";

/// A handshake that ended, `Some(duration)` when it succeeded.
pub fn record_handshake(succeeded: Option<Duration>) {
    match succeeded {
        Some(took) => {
            counter!(SSH_HANDSHAKES, "result" => "ok").increment(1);
            histogram!(SSH_HANDSHAKE_DURATION).record(took.as_secs_f64());
        }
        None => counter!(SSH_HANDSHAKES, "result" => "failed").increment(1),
    }
}
