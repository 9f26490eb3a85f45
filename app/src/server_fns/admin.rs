//! The admin console's server functions. They call `engine::service` like every
//! other entry point (which checks the role); the one thing added here is the
//! superadmin's tenant switcher: a superadmin administers the tenant chosen in
//! their session, everyone else their own tenant.

pub mod approvals;
pub mod audit;
pub mod catalog_bundle;
pub mod create_tenant;
pub mod create_token;
pub mod create_user;
pub mod delete_entity;
pub mod delete_tenant;
pub mod delete_user;
pub mod entities;
pub mod entity;
pub mod hooks;
pub mod import_catalog;
pub mod move_user;
pub mod names;
pub mod overview;
mod page_data;
pub mod pool_hosts;
pub mod provider_credentials;
#[cfg(feature = "ssr")]
mod quota;
pub mod register_pool_host;
pub mod remove_pool_host;
pub mod reset_user_password;
pub mod resources;
pub mod revoke_token;
pub mod revoke_user_token;
pub mod rollouts;
pub mod save_entity;
pub mod scope;
pub mod set_dedicated_workers;
pub mod set_provider_types;
pub mod set_user_role;
pub mod showback;
pub mod stage_resource;
pub mod start_rollout;
pub mod switch_tenant;
pub mod tenants;
pub mod test_provider;
pub mod tokens;
pub mod update_quotas;
pub mod upload_resource;
pub mod upload_resource_file;
pub mod user;
#[cfg(feature = "ssr")]
mod user_change;
pub mod users;

pub use page_data::*;

#[cfg(feature = "ssr")]
pub(crate) mod caller {
    //! The caller as the admin pages act: in the tenant a superadmin switched to.

    use engine::service::Caller;

    use crate::error::UiError;

    /// The session key holding a superadmin's chosen tenant id.
    pub const ADMIN_TENANT: &str = "corral.admin.tenant";

    async fn scoped(mut caller: Caller) -> Result<Caller, UiError> {
        if caller.principal.is_superadmin() {
            let session = crate::session::request_session()?;
            // A missing or unreadable choice means the superadmin's own tenant.
            if let Ok(Some(tenant)) = session.get::<String>(ADMIN_TENANT).await {
                caller.principal.tenant_id = tenant;
            }
        }
        Ok(caller)
    }

    /// For reading.
    pub async fn caller() -> Result<Caller, UiError> {
        scoped(crate::session::caller().await?).await
    }

    /// For changing the administered tenant: the form must carry the session's CSRF
    /// token, and the caller must be an admin. The role is checked before the
    /// function reads any of its input, so a plain user's post costs no parsing.
    pub async fn admin_checked(csrf: &str) -> Result<Caller, UiError> {
        let caller = crate::session::caller_checked(csrf).await?;
        require_admin(&caller)?;
        scoped(caller).await
    }

    /// The whole of a list (admin lists are short; the service pages them).
    pub fn all() -> engine::service::PageRequest {
        engine::service::PageRequest {
            offset: 0,
            limit: engine::service::MAX_PAGE,
        }
    }

    /// Refuses tenant users before anything is read (the service refuses their
    /// writes anyway; this keeps reads of admin-only pages consistent).
    pub fn require_admin(caller: &Caller) -> Result<(), UiError> {
        use engine::store::users::Role;
        match caller.principal.role {
            Role::Superadmin | Role::TenantAdmin => Ok(()),
            _ => Err(UiError::Forbidden(
                "the admin console is for tenant admins and superadmins".to_owned(),
            )),
        }
    }
}
