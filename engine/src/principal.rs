//! Who is asking: the authenticated user every `service` call is checked against.
//!
//! Made by the access layer from a session or an API token, never from request data,
//! so a handler cannot claim another tenant or role.

use crate::store::users::{Role, User};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub user_id: String,
    pub username: String,
    pub tenant_id: String,
    pub role: Role,
}

impl Principal {
    pub fn from_user(user: &User) -> Self {
        Self {
            user_id: user.id.clone(),
            username: user.username.clone(),
            tenant_id: user.tenant_id.clone(),
            role: user.role,
        }
    }

    pub fn is_superadmin(&self) -> bool {
        self.role == Role::Superadmin
    }

    /// Whether this user may act on `tenant_id`'s data at all.
    pub fn can_see_tenant(&self, tenant_id: &str) -> bool {
        self.is_superadmin() || self.tenant_id == tenant_id
    }

    /// Whether this user may change `tenant_id`'s catalog, users and settings.
    pub fn can_administer_tenant(&self, tenant_id: &str) -> bool {
        self.is_superadmin() || (self.role == Role::TenantAdmin && self.tenant_id == tenant_id)
    }
}
