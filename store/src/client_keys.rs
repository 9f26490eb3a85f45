//! Client key pairs providers make to reach their nodes, shared through the database.
//!
//! A key is made once per name by whichever process gets there first: the insert does
//! nothing when the name is taken, and everyone then reads the one stored pair, so two
//! processes making a cluster's first nodes at the same moment still agree on its key.
//! The private half is sealed with the server's secret key and only
//! [`Store::ensure_client_key`] and [`Store::client_key`] open it.

use secrecy::SecretString;

use super::{now_ms, Store, StoreError};
use crate::found::OrNotFound;
use crate::secrets::SecretKey;

/// A stored key pair: the public line for `authorized_keys` and the private key.
pub struct StoredKeyPair {
    /// `ssh-ed25519 AAAA… comment`.
    pub public_openssh: String,
    /// OpenSSH PEM, unencrypted.
    pub private_openssh: SecretString,
}

impl std::fmt::Debug for StoredKeyPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredKeyPair")
            .field("public_openssh", &self.public_openssh)
            .finish_non_exhaustive()
    }
}

/// What the private key of `name` is sealed for, so a sealed value moved to another row
/// does not open.
fn private_key_context(name: &str) -> String {
    format!("client_keys.private_key:{name}")
}

impl Store {
    /// The key pair stored as `name`, storing `candidate` (public line, private PEM)
    /// first when there is none. Whoever stored first wins; the answer is what is stored.
    pub async fn ensure_client_key(
        &self,
        name: &str,
        candidate: (&str, &str),
    ) -> Result<StoredKeyPair, StoreError> {
        let (public, private) = candidate;
        let sealed = self
            .secret_key()?
            .seal(private, &private_key_context(name))?;
        sqlx::query(
            "INSERT INTO client_keys (name, public_key, private_key, created_at_ms) \
             VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
        )
        .bind(name)
        .bind(public)
        .bind(&sealed)
        .bind(now_ms())
        .execute(&self.pool)
        .await?;
        self.client_key(name)
            .await?
            .or_not_found(|| format!("client key {name:?}"))
    }

    /// The key pair stored as `name`, if any.
    pub async fn client_key(&self, name: &str) -> Result<Option<StoredKeyPair>, StoreError> {
        let row: Option<(String, String)> =
            sqlx::query_as("SELECT public_key, private_key FROM client_keys WHERE name = $1")
                .bind(name)
                .fetch_optional(&self.pool)
                .await?;
        let Some((public_openssh, sealed)) = row else {
            return Ok(None);
        };
        let key: &SecretKey = self.secret_key()?;
        let private = key.open(&sealed, &private_key_context(name))?;
        Ok(Some(StoredKeyPair {
            public_openssh,
            private_openssh: SecretString::from(private),
        }))
    }

    /// Forgets the key pair `name` (its nodes are gone); forgetting a missing one is fine.
    pub async fn delete_client_key(&self, name: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM client_keys WHERE name = $1")
            .bind(name)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
