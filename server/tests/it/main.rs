//! The server's integration tests, as one test binary (one link instead of one per
//! file). Two kinds of test share it: the HTTP-level ones spawn the real router in
//! this process, on its own port over a fresh database (SQLite file or PostgreSQL
//! database, see `engine::on_both_backends!`; `helpers::spawn_app`); the others run
//! the real `corral` binary: `corral serve`, `corral worker` and the CLI
//! (`support::test_server`).
//!
//! In this process, against the router:
//! - `health`, `metrics`: `/healthz`, `/readyz` and `/metrics`.
//! - `auth`, `security`, `isolation`, `authz_matrix`, `user_moves`: signing in,
//!   sessions and tokens; attacks that must fail; tenants kept apart; every operation
//!   by every kind of caller; a user moved to another tenant.
//! - `clusters`, `cluster_paging`, `parameters`, `approvals`, `cost`, `limits`:
//!   cluster requests, the cluster list in pages, template parameters, groups and
//!   approvals, cost and budgets, per-user and per-tenant limits.
//! - `rollouts`, `pin`, `healing`, `hooks`: catalog revisions rolled out, clusters
//!   pinned, healing switched, lifecycle hooks sent to real receivers.
//! - `providers`, `pool_hosts`, `dedicated_workers`: provider credentials, pool hosts,
//!   tenants with workers of their own.
//! - `node_shell`, `node_terminal`, `user_keys`: reaching nodes through the server
//!   (certificates, the browser's terminal, users' own SSH keys), with real sshds.
//! - `pages`, `admin_pages`: the portal and the admin console rendered on the server.
//! - `helpers`: `spawn_app()` and the callers these tests act as.
//!
//! Against real `corral` processes:
//! - `cli`, `catalog_cli`: the binary on its own (errors, first start, the offline
//!   catalog commands).
//! - `client_cli`, `catalog_import_cli`, `apply_cli`, `node_ssh_cli`: the CLI as a
//!   client of `corral serve` (catalogs, `apply` and `plan`, `cluster ssh`).
//! - `tls`, `serve_limits`: HTTPS with a private CA; the limits against half-open
//!   connections and huge dry runs.
//! - `operations`, `upgrade`: metrics, SIGTERM draining, backup and restore, traces;
//!   every earlier release's database migrated, a newer one refused.
//! - `crash`, `scaleout`, `db_outage`, `disk_full`: processes killed with SIGKILL,
//!   several servers and workers on one database, the database restarted, the disk
//!   full; nothing may be lost or run twice. The last three each had a binary of their
//!   own and still run one at a time (`support::one_heavy_test_at_a_time`).
//! - `support`: what these share (see there).

#![allow(clippy::unwrap_used)] // Tests fail loudly by design.

mod admin_pages;
mod apply_cli;
mod approvals;
mod auth;
mod authz_matrix;
mod catalog_cli;
mod catalog_import_cli;
mod cli;
mod client_cli;
mod cluster_paging;
mod clusters;
mod cost;
mod crash;
mod db_outage;
mod dedicated_workers;
mod disk_full;
mod healing;
mod health;
mod helpers;
mod hooks;
mod isolation;
mod limits;
mod metrics;
mod node_shell;
mod node_ssh_cli;
mod node_terminal;
mod operations;
mod pages;
mod parameters;
mod pin;
mod pool_hosts;
mod providers;
mod rollouts;
mod scaleout;
mod security;
mod serve_limits;
mod support;
mod tls;
mod upgrade;
mod user_keys;
mod user_moves;
