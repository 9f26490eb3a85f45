//! The engine's integration tests, as one test binary (one link instead of one per
//! file): each module tests one area against real databases (SQLite and PostgreSQL,
//! see `engine::on_both_backends!`), real sshd processes and real worker pools.
//!
//! - `accounts`, `store`, `overview`: storage and aggregates (the durable queue's are
//!   the `queue` crate's own);
//!   `cluster_paging`: the cluster list's pages, cursors and totals in SQL.
//! - `local_nodes`, `ssh_pool`, `docker_nodes`, `ec2`, `exec_provider`, `resources`:
//!   providers (`ec2` against moto, `exec`: external provider plugins) and plugin
//!   resources on nodes.
//! - `cluster_lifecycle`, `demo_templates`, `faults`, `lease_grace`, `lease_machines`:
//!   whole clusters, end to end, including crashes, lost nodes and leases that end.
//! - `hook_events`: lifecycle hooks' health and replacement events, sent to real
//!   receivers.
//! - `history`: the history retention prunes what ended long ago, nothing else.
//! - `connection_faults`, `engine_faults`: a step's SSH session cut, a node that stops
//!   answering, the Docker engine restarted or stopped under a create (issue 45).
//! - `security`: attacks that must fail.
//! - `migrations`: the SQLite and PostgreSQL schemas do not drift apart.
//! - `lab`: the shared fixture (a database with a catalog, providers and a worker pool).

#![allow(clippy::unwrap_used)] // Tests fail loudly by design.

mod accounts;
mod automators;
mod cluster_lifecycle;
mod cluster_paging;
mod connection_faults;
mod demo_script;
mod demo_templates;
mod docker_nodes;
mod ec2;
mod engine_faults;
mod exec_provider;
mod faults;
mod history;
mod hook_events;
mod lab;
mod lease_grace;
mod lease_machines;
mod local_nodes;
mod migrations;
mod monitor;
mod overview;
mod resources;
mod security;
mod ssh_pool;
mod store;
mod user_credentials;
