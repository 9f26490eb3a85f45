//! Corral's engine: everything with I/O behind the pure `domain` crate.
//!
//! The store (SQLite or PostgreSQL through one query layer), the durable task queue,
//! workers, SSH sessions, providers and automators, and the secrets sealed in the
//! store. Every entry point (server functions, the JSON API, the CLI) goes through
//! this crate's `service` layer.
//!
//! Modules:
//! - [`accounts`]: user accounts, argon2id password hashes, the first-run superadmin.
//! - [`catalog`]: a tenant's catalog in the store as `domain` types; validated import and
//!   the catalog snapshot a cluster pins.
//! - [`demo`]: the demo catalog compiled into the binary, loaded into an empty default tenant.
//! - [`execute`]: runs one claimed task on its node: node steps through the cluster's
//!   provider, service actions through an automator.
//! - [`hooks`]: lifecycle hooks: event deliveries through the store, signed calls
//!   within the operator's network rules, and gates asked before an operation.
//! - [`links`]: a live cluster's link URLs with their macros expanded.
//! - `node_scripts` (private): Corral's folders on a node and the `.sh` scripts run there.
//! - [`operations`]: cluster operations without access checks (solve, plan, store the
//!   cluster and its job in one transaction), and their previews.
//! - [`principal`]: the authenticated user every `service` call is checked against.
//! - [`metrics`]: the engine's counters and gauges (through the `metrics` facade).
//! - [`monitor`]: health checks of live clusters' services, and restarts of down ones;
//!   [`heal`]: replacing the nodes that died, where a template asks for it.
//! - [`provider`]: node providers (`local`, `ssh-pool`, `docker`, `ec2`, and `exec`
//!   plugins): where nodes come from and go, with the credentials they spend.
//! - [`queue`]: the durable task queue: jobs stored as task rows that workers claim under
//!   a heartbeated lease and complete, each change one transaction.
//! - [`resources`]: plugin resources (scripts, archives, files) a tenant uploads, versioned
//!   and staged onto nodes.
//! - [`secrets`]: the server's secret key and the secrets sealed with it.
//! - [`service`]: the one door for every entry point: role, tenant and quota checks, audit.
//! - [`ssh`]: SSH sessions to nodes (russh), pinned host keys, streamed output.
//! - [`store`]: one query layer over SQLite and PostgreSQL.
//! - `sync` (private): locking shared by the engine's in-process maps and slots.
//! - [`worker`]: the worker pool that claims and runs ready tasks, and its janitor.
//! - `testing` (feature `test-support`): throwaway databases for tests.

pub mod accounts;
pub mod catalog;
pub mod demo;
pub mod execute;
pub mod heal;
pub mod hooks;
pub mod links;
pub mod metrics;
pub mod monitor;
mod node_scripts;
pub mod operations;
pub mod principal;
pub mod provider;
pub mod queue;
pub mod resources;
pub mod rollout;
pub mod secrets;
pub mod service;
pub mod ssh;
pub mod store;
mod sync;
pub mod worker;

#[cfg(feature = "test-support")]
pub mod testing;
