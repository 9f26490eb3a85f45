//! Corral's pure core.
//!
//! Everything here is a plain function over plain data: no I/O, no async, no clock
//! (time is passed in). That keeps it testable, deterministic and compilable to wasm,
//! so the browser can run the same solver the server runs.

pub mod catalog;
pub mod change;
pub mod cost;
pub mod environment;
pub mod layout;
pub mod macros;
pub mod names;
pub mod network;
pub mod node_limits;
pub mod plan;
pub mod solver;
pub mod upgrade;
