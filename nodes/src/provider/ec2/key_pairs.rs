//! A cluster's key pair `corral-<cluster>`: an Ed25519 key Corral makes and keeps in the
//! store (copied to the provider's key directory when it connects); EC2 only gets the
//! public half, imported. Looked up by name first and imported only when missing, and
//! deleted with the cluster's last node.

use std::path::PathBuf;

use base64::Engine as _;

use super::api::{Params, QueryClient};
use super::errors::ec2_error;
use crate::provider::client_keys::ClientKeys;
use crate::provider::ProviderError;

/// The key pair (and key file) of cluster `cluster`.
pub fn key_name(cluster: &str) -> String {
    format!("corral-{cluster}")
}

/// The cluster's key pair, imported from a key Corral made and keeps in the database:
/// its name, and this process's copy of its private key.
pub(super) async fn ensure(
    keys: &ClientKeys,
    client: &QueryClient,
    node: &str,
    provider: &str,
    cluster: &str,
    tags: &[(&str, &str)],
) -> Result<(String, PathBuf), ProviderError> {
    // This process's creates take turns, so a cluster's nodes made at once share a
    // key without asking the cloud twice; other processes agree through the database.
    static MAKING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    let _turn = MAKING.lock().await;
    let name = key_name(cluster);
    let stored_before = keys.file_of(&name).await?.is_some();
    let (path, public) = keys
        .ensure(&name, &format!("corral cluster {cluster}"))
        .await?;
    let exists = match client
        .call(
            "DescribeKeyPairs",
            Params::new().set("KeyName.1", &name).as_slice(),
        )
        .await
    {
        Ok(_) => true,
        Err(error) if error.is("InvalidKeyPair.NotFound") => false,
        Err(error) => return Err(ec2_error(node, provider, "look up the key pair")(error)),
    };
    if exists {
        if stored_before {
            return Ok((name, path));
        }
        // Corral does not hold its private half (an earlier version made it on a
        // machine whose key directory is lost): the nodes made from now on get the
        // stored one.
        tracing::warn!(node, key = %name, "the cluster's key pair has no stored private key; replacing it");
        client
            .call(
                "DeleteKeyPair",
                Params::new().set("KeyName", &name).as_slice(),
            )
            .await
            .map_err(ec2_error(node, provider, "replace the key pair"))?;
    }
    let params = Params::new()
        .set("KeyName", &name)
        .set(
            "PublicKeyMaterial",
            base64::engine::general_purpose::STANDARD.encode(public.trim()),
        )
        .tags("key-pair", tags);
    match client.call("ImportKeyPair", params.as_slice()).await {
        Ok(_) => Ok((name, path)),
        Err(error) if error.is("InvalidKeyPair.Duplicate") => Ok((name, path)),
        Err(error) => Err(ec2_error(node, provider, "import the key pair")(error)),
    }
}

/// Deletes the cluster's key pair `name` from EC2 (one already gone is fine) and its
/// private key from the store and this process's key directory.
pub(super) async fn delete(
    keys: &ClientKeys,
    client: &QueryClient,
    node: &str,
    provider: &str,
    name: &str,
) -> Result<(), ProviderError> {
    match client
        .call(
            "DeleteKeyPair",
            Params::new().set("KeyName", name).as_slice(),
        )
        .await
    {
        Ok(_) => {}
        Err(error) if error.is("InvalidKeyPair.NotFound") => {}
        Err(error) => return Err(ec2_error(node, provider, "delete the key pair")(error)),
    }
    keys.forget(name).await
}
