//! Lifecycle hooks (issue 43): HTTP endpoints a tenant's admins register to hear of its
//! jobs, or to be asked before an operation is queued.
//!
//! - Events: when a job starts, succeeds or fails, the queue writes one delivery per
//!   hook that hears it in the same transaction as the job's change
//!   ([`crate::store::hooks`]), with the event body fixed then. [`deliver`]'s loop, in
//!   every server and worker process, claims due deliveries (one process each), sends
//!   them signed ([`send`]) and retries with backoff for a day.
//! - Gates ([`gate`]): asked synchronously after an operation's preview and before its
//!   write transaction; a refusal refuses the operation and nothing is stored.
//! - Network rules ([`network`]): only `http(s)` to public addresses, unless the
//!   operator allows a range; checked at save and again at every call, no redirects,
//!   a timeout.

pub mod deliver;
pub mod gate;
pub mod network;
pub mod send;

pub use deliver::{Deliverer, DeliverySettings};
pub use gate::{check_gates, GateCall};
pub use network::{Cidr, HookNetwork, UrlRefusal};
pub use send::signature;
