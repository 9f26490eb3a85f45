//! Corral's engine: everything with I/O behind the pure `domain` crate.
//!
//! The store (SQLite or PostgreSQL through one query layer), the durable task queue,
//! workers, SSH sessions, providers and automators, and the secrets sealed in the
//! store. Every entry point (server functions, the JSON API, the CLI) goes through
//! this crate's `service` layer.

pub mod accounts;
pub mod catalog;
pub mod demo;
pub mod execute;
pub mod links;
pub mod operations;
pub mod principal;
pub mod provider;
pub mod queue;
pub mod resources;
pub mod secrets;
pub mod service;
pub mod ssh;
pub mod store;
mod sync;
pub mod worker;

#[cfg(feature = "test-support")]
pub mod testing;
