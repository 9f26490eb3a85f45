//! Reaching a node through Corral: a short-lived SSH certificate for the caller's own
//! public key, signed by the tenant's SSH user CA, and what the caller needs to check
//! the node it reaches (its pinned host key). The session itself is relayed over a
//! WebSocket (`GET /api/v1/clusters/{id}/nodes/{number}/ssh`).

use serde::{Deserialize, Serialize};

/// A public key to certify for one node of a cluster.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NodeCertificateRequest {
    /// An OpenSSH public key line (`ssh-ed25519 AAAA… comment`); its private half never
    /// leaves the caller.
    pub public_key: String,
    /// How long the certificate is valid, in minutes (1-1440, default 10).
    #[serde(default)]
    pub minutes: Option<u32>,
}

/// A signed certificate and how to reach the node with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NodeCertificate {
    /// The OpenSSH certificate line (`ssh-ed25519-cert-v01@openssh.com AAAA…`), for
    /// `CertificateFile` or an SSH library.
    pub certificate: String,
    /// The user to log in as on the node.
    pub user: String,
    /// The node's pinned host key (`ssh-ed25519 AAAA…`): the only key a client should
    /// accept from the node (for `known_hosts`).
    pub host_key: String,
    /// The principals the certificate names: the node user and the cluster's.
    pub principals: Vec<String>,
    /// When the certificate stops being accepted (Unix ms).
    pub valid_before_ms: i64,
}
