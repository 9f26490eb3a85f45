//! The `ssh-pool` hosts the admin may manage, each free or checked out to a cluster's
//! node, with the public key to authorize on it (the private key never leaves the
//! engine).

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::UiError;

/// A pool host as the admin page lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolHostRow {
    pub id: String,
    pub tenant: String,
    pub name: String,
    /// `user@host:port`.
    pub target: String,
    pub host_key_fingerprint: String,
    pub client_public_key: String,
    /// The cluster and node holding the host, if any.
    pub checked_out: Option<CheckedOut>,
    pub created_at_ms: i64,
}

/// Who holds a checked-out host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckedOut {
    pub node: String,
    pub cluster_id: Option<String>,
    pub cluster_name: Option<String>,
    pub node_number: Option<u32>,
}

#[server(prefix = "/sfn", endpoint = "admin-pool-hosts")]
pub async fn list_pool_hosts() -> Result<Vec<PoolHostRow>, UiError> {
    let caller = super::caller::caller().await?;
    super::caller::require_admin(&caller)?;
    let service = crate::session::service()?;
    let tenants: std::collections::HashMap<String, String> = service
        .list_tenants(&caller, super::caller::all())
        .await?
        .items
        .into_iter()
        .map(|tenant| (tenant.id, tenant.name))
        .collect();
    Ok(service
        .list_pool_hosts(&caller, super::caller::all())
        .await?
        .items
        .into_iter()
        .map(|host| PoolHostRow {
            tenant: tenants
                .get(&host.tenant_id)
                .cloned()
                .unwrap_or(host.tenant_id),
            target: format!("{}@{}:{}", host.user, host.host, host.port),
            id: host.id,
            name: host.name,
            host_key_fingerprint: host.host_key_fingerprint,
            client_public_key: host.client_public_key,
            checked_out: host.checked_out.map(|out| CheckedOut {
                node: out.node,
                cluster_id: out.cluster_id,
                cluster_name: out.cluster_name,
                node_number: out.node_number,
            }),
            created_at_ms: host.created_at_ms,
        })
        .collect())
}
