//! The `corral` server and command line.
//!
//! `cli` parses commands, `config` merges flags, `CORRAL_*` environment variables and
//! an optional TOML file, `http` builds the axum router (pages, health, static assets)
//! and `serve` runs it. The binary in `main.rs` only reports errors.

pub mod cli;
pub mod config;
pub mod http;
pub mod serve;
pub mod telemetry;
