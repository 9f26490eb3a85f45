//! The `corral` server and command line.
//!
//! `cli` parses commands, `config` merges flags, `CORRAL_*` environment variables and
//! an optional TOML file, `http` builds the axum router (pages, health, static assets,
//! the JSON API from `api`, browser sessions from `sessions`) and `serve` runs it with
//! the in-process worker pool from `workers`; `metrics` serves `/metrics`. The binary
//! in `main.rs` only reports errors.

pub mod api;
pub mod cli;
pub mod config;
pub mod http;
pub mod metrics;
pub mod serve;
pub mod sessions;
pub mod sso;
pub mod telemetry;
pub mod tls;
pub mod workers;
