//! Building blocks shared by pages.

pub mod dag;
pub mod diff;
pub mod errors;
pub mod estimate;
pub mod form;
pub mod layout;
pub mod plan;
pub mod session;
pub mod state;
pub mod table;
pub mod time;
