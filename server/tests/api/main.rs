//! HTTP-level tests of the server: each test spawns the real router on its own port
//! with a fresh database (SQLite file or PostgreSQL database).

#![allow(clippy::unwrap_used)] // Tests fail loudly by design.

mod admin_pages;
mod approvals;
mod auth;
mod authz_matrix;
mod cluster_paging;
mod clusters;
mod cost;
mod dedicated_workers;
mod healing;
mod health;
mod helpers;
mod hooks;
mod isolation;
mod limits;
mod metrics;
mod node_shell;
mod node_terminal;
mod pages;
mod parameters;
mod pin;
mod pool_hosts;
#[path = "../support/prometheus.rs"]
mod prometheus;
mod providers;
mod rollouts;
mod security;
mod user_keys;
mod user_moves;
