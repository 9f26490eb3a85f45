//! What the tests share: real `corral` processes and the checks made of them.
//!
//! - `test_server`: a real `corral serve` on a fresh data dir, and the `corral` binary
//!   run as a client against it (or alone: the offline commands, and the starts that
//!   must fail).
//! - `chaos`: processes killed with SIGKILL and started again, and the checks that
//!   nothing was lost or run twice meanwhile.
//! - `private_postgres`: a PostgreSQL server of a test's own, which it may stop.
//! - `lifecycle`: the lifecycle test catalog, seeded as an administrator would.
//! - `coopr_catalog`: Coopr's published catalog (`testdata/coopr-catalog`) and copies
//!   of it without its defective templates.
//! - `docker`: the `docker` CLI as the witness of what the docker provider left.
//! - `prometheus`: `/metrics` pages parsed.
//! - [`one_heavy_test_at_a_time`]: the lock of the tests that each had a binary of
//!   their own before this one binary.

pub mod chaos;
pub mod coopr_catalog;
pub mod docker;
pub mod lifecycle;
pub mod private_postgres;
pub mod prometheus;
pub mod test_server;

use tokio::sync::{Mutex, MutexGuard};

/// Held by the tests that start several `corral` processes and time what they see
/// against leases and deadlines (scale-out, database outage, full disk). Each ran
/// alone in a test binary of its own; in this one binary two tests run at once, and
/// two of these together would be the load none of them was ever measured under. The
/// lock keeps them apart from each other; the lighter tests still run beside them.
static HEAVY: Mutex<()> = Mutex::const_new(());

/// Waits until no other heavy test runs; the guard keeps the others waiting until it
/// is dropped at the end of the test (a tokio lock: it is held across awaits, and a
/// test that panics releases it unpoisoned).
pub async fn one_heavy_test_at_a_time() -> MutexGuard<'static, ()> {
    HEAVY.lock().await
}
