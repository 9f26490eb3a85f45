//! Users: admins manage the users of their tenant (superadmins of every tenant);
//! everyone can read themselves and change their own password.

use api_types::AuditAction;

use super::{
    AuditRecord, Caller, Page, PageRequest, PasswordChange, Problem, Service, ServiceError,
    UserMove, UserRequest, UserUpdate, UserView,
};
use crate::accounts::{self, hash_password_blocking, verify_password_blocking, Password};
use crate::operations::ClusterState;
use crate::store::tenants::Tenant;
use crate::store::users::{Role, User};
use crate::store::{now_ms, StoreError};

/// The hash to store for a new password, once it is strong enough.
async fn new_password_hash(plain: &str) -> Result<String, ServiceError> {
    let password = Password::new(plain);
    password
        .check_strength()
        .map_err(|error| ServiceError::invalid(error.to_string()))?;
    hash_password_blocking(&password)
        .await
        .map_err(ServiceError::internal)
}

/// A refusal of a move's `tenant` field, shown next to it.
fn bad_move_target(message: String) -> ServiceError {
    ServiceError::Invalid {
        details: vec![Problem {
            path: "tenant".to_owned(),
            message: message.clone(),
        }],
        message,
    }
}

impl Service {
    /// The user `id` if the caller may change its account: an admin of its tenant, and
    /// a superadmin when the user is one (a tenant admin of the default tenant sees the
    /// superadmins, but must not take their accounts over). `NotFound` for users the
    /// caller cannot see, `Forbidden` for superadmins a non-superadmin can see.
    pub(super) async fn changeable_user(
        &self,
        caller: &Caller,
        id: &str,
    ) -> Result<User, ServiceError> {
        let user = self.administered_user(caller, id).await?;
        if user.role == Role::Superadmin && !caller.principal.is_superadmin() {
            return Err(ServiceError::Forbidden(
                "a superadmin's account is changed only by superadmins".to_owned(),
            ));
        }
        Ok(user)
    }

    /// The user `id` if the caller administers its tenant; `NotFound` otherwise.
    async fn administered_user(&self, caller: &Caller, id: &str) -> Result<User, ServiceError> {
        let not_found = || ServiceError::NotFound(format!("user {id:?}"));
        let user = match self.store.user(id).await {
            Ok(user) => user,
            Err(StoreError::NotFound(_)) => return Err(not_found()),
            Err(error) => return Err(error.into()),
        };
        if !caller.principal.can_see_tenant(&user.tenant_id) {
            return Err(not_found());
        }
        caller.require_tenant_admin(&user.tenant_id)?;
        Ok(user)
    }

    /// Only superadmins grant superadmin; tenant admins grant the two tenant roles.
    fn check_grant(caller: &Caller, role: Role) -> Result<(), ServiceError> {
        if role == Role::Superadmin {
            caller.require_superadmin()?;
        }
        Ok(())
    }

    /// Usernames of the caller's tenant by user id (for "owner" columns; names in
    /// one's own tenant are not secret).
    pub async fn usernames(
        &self,
        caller: &Caller,
    ) -> Result<std::collections::HashMap<String, String>, ServiceError> {
        self.usernames_of(caller.tenant_id()).await
    }

    /// The names of the owners of `clusters` (of `tenant_id`), by user id.
    pub(super) async fn owner_names(
        &self,
        tenant_id: &str,
        clusters: &[crate::store::clusters::Cluster],
    ) -> Result<std::collections::HashMap<String, String>, ServiceError> {
        let mut owners: Vec<&str> = clusters
            .iter()
            .filter_map(|cluster| cluster.owner_id.as_deref())
            .collect();
        owners.sort_unstable();
        owners.dedup();
        Ok(self.store.usernames_in(tenant_id, &owners).await?)
    }

    /// User ids to names in `tenant_id`, for views that show who did something.
    pub(super) async fn usernames_of(
        &self,
        tenant_id: &str,
    ) -> Result<std::collections::HashMap<String, String>, ServiceError> {
        Ok(self
            .store
            .list_users(tenant_id)
            .await?
            .into_iter()
            .map(|user| (user.id, user.username))
            .collect())
    }

    pub async fn me(&self, caller: &Caller) -> Result<UserView, ServiceError> {
        Ok(self.store.user(&caller.principal.user_id).await?.into())
    }

    pub async fn list_users(
        &self,
        caller: &Caller,
        page: PageRequest,
    ) -> Result<Page<UserView>, ServiceError> {
        let tenant = caller.administered_scope()?;
        let (users, total) = self.store.users_window(tenant, page.window()?).await?;
        Ok(page.of(users.into_iter().map(UserView::from).collect(), total))
    }

    pub async fn user(&self, caller: &Caller, id: &str) -> Result<UserView, ServiceError> {
        if id == caller.principal.user_id {
            return self.me(caller).await;
        }
        Ok(self.administered_user(caller, id).await?.into())
    }

    pub async fn create_user(
        &self,
        caller: &Caller,
        request: &UserRequest,
    ) -> Result<UserView, ServiceError> {
        caller.require_tenant_admin(caller.tenant_id())?;
        let role = request.role;
        Self::check_grant(caller, role)?;
        let tenant = match &request.tenant {
            None => self.store.tenant(caller.tenant_id()).await?.name,
            Some(name) => {
                let tenant = self
                    .store
                    .tenant_by_name(name)
                    .await
                    .map_err(|_| ServiceError::NotFound(format!("tenant {name:?}")))?;
                if !caller.principal.can_administer_tenant(&tenant.id) {
                    return Err(ServiceError::NotFound(format!("tenant {name:?}")));
                }
                tenant.name
            }
        };
        let user = accounts::create_user(
            &self.store,
            &request.username,
            role,
            Some(&tenant),
            &Password::new(request.password.clone()),
        )
        .await?;
        self.audit(
            caller,
            AuditRecord::new(
                &user.tenant_id,
                AuditAction::UserCreate,
                "user",
                &user.username,
            ),
        )
        .await;
        Ok(user.into())
    }

    pub async fn update_user(
        &self,
        caller: &Caller,
        id: &str,
        update: &UserUpdate,
    ) -> Result<UserView, ServiceError> {
        let user = self.changeable_user(caller, id).await?;
        let role = update.role;
        if let Some(role) = role {
            Self::check_grant(caller, role)?;
            if user.id == caller.principal.user_id && role != user.role {
                return Err(ServiceError::invalid("you cannot change your own role"));
            }
        }
        let hash = match &update.password {
            Some(password) => {
                if user.id == caller.principal.user_id {
                    // A stolen session must not be enough to lock the owner out.
                    self.check_current_password(&user, update.current_password.as_deref())
                        .await?;
                }
                Some(new_password_hash(password).await?)
            }
            None => None,
        };
        if let Some(role) = role {
            self.store.set_role(&user.id, role).await?;
        }
        if let Some(hash) = hash {
            self.store.set_password_hash(&user.id, &hash).await?;
        }
        let mut record = AuditRecord::new(
            &user.tenant_id,
            AuditAction::UserUpdate,
            "user",
            &user.username,
        );
        record.before = Some(serde_json::json!({"role": user.role.as_str()}).to_string());
        record.after = Some(
            serde_json::json!({"role": role.unwrap_or(user.role).as_str(),
                               "password_changed": update.password.is_some()})
            .to_string(),
        );
        self.audit(caller, record).await;
        Ok(self.store.user(&user.id).await?.into())
    }

    /// Refuses unless `given` is `user`'s password.
    async fn check_current_password(
        &self,
        user: &User,
        given: Option<&str>,
    ) -> Result<(), ServiceError> {
        let Some(given) = given else {
            return Err(ServiceError::invalid(
                "give your current password (current_password) to change your own",
            ));
        };
        if verify_password_blocking(&Password::new(given), &user.password_hash).await {
            Ok(())
        } else {
            Err(ServiceError::invalid("the current password is wrong"))
        }
    }

    pub async fn delete_user(&self, caller: &Caller, id: &str) -> Result<(), ServiceError> {
        let user = self.changeable_user(caller, id).await?;
        if user.id == caller.principal.user_id {
            return Err(ServiceError::invalid("you cannot delete yourself"));
        }
        self.store.delete_user(&user.id).await?;
        self.audit(
            caller,
            AuditRecord::new(
                &user.tenant_id,
                AuditAction::UserDelete,
                "user",
                &user.username,
            ),
        )
        .await;
        Ok(())
    }

    /// The names of the live clusters user `id` owns, for the admin who is about to
    /// delete or move them (the clusters stay with the tenant either way).
    pub async fn owned_clusters(
        &self,
        caller: &Caller,
        id: &str,
    ) -> Result<Vec<String>, ServiceError> {
        let user = self.administered_user(caller, id).await?;
        Ok(self
            .store
            .list_clusters(&user.tenant_id)
            .await?
            .into_iter()
            .filter(|cluster| cluster.state != ClusterState::Deleted)
            .filter(|cluster| cluster.owner_id.as_deref() == Some(user.id.as_str()))
            .map(|cluster| cluster.name)
            .collect())
    }

    /// Moves user `id` to the tenant named in `request` (superadmins only; a tenant
    /// admin administers one tenant and may not hand users to another or take them).
    ///
    /// What goes with them and what stays:
    /// - their sessions end and their API tokens are revoked: a token acts as its user,
    ///   so a script written against the old tenant would go on in the new one;
    /// - the clusters they own stay in the old tenant and remain its own (the old
    ///   tenant's admins manage them; the user no longer sees them);
    /// - their own provider credentials stay with the old tenant's providers: the nodes
    ///   of those clusters were made with them and are deleted with them, and they are
    ///   only ever opened for that tenant's clusters;
    /// - their role stays: a tenant admin administers the new tenant.
    ///
    /// Superadmins are not moved (they belong to the default tenant). The move is
    /// written to both tenants' audit logs.
    pub async fn move_user(
        &self,
        caller: &Caller,
        id: &str,
        request: &UserMove,
    ) -> Result<UserView, ServiceError> {
        let user = self.administered_user(caller, id).await?;
        if !caller.principal.is_superadmin() {
            return Err(ServiceError::Forbidden(
                "only a superadmin moves users between tenants".to_owned(),
            ));
        }
        if user.role == Role::Superadmin {
            return Err(ServiceError::invalid(format!(
                "{} is a superadmin, and superadmins belong to the default tenant: \
                 make them a tenant-admin or user first",
                user.username
            )));
        }
        let from = self.store.tenant(&user.tenant_id).await?;
        let to = self.move_target(&request.tenant).await?;
        if to.id == from.id {
            return Err(bad_move_target(format!(
                "{} is already in tenant {}",
                user.username, from.name
            )));
        }
        if !self
            .store
            .move_user(&user.id, &from.id, &to.id, now_ms())
            .await?
        {
            return Err(ServiceError::Conflict(format!(
                "{} changed while being moved; look at the user again and retry",
                user.username
            )));
        }
        self.audit_move(caller, &user.username, &from, &to).await;
        Ok(self.store.user(&user.id).await?.into())
    }

    /// The tenant a user is to move to, by name.
    async fn move_target(&self, name: &str) -> Result<Tenant, ServiceError> {
        if name.trim().is_empty() {
            return Err(bad_move_target(
                "name the tenant to move the user to".to_owned(),
            ));
        }
        match self.store.tenant_by_name(name).await {
            Ok(tenant) => Ok(tenant),
            Err(StoreError::NotFound(_)) => Err(bad_move_target(format!(
                "there is no tenant named {name:?}"
            ))),
            Err(error) => Err(error.into()),
        }
    }

    /// One entry in each tenant's log: each tenant's admins read only their own.
    async fn audit_move(&self, caller: &Caller, username: &str, from: &Tenant, to: &Tenant) {
        let before = serde_json::json!({"tenant": from.name}).to_string();
        let after = serde_json::json!({"tenant": to.name, "tokens_revoked": true}).to_string();
        for tenant in [from, to] {
            let mut record = AuditRecord::new(&tenant.id, AuditAction::UserMove, "user", username);
            record.before = Some(before.clone());
            record.after = Some(after.clone());
            self.audit(caller, record).await;
        }
    }

    /// Changes the caller's password after checking the current one; every session
    /// of the caller ends (the caller logs in again).
    pub async fn change_password(
        &self,
        caller: &Caller,
        change: &PasswordChange,
    ) -> Result<(), ServiceError> {
        let user = self.store.user(&caller.principal.user_id).await?;
        self.check_current_password(&user, Some(&change.current_password))
            .await?;
        let hash = new_password_hash(&change.new_password).await?;
        self.store.set_password_hash(&user.id, &hash).await?;
        self.audit(
            caller,
            AuditRecord::new(
                &user.tenant_id,
                AuditAction::UserPassword,
                "user",
                &user.username,
            ),
        )
        .await;
        Ok(())
    }
}
