//! Server functions, one per file, grouped by resource. Each is thin: it reads its
//! input, calls `engine::service` as the signed-in user and maps errors for the page.
//! State-changing ones take the session's CSRF token as their `csrf` argument.

pub mod admin;
pub mod clusters;
pub mod jobs;
pub mod profile;
pub mod session;
pub mod status;
