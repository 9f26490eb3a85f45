//! One module per route.

pub mod clusters;
pub mod login;
pub mod not_found;
