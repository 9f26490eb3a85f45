//! The admin console (`/admin/*`): for tenant admins and superadmins. Tenant users
//! get a 403 page; visitors are sent to sign in by the server's page guard.

pub mod approvals;
pub mod audit;
pub mod catalog;
pub mod hooks;
pub mod hosts;
pub mod import;
pub mod layout;
pub mod loaded;
pub mod overview;
pub mod provider_panel;
pub mod resources;
pub mod rollouts;
pub mod sections;
pub mod showback;
pub mod tenants;
pub mod tokens;
pub mod try_it;
pub mod user;
pub mod users;
