//! Each tenant's SSH user certificate authority: an Ed25519 key made on first use and
//! kept sealed in the database like providers' client keys, whose public half the
//! tenant's nodes trust (`TrustedUserCAKeys`) when they are built.
//!
//! A certificate it signs lets its holder in as the node user for a few minutes, and
//! only on the nodes of one cluster: nodes list their cluster's principal in
//! `AuthorizedPrincipalsFile`, so a certificate for one cluster opens no other cluster
//! of the tenant even though they trust the same authority. No private key a user
//! could keep leaves the server: users bring their own public key (an ephemeral one,
//! for `corral cluster ssh`) and get back a certificate that soon expires.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rand_core::{OsRng, RngCore};
use russh::keys::ssh_key::certificate::{Builder, CertType};
use russh::keys::ssh_key::Certificate;
use russh::keys::{PrivateKey, PublicKey};
use secrecy::ExposeSecret;

use super::ClientKeyPair;
use store::{Store, StoreError};

/// How long a certificate is valid when the caller does not say.
pub const DEFAULT_CERTIFICATE_MINUTES: u32 = 10;
/// The longest validity a certificate may ask for (a day): they are for sessions,
/// not for keeping.
pub const MAX_CERTIFICATE_MINUTES: u32 = 24 * 60;

/// The principal a node of cluster `cluster_id` lists in its `AuthorizedPrincipalsFile`,
/// and every certificate for that cluster carries.
pub fn cluster_principal(cluster_id: &str) -> String {
    format!("corral-cluster-{cluster_id}")
}

/// Why a certificate could not be made.
#[derive(Debug, thiserror::Error)]
pub enum UserCaError {
    #[error("the tenant's SSH certificate authority is not readable: {0}")]
    Store(#[from] StoreError),
    #[error("the tenant's SSH certificate authority key is broken: {0}")]
    BrokenKey(String),
    #[error("not an OpenSSH public key line ({0}); send e.g. the contents of id_ed25519.pub")]
    BadPublicKey(String),
    #[error("cannot sign the certificate: {0}")]
    Signing(String),
}

/// One tenant's authority, opened for signing. `Debug` shows only the public half.
pub struct UserCa {
    key: PrivateKey,
    public_openssh: String,
}

impl std::fmt::Debug for UserCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserCa")
            .field("public_openssh", &self.public_openssh)
            .finish_non_exhaustive()
    }
}

/// The name the authority of `tenant_id` is stored under among the client keys.
fn stored_name(tenant_id: &str) -> String {
    format!("ssh-user-ca:{tenant_id}")
}

/// What a certificate says: who may log in as whom, where, and until when.
#[derive(Debug, Clone)]
pub struct CertificateRequest<'a> {
    /// The user's public key (OpenSSH line) the certificate is for.
    pub public_key: &'a str,
    /// The node user the holder logs in as.
    pub node_user: &'a str,
    /// The cluster whose nodes accept the certificate.
    pub cluster_id: &'a str,
    /// Shown in the node's sshd log and the audit log: who asked, for what.
    pub key_id: String,
    /// Valid from this moment (a minute earlier, for clocks a little behind) ...
    pub valid_from: SystemTime,
    /// ... for this long.
    pub valid_for: Duration,
}

impl UserCa {
    /// The authority of `tenant_id`, made and stored when the tenant has none yet
    /// (whoever stores first wins, so concurrent first uses agree on one key).
    pub async fn of_tenant(store: &Store, tenant_id: &str) -> Result<Self, UserCaError> {
        let name = stored_name(tenant_id);
        let stored = match store.client_key(&name).await? {
            Some(stored) => stored,
            None => {
                let candidate = ClientKeyPair::generate(&format!("corral user CA {tenant_id}"))
                    .map_err(|error| UserCaError::BrokenKey(error.to_string()))?;
                store
                    .ensure_client_key(
                        &name,
                        (&candidate.public_openssh, &candidate.private_openssh),
                    )
                    .await?
            }
        };
        let key = PrivateKey::from_openssh(stored.private_openssh.expose_secret())
            .map_err(|error| UserCaError::BrokenKey(error.to_string()))?;
        Ok(Self {
            key,
            public_openssh: stored.public_openssh,
        })
    }

    /// The public key line nodes trust (`TrustedUserCAKeys`).
    pub fn public_openssh(&self) -> &str {
        &self.public_openssh
    }

    /// A user certificate for `request`, in OpenSSH one-line form
    /// (`ssh-ed25519-cert-v01@openssh.com AAAA… key-id`). It allows a terminal and
    /// nothing else: no agent, port or X11 forwarding.
    pub fn sign(&self, request: &CertificateRequest<'_>) -> Result<String, UserCaError> {
        let subject = PublicKey::from_openssh(request.public_key.trim())
            .map_err(|error| UserCaError::BadPublicKey(error.to_string()))?;
        let seconds = |time: SystemTime| {
            time.duration_since(UNIX_EPOCH)
                .map(|since| since.as_secs())
                .unwrap_or(0)
        };
        let valid_after = seconds(request.valid_from).saturating_sub(60);
        let valid_before = seconds(request.valid_from + request.valid_for);
        let mut nonce = [0u8; Builder::RECOMMENDED_NONCE_SIZE];
        OsRng.fill_bytes(&mut nonce);
        let signing = |error: russh::keys::ssh_key::Error| UserCaError::Signing(error.to_string());
        let mut builder = Builder::new(
            nonce.to_vec(),
            subject.key_data().clone(),
            valid_after,
            valid_before,
        )
        .map_err(signing)?;
        builder
            .serial(OsRng.next_u64())
            .map_err(signing)?
            .cert_type(CertType::User)
            .map_err(signing)?
            .key_id(request.key_id.clone())
            .map_err(signing)?
            .valid_principal(request.node_user)
            .map_err(signing)?
            .valid_principal(cluster_principal(request.cluster_id))
            .map_err(signing)?
            .extension("permit-pty", "")
            .map_err(signing)?
            .comment(request.key_id.clone())
            .map_err(signing)?;
        let certificate: Certificate = builder.sign(&self.key).map_err(signing)?;
        certificate.to_openssh().map_err(signing)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::testing::{test_secret_key, TestDatabase};

    #[tokio::test]
    async fn a_tenant_keeps_one_authority_and_its_certificates_name_the_user_and_cluster() {
        let db = TestDatabase::sqlite();
        let store = Store::open(&db.url)
            .await
            .unwrap()
            .with_secret_key(test_secret_key());
        let first = UserCa::of_tenant(&store, "t1").await.unwrap();
        let again = UserCa::of_tenant(&store, "t1").await.unwrap();
        let other = UserCa::of_tenant(&store, "t2").await.unwrap();
        assert_eq!(first.public_openssh(), again.public_openssh());
        assert_ne!(first.public_openssh(), other.public_openssh());

        let user = ClientKeyPair::generate("user").unwrap();
        let now = SystemTime::now();
        let line = first
            .sign(&CertificateRequest {
                public_key: &user.public_openssh,
                node_user: "corral-node",
                cluster_id: "c1",
                key_id: "alice for c1 node 1000".to_owned(),
                valid_from: now,
                valid_for: Duration::from_secs(600),
            })
            .unwrap();
        let certificate = Certificate::from_openssh(&line).unwrap();
        assert_eq!(
            certificate.valid_principals(),
            ["corral-node".to_owned(), "corral-cluster-c1".to_owned()]
        );
        assert_eq!(certificate.cert_type(), CertType::User);
        assert!(certificate.extensions().contains_key("permit-pty"));
        assert!(!certificate
            .extensions()
            .contains_key("permit-port-forwarding"));
        let ca = PublicKey::from_openssh(first.public_openssh()).unwrap();
        let fingerprint = ca.fingerprint(Default::default());
        let unix = now.duration_since(UNIX_EPOCH).unwrap().as_secs();
        certificate.validate_at(unix, [&fingerprint]).unwrap();
        assert!(certificate.validate_at(unix + 601, [&fingerprint]).is_err());

        let refused = first
            .sign(&CertificateRequest {
                public_key: "ssh-ed25519 not-a-key",
                node_user: "corral-node",
                cluster_id: "c1",
                key_id: String::new(),
                valid_from: now,
                valid_for: Duration::from_secs(600),
            })
            .unwrap_err();
        assert!(refused.to_string().contains("not an OpenSSH public key"));
    }
}
