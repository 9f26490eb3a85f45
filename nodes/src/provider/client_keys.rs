//! Providers' client keys: kept in the database (sealed), copied to a private file of
//! this process when a connection needs one, because connections load keys from files.
//!
//! The database is the truth and the files are a cache: a `corral worker` on another
//! machine, or a server whose data directory was lost, writes its own copy the first
//! time it reaches a node another process made. A key file left by a version that kept
//! keys only on disk is taken into the database the first time its name is asked for,
//! so nodes made before the upgrade stay reachable.

use std::path::{Path, PathBuf};

use secrecy::ExposeSecret;

use super::private_files::{create_private_dir, write_private_file};
use super::ProviderError;
use crate::ssh::ClientKeyPair;
use store::client_keys::StoredKeyPair;
use store::Store;

/// One provider's client keys: stored under `<kind>:<name>`, copied to `<dir>/<name>`.
#[derive(Debug, Clone)]
pub struct ClientKeys {
    store: Store,
    dir: PathBuf,
    kind: &'static str,
}

impl ClientKeys {
    /// The keys of provider `kind`, copied into `dir` (made 0700).
    pub fn new(store: Store, dir: &Path, kind: &'static str) -> Result<Self, ProviderError> {
        create_private_dir(dir)?;
        Ok(Self {
            store,
            dir: dir.to_owned(),
            kind,
        })
    }

    /// Where this process keeps its copy of key `name`.
    pub fn path_of(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn stored_name(&self, name: &str) -> String {
        format!("{}:{name}", self.kind)
    }

    fn store_error(&self, name: &str) -> impl FnOnce(store::StoreError) -> ProviderError {
        let key = self.stored_name(name);
        move |source| ProviderError::KeyStore { key, source }
    }

    /// Key `name` (made with `comment` when neither the database nor an earlier
    /// version's file has it), copied to this process's file: the file's path and the
    /// public line for `authorized_keys`.
    pub async fn ensure(
        &self,
        name: &str,
        comment: &str,
    ) -> Result<(PathBuf, String), ProviderError> {
        let stored_name = self.stored_name(name);
        let stored = match self
            .store
            .client_key(&stored_name)
            .await
            .map_err(self.store_error(name))?
        {
            Some(stored) => stored,
            None => {
                let candidate = match self.earlier_file(name)? {
                    Some(pair) => pair,
                    None => ClientKeyPair::generate(comment).map_err(|error| {
                        ProviderError::ClientKey {
                            key: stored_name.clone(),
                            detail: error.to_string(),
                        }
                    })?,
                };
                self.store
                    .ensure_client_key(
                        &stored_name,
                        (&candidate.public_openssh, &candidate.private_openssh),
                    )
                    .await
                    .map_err(self.store_error(name))?
            }
        };
        let path = self.copy_out(name, &stored)?;
        Ok((path, stored.public_openssh))
    }

    /// This process's file of key `name`, brought in line with the database; `None`
    /// when the database has no such key (its nodes were made by an earlier version on
    /// another machine, or it was forgotten).
    pub async fn file_of(&self, name: &str) -> Result<Option<PathBuf>, ProviderError> {
        let stored = self
            .store
            .client_key(&self.stored_name(name))
            .await
            .map_err(self.store_error(name))?;
        match stored {
            Some(stored) => self.copy_out(name, &stored).map(Some),
            None => Ok(None),
        }
    }

    /// Forgets key `name`, in the database and here (its nodes are gone).
    pub async fn forget(&self, name: &str) -> Result<(), ProviderError> {
        self.store
            .delete_client_key(&self.stored_name(name))
            .await
            .map_err(self.store_error(name))?;
        let path = self.path_of(name);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(ProviderError::Io {
                action: "cannot remove the key",
                path,
                source,
            }),
        }
    }

    /// The pair in the file an earlier version kept for `name`, if there is one.
    fn earlier_file(&self, name: &str) -> Result<Option<ClientKeyPair>, ProviderError> {
        let path = self.path_of(name);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(ProviderError::Io {
                    action: "cannot read the key",
                    path,
                    source,
                })
            }
        };
        ClientKeyPair::from_private_openssh(&text)
            .map(Some)
            .map_err(|error| ProviderError::ClientKey {
                key: self.stored_name(name),
                detail: format!("{}: {error}", path.display()),
            })
    }

    /// Writes the stored private key to this process's file unless it already holds it
    /// (a file from a forgotten key of the same name is replaced).
    fn copy_out(&self, name: &str, stored: &StoredKeyPair) -> Result<PathBuf, ProviderError> {
        let path = self.path_of(name);
        let private = stored.private_openssh.expose_secret();
        let current = std::fs::read(&path).ok();
        if current.as_deref() != Some(private.as_bytes()) {
            write_private_file(&path, private.as_bytes())?;
        }
        Ok(path)
    }
}

impl ClientKeys {
    /// How this process reaches `record`'s node, whose key is stored as `name`: with its
    /// own copy of the key, or with the file the record names when the database has no
    /// such key (a node made before keys were stored).
    pub async fn target(
        &self,
        record: &super::NodeRecord,
        name: &str,
    ) -> Result<crate::ssh::SshTarget, ProviderError> {
        let mut target = record.ssh_target();
        if let Some(path) = self.file_of(name).await? {
            target.client_key = crate::ssh::ClientKey::at(path);
        }
        Ok(target)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::testing::{test_secret_key, TestDatabase};

    async fn keyed_store(db: &TestDatabase) -> Store {
        Store::open(&db.url)
            .await
            .unwrap()
            .with_secret_key(test_secret_key())
    }

    #[tokio::test]
    async fn two_processes_making_one_key_at_once_agree_on_it() {
        let db = TestDatabase::sqlite();
        let store = keyed_store(&db).await;
        let (one_dir, two_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let one = ClientKeys::new(store.clone(), one_dir.path(), "test").unwrap();
        let two = ClientKeys::new(store.clone(), two_dir.path(), "test").unwrap();
        let (first, second) = tokio::join!(one.ensure("k", "one"), two.ensure("k", "two"));
        let ((one_path, one_public), (two_path, two_public)) = (first.unwrap(), second.unwrap());
        assert_eq!(one_public, two_public);
        assert_eq!(
            std::fs::read(&one_path).unwrap(),
            std::fs::read(&two_path).unwrap()
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&two_path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);

        // The private half is sealed in the database, never in clear.
        let (stored,): (String,) =
            sqlx::query_as("SELECT private_key FROM client_keys WHERE name = 'test:k'")
                .fetch_one(store.pool())
                .await
                .unwrap();
        assert!(!stored.contains("OPENSSH PRIVATE KEY"), "{stored}");

        // A process whose copy is gone (a new machine) writes it again.
        std::fs::remove_file(&two_path).unwrap();
        assert_eq!(two.file_of("k").await.unwrap(), Some(two_path.clone()));
        assert_eq!(
            std::fs::read(&one_path).unwrap(),
            std::fs::read(&two_path).unwrap()
        );

        // Forgotten with its nodes: gone from the database and this process's copy; a
        // key made later under the same name is a new one, and stale copies are replaced.
        one.forget("k").await.unwrap();
        assert!(!one_path.exists());
        assert_eq!(two.file_of("k").await.unwrap(), None);
        let (_, renewed) = one.ensure("k", "again").await.unwrap();
        assert_ne!(renewed, one_public);
        two.file_of("k").await.unwrap();
        assert_eq!(
            std::fs::read(&one_path).unwrap(),
            std::fs::read(&two_path).unwrap()
        );
    }

    #[tokio::test]
    async fn a_key_file_of_an_earlier_version_is_taken_into_the_database() {
        let db = TestDatabase::sqlite();
        let store = keyed_store(&db).await;
        let dir = tempfile::tempdir().unwrap();
        let earlier = ClientKeyPair::generate("earlier").unwrap();
        std::fs::write(dir.path().join("client_ed25519"), &earlier.private_openssh).unwrap();
        let keys = ClientKeys::new(store.clone(), dir.path(), "exec").unwrap();
        let (_, public) = keys.ensure("client_ed25519", "new").await.unwrap();
        assert_eq!(
            public, earlier.public_openssh,
            "nodes made before stay reachable"
        );
        assert!(store
            .client_key("exec:client_ed25519")
            .await
            .unwrap()
            .is_some());

        // A file that is not a key says so, naming the key and the file.
        std::fs::write(dir.path().join("broken"), "not a key").unwrap();
        let error = keys.ensure("broken", "x").await.unwrap_err().to_string();
        assert!(
            error.contains("exec:broken") && error.contains("broken"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn without_the_secret_key_nothing_is_stored() {
        let db = TestDatabase::sqlite();
        let store = Store::open(&db.url).await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let keys = ClientKeys::new(store.clone(), dir.path(), "test").unwrap();
        let error = keys.ensure("k", "x").await.unwrap_err();
        assert!(matches!(error, ProviderError::KeyStore { .. }), "{error}");
        assert!(!dir.path().join("k").exists());
    }
}
