//! Users who sign in through an OpenID Connect issuer: made on their first sign-in,
//! moved to the tenant and given the role the operator's rules say at every sign-in
//! (the issuer's groups are the truth; a role changed in Corral lasts until the next
//! sign-in). They get no usable local password.

use crate::store::tenants::DEFAULT_TENANT_ID;
use crate::store::users::{NewUser, Role, User};
use crate::store::{now_ms, Store, StoreError};

use super::parse_username;

/// What stands in for the password hash of a user made by single sign-on: not a PHC
/// string, so no password ever verifies against it.
pub const NO_PASSWORD: &str = "!sso";

/// One sign-in as the issuer and the operator's rules describe it.
#[derive(Debug, Clone)]
pub struct SsoSignIn<'a> {
    /// The issuer's name in the config (identities are per issuer).
    pub issuer: &'a str,
    /// The issuer's stable id of the user (`sub`).
    pub subject: &'a str,
    /// The name a new user gets (already made a valid username).
    pub username: &'a str,
    pub tenant: &'a str,
    pub role: Role,
    pub local_passwords: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum SsoAccountError {
    #[error("the rule names the tenant {0:?}, which does not exist")]
    UnknownTenant(String),
    #[error("a superadmin belongs to the default tenant, but the rule names {0:?}")]
    SuperadminTenant(String),
    #[error(
        "the user name {0:?} belongs to an account that does not sign in through this \
         issuer; an administrator must rename or remove it first"
    )]
    UsernameTaken(String),
    #[error("the issuer's user name {0:?} cannot be a Corral user name")]
    InvalidUsername(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The user this sign-in is: made on first sign-in, else moved and re-roled as the
/// rules now say. Their sessions end when the tenant or role changes.
pub async fn sign_in_sso(store: &Store, sign_in: &SsoSignIn<'_>) -> Result<User, SsoAccountError> {
    let tenant = match store.tenant_by_name(sign_in.tenant).await {
        Ok(tenant) => tenant,
        Err(StoreError::NotFound(_)) => {
            return Err(SsoAccountError::UnknownTenant(sign_in.tenant.to_owned()));
        }
        Err(error) => return Err(error.into()),
    };
    if sign_in.role == Role::Superadmin && tenant.id != DEFAULT_TENANT_ID {
        return Err(SsoAccountError::SuperadminTenant(tenant.name));
    }
    let user = match store.sso_user(sign_in.issuer, sign_in.subject).await? {
        Some(user) => {
            // A superadmin is never moved: demote first, then move, then promote.
            if user.role == Role::Superadmin && sign_in.role != Role::Superadmin {
                store.set_role(&user.id, sign_in.role).await?;
            }
            if user.tenant_id != tenant.id {
                store
                    .move_user(&user.id, &user.tenant_id, &tenant.id, now_ms())
                    .await?;
            }
            let current = store.user(&user.id).await?;
            if current.role != sign_in.role {
                store.set_role(&user.id, sign_in.role).await?;
            }
            current
        }
        None => {
            let username = parse_username(sign_in.username)
                .map_err(|_| SsoAccountError::InvalidUsername(sign_in.username.to_owned()))?;
            let created = store
                .create_user(&NewUser {
                    tenant_id: tenant.id.clone(),
                    username: username.clone(),
                    role: sign_in.role,
                    password_hash: NO_PASSWORD.to_owned(),
                })
                .await;
            match created {
                Ok(user) => user,
                Err(StoreError::Conflict(_)) => {
                    return Err(SsoAccountError::UsernameTaken(username));
                }
                Err(error) => return Err(error.into()),
            }
        }
    };
    store
        .record_sso_identity(
            sign_in.issuer,
            sign_in.subject,
            &user.id,
            sign_in.local_passwords,
        )
        .await?;
    Ok(store.user(&user.id).await?)
}

/// A username made of an issuer's claim: lower-case, other characters as `-`, at
/// most 64 characters; an email address gives its part before `@`.
pub fn username_from_claim(raw: &str) -> String {
    let local = raw.split('@').next().unwrap_or(raw);
    local
        .trim()
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(64)
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::store::tenants::NewTenant;

    #[test]
    fn usernames_are_made_valid() {
        assert_eq!(username_from_claim("Alice"), "alice");
        assert_eq!(username_from_claim("bob.smith@example.com"), "bob.smith");
        assert_eq!(username_from_claim("Zoë Doe"), "zo--doe");
    }

    #[tokio::test]
    async fn a_user_is_made_once_then_follows_the_rules() {
        let db = crate::testing::TestDatabase::sqlite();
        let store = Store::open(&db.url).await.unwrap();
        store
            .create_tenant(&NewTenant {
                name: "acme".into(),
                max_clusters: None,
                max_nodes: None,
                provider_types: NewTenant::all_provider_types(),
            })
            .await
            .unwrap();
        let mut sign_in = SsoSignIn {
            issuer: "id",
            subject: "s-1",
            username: "alice",
            tenant: "acme",
            role: Role::User,
            local_passwords: false,
        };
        let first = sign_in_sso(&store, &sign_in).await.unwrap();
        assert_eq!((first.username.as_str(), first.role), ("alice", Role::User));
        assert!(!store.password_login_allowed(&first.id).await.unwrap());
        sign_in.role = Role::TenantAdmin;
        sign_in.tenant = "default";
        sign_in.local_passwords = true;
        let again = sign_in_sso(&store, &sign_in).await.unwrap();
        assert_eq!(again.id, first.id);
        assert_eq!(again.role, Role::TenantAdmin);
        assert_eq!(again.tenant_id, DEFAULT_TENANT_ID);
        assert!(
            again.session_epoch > first.session_epoch,
            "old sessions end"
        );
        assert!(store.password_login_allowed(&first.id).await.unwrap());
        // Another subject may not take over a name that exists.
        sign_in.subject = "s-2";
        let taken = sign_in_sso(&store, &sign_in).await.unwrap_err();
        assert!(
            matches!(taken, SsoAccountError::UsernameTaken(_)),
            "{taken}"
        );
        sign_in.tenant = "nope";
        let unknown = sign_in_sso(&store, &sign_in).await.unwrap_err();
        assert!(
            matches!(unknown, SsoAccountError::UnknownTenant(_)),
            "{unknown}"
        );
    }
}
