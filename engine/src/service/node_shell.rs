//! Reaching a node through Corral (`corral cluster ssh`): who may, the certificates the
//! tenant's SSH user CA signs for them, and the audit entries of each session.
//!
//! Who may: the cluster's owner and the tenant's admins (a superadmin administers every
//! tenant). Another user of the tenant is refused (403); a user of another tenant is
//! told the cluster does not exist (404), as everywhere. With node shells off (the
//! server's `--no-node-shell`, or the tenant's setting) there is no such thing: 404.

use std::time::{Duration, SystemTime};

use api_types::{
    AuditAction, NodeCertificate, NodeCertificateRequest, NodeShellUpdate, TenantView,
};

use super::{AuditRecord, Caller, Service, ServiceError};
use crate::provider::NodeRecord;
use crate::ssh::{
    cluster_principal, CertificateRequest, HostKey, UserCa, UserCaError,
    DEFAULT_CERTIFICATE_MINUTES, MAX_CERTIFICATE_MINUTES,
};
use crate::store::now_ms;
use crate::store::tenants::TenantSwitch;

/// The node a session goes to, once the caller was found allowed.
#[derive(Debug, Clone)]
pub struct NodeShellTarget {
    pub tenant_id: String,
    pub cluster_id: String,
    pub cluster_name: String,
    pub number: i64,
    /// Where Corral itself reaches the node's sshd.
    pub host: String,
    pub port: u16,
    /// The node user sessions log in as.
    pub user: String,
    pub host_key: HostKey,
}

impl NodeShellTarget {
    /// `shop/1000`: how the audit log names the node.
    pub fn label(&self) -> String {
        format!("{}/{}", self.cluster_name, self.number)
    }
}

/// What a relayed session moved, for its closing audit entry.
#[derive(Debug, Clone, Copy, Default)]
pub struct SessionBytes {
    /// From the client to the node.
    pub to_node: u64,
    /// From the node to the client.
    pub from_node: u64,
}

impl Service {
    /// Allows (or, with `false`, refuses everyone) SSH sessions to nodes through this
    /// server: `corral serve --no-node-shell`.
    pub fn with_node_shell(mut self, allowed: bool) -> Self {
        self.node_shell = allowed;
        self
    }

    /// Node `number` of `cluster` (id or name), if the caller may open a session to it.
    pub async fn node_shell_target(
        &self,
        caller: &Caller,
        cluster: &str,
        number: i64,
    ) -> Result<NodeShellTarget, ServiceError> {
        let cluster = self.visible_cluster(caller, cluster).await?;
        let switched_off = || ServiceError::NotFound("node shell".to_owned());
        if !self.node_shell || !self.store.tenant(&cluster.tenant_id).await?.node_shell {
            return Err(switched_off());
        }
        let owner = cluster.owner_id.as_deref() == Some(caller.principal.user_id.as_str());
        if !owner && !caller.principal.can_administer_tenant(&cluster.tenant_id) {
            return Err(ServiceError::Forbidden(
                "only the cluster's owner and the tenant's admins may reach its nodes".to_owned(),
            ));
        }
        let what = || format!("node {number} of cluster {:?}", cluster.name);
        let node = self
            .store
            .list_nodes(&cluster.id)
            .await?
            .into_iter()
            .find(|node| node.number == number)
            .ok_or_else(|| ServiceError::NotFound(what()))?;
        let record: NodeRecord = node
            .provider_json
            .as_deref()
            .map(serde_json::from_str)
            .transpose()
            .map_err(ServiceError::internal)?
            .ok_or_else(|| ServiceError::Conflict(format!("{} has not been made yet", what())))?;
        Ok(NodeShellTarget {
            tenant_id: cluster.tenant_id,
            cluster_id: cluster.id,
            cluster_name: cluster.name,
            number,
            host: record.host,
            port: record.port,
            user: record.user,
            host_key: record.host_key,
        })
    }

    /// Signs the caller's public key into a certificate for node `number` of `cluster`:
    /// the node user and the cluster's principal, a terminal and no forwarding, valid
    /// for `request.minutes` (default 10).
    pub async fn sign_node_certificate(
        &self,
        caller: &Caller,
        cluster: &str,
        number: i64,
        request: &NodeCertificateRequest,
    ) -> Result<NodeCertificate, ServiceError> {
        let target = self.node_shell_target(caller, cluster, number).await?;
        let minutes = request.minutes.unwrap_or(DEFAULT_CERTIFICATE_MINUTES);
        if !(1..=MAX_CERTIFICATE_MINUTES).contains(&minutes) {
            return Err(super::clusters::field_problem(
                "minutes",
                format!("{minutes} is out of range: 1 to {MAX_CERTIFICATE_MINUTES}"),
            ));
        }
        let ca = UserCa::of_tenant(&self.store, &target.tenant_id)
            .await
            .map_err(ServiceError::internal)?;
        let valid_from = SystemTime::now();
        let valid_for = Duration::from_secs(u64::from(minutes) * 60);
        let key_id = format!(
            "corral user {} for {}",
            caller.principal.username,
            target.label()
        );
        let certificate = ca
            .sign(&CertificateRequest {
                public_key: &request.public_key,
                node_user: &target.user,
                cluster_id: &target.cluster_id,
                key_id,
                valid_from,
                valid_for,
            })
            .map_err(|error| match error {
                UserCaError::BadPublicKey(_) => {
                    super::clusters::field_problem("public_key", error.to_string())
                }
                other => ServiceError::internal(other),
            })?;
        let label = target.label();
        let mut record = AuditRecord::new(
            &target.tenant_id,
            AuditAction::NodeSshCertificate,
            "node",
            &label,
        );
        record.after =
            Some(serde_json::json!({"minutes": minutes, "user": target.user}).to_string());
        self.audit(caller, record).await;
        Ok(NodeCertificate {
            certificate,
            principals: vec![target.user.clone(), cluster_principal(&target.cluster_id)],
            user: target.user,
            host_key: target.host_key.to_openssh(),
            valid_before_ms: now_ms() + i64::from(minutes) * 60_000,
        })
    }

    /// Records that `caller` opened a session to `target`; returns when (Unix ms).
    pub async fn node_shell_opened(&self, caller: &Caller, target: &NodeShellTarget) -> i64 {
        let started = now_ms();
        let label = target.label();
        let mut record = AuditRecord::new(&target.tenant_id, AuditAction::NodeSsh, "node", &label);
        record.after = Some(
            serde_json::json!({"address": format!("{}:{}", target.host, target.port)}).to_string(),
        );
        self.audit(caller, record).await;
        started
    }

    /// Records that the session `caller` opened at `started_ms` ended, and what it moved.
    pub async fn node_shell_closed(
        &self,
        caller: &Caller,
        target: &NodeShellTarget,
        started_ms: i64,
        bytes: SessionBytes,
    ) {
        let label = target.label();
        let mut record =
            AuditRecord::new(&target.tenant_id, AuditAction::NodeSshEnd, "node", &label);
        record.after = Some(
            serde_json::json!({
                "started_at_ms": started_ms,
                "ended_at_ms": now_ms(),
                "bytes_to_node": bytes.to_node,
                "bytes_from_node": bytes.from_node,
            })
            .to_string(),
        );
        self.audit(caller, record).await;
    }

    /// Turns SSH sessions to the tenant's nodes on or off (its admins).
    pub async fn set_node_shell(
        &self,
        caller: &Caller,
        id: &str,
        update: &NodeShellUpdate,
    ) -> Result<TenantView, ServiceError> {
        caller.require_visible(id, || format!("tenant {id:?}"))?;
        caller.require_tenant_admin(id)?;
        let tenant = self
            .switch_tenant(caller, id, TenantSwitch::NodeShell, update.node_shell)
            .await?;
        Ok(tenant.into())
    }
}
