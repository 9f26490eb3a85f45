//! Jobs: the live job page's first render, cancel and retry.

pub mod cancel;
pub mod retry;
pub mod show;
