//! Corral's node kit: how Corral reaches a node and where nodes come from.
//!
//! - [`ssh`]: SSH sessions to nodes through russh: one authenticated session per node,
//!   pinned host keys, streamed output, per-step timeouts, the users' certificates.
//! - [`provider`]: the node providers (`local`, `ssh-pool`, `docker`, `ec2`, and
//!   `exec` plugins): where nodes come from and where they go, with the credentials
//!   they spend.
//! - [`node_scripts`]: Corral's folders on a node and the `.sh` scripts run there.
//! - `testing` (feature `test-support`): moto for the `ec2` provider's tests, and the
//!   store's throwaway databases.
//!
//! It stands on `store` (node records, credentials, host keys) and the pure `domain`
//! and `api-types`, and names nothing above it: the engine decides what to run on a
//! node, this crate only knows how. The providers' own dependencies (Docker's API,
//! the EC2 query API's signing and XML) are built here, so a change above this crate
//! does not rebuild them.

pub mod node_scripts;
pub mod provider;
pub mod ssh;

#[cfg(feature = "test-support")]
pub mod testing;

// Locking shared by the in-process maps and slots.
use store::sync;
