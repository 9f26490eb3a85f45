//! User accounts: usernames, password hashing, the first-run superadmin, and creating
//! users from the command line. Plain passwords pass through here and nowhere else;
//! the store only ever sees argon2id hashes.

mod password;
pub mod ssh_keys;
mod sso;
mod tokens;

use crate::store::tenants::DEFAULT_TENANT_ID;
use crate::store::users::{NewUser, Role, User};
use crate::store::{Store, StoreError};

pub use password::{
    generate_password, hash_password, hash_password_blocking, verify_password,
    verify_password_blocking, Password, PasswordError,
};
pub use sso::{sign_in_sso, username_from_claim, SsoAccountError, SsoSignIn, NO_PASSWORD};
pub use tokens::TokenSecret;

/// The superadmin created on first start.
pub const FIRST_ADMIN_USERNAME: &str = "admin";

#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    #[error("invalid username {0:?}: use 1-64 characters of a-z, 0-9, '.', '_' and '-'")]
    InvalidUsername(String),
    #[error(transparent)]
    Password(#[from] PasswordError),
    #[error("no tenant named {0:?}")]
    UnknownTenant(String),
    #[error("a superadmin belongs to the default tenant, not {0:?}")]
    SuperadminTenant(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Whether two secrets (a CSRF token, an SSO state or nonce) are equal, compared without
/// stopping at the first difference, so the time taken tells nothing of where it is.
pub fn constant_time_eq(left: &[u8], right: &[u8]) -> bool {
    left.len() == right.len()
        && left
            .iter()
            .zip(right)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// Usernames are lower-case so `Alice` and `alice` cannot both exist.
pub fn parse_username(raw: &str) -> Result<String, AccountError> {
    let ok = !raw.is_empty()
        && raw.len() <= 64
        && raw
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(raw.to_owned())
    } else {
        Err(AccountError::InvalidUsername(raw.to_owned()))
    }
}

/// Creates a user in the tenant named `tenant` (the default tenant when `None`).
pub async fn create_user(
    store: &Store,
    username: &str,
    role: Role,
    tenant: Option<&str>,
    password: &Password,
) -> Result<User, AccountError> {
    let username = parse_username(username)?;
    password.check_strength()?;
    let tenant_id = match tenant {
        None => DEFAULT_TENANT_ID.to_owned(),
        Some(name) => match store.tenant_by_name(name).await {
            Ok(tenant) => tenant.id,
            Err(StoreError::NotFound(_)) => return Err(AccountError::UnknownTenant(name.into())),
            Err(err) => return Err(err.into()),
        },
    };
    if role == Role::Superadmin && tenant_id != DEFAULT_TENANT_ID {
        return Err(AccountError::SuperadminTenant(
            tenant.unwrap_or_default().to_owned(),
        ));
    }
    let user = store
        .create_user(&NewUser {
            tenant_id,
            username,
            role,
            password_hash: hash_password_blocking(password).await?,
        })
        .await?;
    Ok(user)
}

/// On a database with no users, creates the `admin` superadmin with a generated
/// password and returns it so the caller can show it once. `None` when users exist
/// (including when another server process created the admin a moment earlier).
pub async fn ensure_first_admin(store: &Store) -> Result<Option<Password>, AccountError> {
    if store.count_users().await? > 0 {
        return Ok(None);
    }
    let password = generate_password();
    match create_user(
        store,
        FIRST_ADMIN_USERNAME,
        Role::Superadmin,
        None,
        &password,
    )
    .await
    {
        Ok(_) => Ok(Some(password)),
        Err(AccountError::Store(StoreError::Conflict(_))) => Ok(None),
        Err(err) => Err(err),
    }
}

#[cfg(test)]
mod tests {
    use super::constant_time_eq;

    #[test]
    fn secrets_are_equal_only_byte_for_byte() {
        assert!(constant_time_eq(b"token", b"token"));
        assert!(constant_time_eq(b"", b""));
        assert!(!constant_time_eq(b"token", b"tokem"));
        assert!(!constant_time_eq(b"token", b"token-longer"));
        assert!(!constant_time_eq(b"", b"x"));
    }
}
