//! The self-service portal: the cluster list, the create form with its preview,
//! the cluster page with day-2 operations, and the live job view.

pub mod job;
pub mod list;
pub mod new;
pub mod show;
