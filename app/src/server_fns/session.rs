//! Signing in and out, and who is signed in.

pub mod login;
pub mod logout;
pub mod me;
pub mod sso;

use api_types::Role;
use serde::{Deserialize, Serialize};

/// The signed-in user, for the layout and for forms (the CSRF token).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Me {
    pub user_id: String,
    pub username: String,
    pub tenant_id: String,
    pub role: Role,
    /// Every form that changes something sends this back as the `csrf` field.
    pub csrf: String,
}

impl Me {
    pub fn is_admin(&self) -> bool {
        self.role.is_admin()
    }
}
