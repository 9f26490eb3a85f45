//! One module per route.

pub mod admin;
pub mod clusters;
pub mod login;
pub mod not_found;
pub mod profile;
