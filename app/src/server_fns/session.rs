//! Signing in and out, and who is signed in.

pub mod login;
pub mod logout;
pub mod me;
