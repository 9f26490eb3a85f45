//! Corral's engine: what runs clusters, above the crates that keep and reach them.
//!
//! Below it, arrows pointing down only: `store` (SQLite or PostgreSQL through one
//! query layer, and the secrets sealed in it), `queue` (the durable task queue on the
//! store) and `nodes` (SSH and the node providers, on the store), all on the pure
//! `domain` and `api-types`. This crate adds the workers, the execution of steps and
//! automators, cluster operations, hooks, health and the `service` layer every entry
//! point (server functions, the JSON API, the CLI) goes through. It may use any crate
//! below; none of them may name it.
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
//! - [`operations`]: cluster operations without access checks (solve, plan, store the
//!   cluster and its job in one transaction), and their previews.
//! - [`principal`]: the authenticated user every `service` call is checked against.
//! - [`metrics`]: the engine's counters and gauges (through the `metrics` facade).
//! - [`monitor`]: health checks of live clusters' services, and restarts of down ones;
//!   [`heal`]: replacing the nodes that died, where a template asks for it.
//! - [`provider`] and [`ssh`] (the `nodes` crate, re-exported): node providers (`local`,
//!   `ssh-pool`, `docker`, `ec2`, and `exec` plugins), SSH sessions to nodes, and the
//!   `.sh` scripts Corral runs on a node.
//! - [`queue`] (the `queue` crate, re-exported): the durable task queue: jobs stored as
//!   task rows that workers claim under a heartbeated lease and complete, each change
//!   one transaction. A process has one [`queue::Queue`] handle, made where its store
//!   is opened; the [`execute::Executor`] (and through it the workers) and the
//!   [`service::Service`] hold clones, which share the wakes sent to a job's followers.
//! - [`resources`]: plugin resources (scripts, archives, files) a tenant uploads, versioned
//!   and staged onto nodes.
//! - [`service`]: the one door for every entry point: role, tenant and quota checks, audit.
//! - [`store`] (the `store` crate, re-exported): one query layer over SQLite and
//!   PostgreSQL and the secrets sealed in it.
//! - [`worker`]: the worker pool that claims and runs ready tasks, and its janitor.
//! - `testing` (feature `test-support`): throwaway databases and moto for tests.

pub mod accounts;
pub mod catalog;
pub mod demo;
pub mod execute;
pub mod heal;
pub mod hooks;
pub mod links;
pub mod metrics;
pub mod monitor;
pub mod operations;
pub mod principal;
pub mod resources;
pub mod rollout;
pub mod service;
pub mod worker;

#[cfg(feature = "test-support")]
pub mod testing;

// The crates below this one, under the paths the engine and its callers have always used.
use nodes::node_scripts;
pub use nodes::{provider, ssh};
pub use queue;
pub use store::{self, secrets};
// Locking shared by the engine's in-process maps and slots.
#[cfg(feature = "test-support")]
pub use store::on_both_backends;
use store::sync;
