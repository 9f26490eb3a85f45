//! Hosts of the `ssh-pool` provider: a tenant's admins register, change and remove them
//! (superadmins those of every tenant); the provider lends them to nodes.
//!
//! Registering a host makes an Ed25519 key pair for it: the private half is stored and
//! used only by the provider; the admin gets the public half to put in the host's
//! `authorized_keys`. That way no private key ever crosses the API, a browser or a
//! clipboard, and each host has its own key, so removing a host revokes nothing else.
//! The host key is required and pinned: every connection must present exactly it.

use super::{
    AuditRecord, Caller, CheckoutView, Page, PageRequest, PoolHostRequest, PoolHostUpdate,
    PoolHostView, Problem, Service, ServiceError,
};
use api_types::{AuditAction, PoolHostState};

use crate::ssh::{ClientKeyPair, HostKey};
use crate::store::pool_hosts::PoolHost;
use crate::store::{now_ms, StoreError};

/// What the audit log keeps of a host: where it is and the host key pinned for it
/// (public; the client key is never logged).
fn audit_body(host: &PoolHost) -> String {
    serde_json::json!({
        "name": host.name,
        "user": host.user,
        "address": host.address(),
        "host_key": host.host_key,
    })
    .to_string()
}

const MAX_NAME: usize = 63;
const MAX_HOST: usize = 253;
const MAX_USER: usize = 32;

fn problem(path: &str, message: impl Into<String>) -> Problem {
    Problem {
        path: path.to_owned(),
        message: message.into(),
    }
}

fn check_name(name: &str, problems: &mut Vec<Problem>) {
    if name.is_empty() || name.chars().count() > MAX_NAME {
        problems.push(problem("name", format!("must be 1-{MAX_NAME} characters")));
    } else if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        problems.push(problem(
            "name",
            format!("{name:?} may only hold letters, digits, `.`, `_` and `-`"),
        ));
    }
}

fn check_host(host: &str, problems: &mut Vec<Problem>) {
    if host.is_empty() {
        problems.push(problem("host", "is empty: give an address or DNS name"));
    } else if host.len() > MAX_HOST
        || host
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '/' | '@' | '?' | '#'))
    {
        problems.push(problem(
            "host",
            format!("{host:?} is not an address or DNS name"),
        ));
    }
}

fn check_port(port: i64, problems: &mut Vec<Problem>) -> u16 {
    match u16::try_from(port) {
        Ok(port) if port > 0 => port,
        _ => {
            problems.push(problem("port", format!("{port} is not a port (1-65535)")));
            0
        }
    }
}

fn check_user(user: &str, problems: &mut Vec<Problem>) {
    if user.is_empty() || user.len() > MAX_USER {
        problems.push(problem("user", format!("must be 1-{MAX_USER} characters")));
    } else if user.starts_with('-')
        || !user
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        problems.push(problem(
            "user",
            format!("{user:?} is not a user name (letters, digits, `.`, `_`, `-`)"),
        ));
    }
}

/// Parses a host key line; a leading host name (as `ssh-keyscan` prints) is skipped.
fn check_host_key(text: &str, problems: &mut Vec<Problem>) -> Option<HostKey> {
    let text = text.trim();
    if text.is_empty() {
        problems.push(problem(
            "host_key",
            "is required: the host's public host key pins who Corral talks to",
        ));
        return None;
    }
    let first_error = match HostKey::from_openssh(text) {
        Ok(key) => return Some(key),
        Err(error) => error,
    };
    if let Some((_, rest)) = text.split_once(char::is_whitespace) {
        if let Ok(key) = HostKey::from_openssh(rest) {
            return Some(key);
        }
    }
    let reason = match first_error {
        crate::ssh::SshError::InvalidHostKey { reason, .. } => reason,
        other => other.to_string(),
    };
    problems.push(problem(
        "host_key",
        format!("is not an OpenSSH public key (`ssh-ed25519 AAAA…`): {reason}"),
    ));
    None
}

/// Splits `<cluster id>-<number>` (cluster ids are UUIDs, which hold `-` themselves).
fn split_node_id(node: &str) -> Option<(&str, u32)> {
    let (cluster, number) = node.rsplit_once('-')?;
    Some((cluster, number.parse().ok()?))
}

impl Service {
    /// The host `id` if the caller administers its tenant; `NotFound` exactly as for a
    /// missing host when it belongs to a tenant the caller cannot see.
    async fn administered_pool_host(
        &self,
        caller: &Caller,
        id: &str,
    ) -> Result<PoolHost, ServiceError> {
        let what = || format!("pool host {id:?}");
        caller
            .administered(what, self.store.pool_host(id), |host| &host.tenant_id)
            .await
    }

    async fn pool_host_view(&self, host: PoolHost) -> Result<PoolHostView, ServiceError> {
        let checked_out = match &host.checked_out_node {
            None => None,
            Some(node) => {
                let (cluster_id, node_number) = match split_node_id(node) {
                    Some((cluster, number)) => (Some(cluster.to_owned()), Some(number)),
                    None => (None, None),
                };
                let cluster_name = match &cluster_id {
                    Some(cluster_id) => match self.store.cluster(cluster_id).await {
                        Ok(cluster) if cluster.tenant_id == host.tenant_id => Some(cluster.name),
                        Ok(_) | Err(StoreError::NotFound(_)) => None,
                        Err(error) => return Err(error.into()),
                    },
                    None => None,
                };
                Some(CheckoutView {
                    node: node.clone(),
                    cluster_id: cluster_name.as_ref().and(cluster_id),
                    cluster_name,
                    node_number,
                    since_ms: host.checked_out_at_ms,
                })
            }
        };
        let host_key_fingerprint = HostKey::from_openssh(&host.host_key)
            .map(|key| key.fingerprint())
            .unwrap_or_default();
        Ok(PoolHostView {
            state: if checked_out.is_some() {
                PoolHostState::CheckedOut
            } else {
                PoolHostState::Free
            },
            checked_out,
            id: host.id,
            tenant_id: host.tenant_id,
            name: host.name,
            host: host.host,
            port: host.port,
            user: host.user,
            host_key: host.host_key,
            host_key_fingerprint,
            client_public_key: host.client_public_key,
            created_at_ms: host.created_at_ms,
            updated_at_ms: host.updated_at_ms,
        })
    }

    /// The pool hosts of the caller's tenant; a superadmin's list holds every tenant's.
    pub async fn list_pool_hosts(
        &self,
        caller: &Caller,
        page: PageRequest,
    ) -> Result<Page<PoolHostView>, ServiceError> {
        let tenant = caller.administered_scope()?;
        let (hosts, total) = self.store.pool_hosts_window(tenant, page.window()?).await?;
        let mut views = Vec::with_capacity(hosts.len());
        for host in hosts {
            views.push(self.pool_host_view(host).await?);
        }
        Ok(page.of(views, total))
    }

    pub async fn pool_host(&self, caller: &Caller, id: &str) -> Result<PoolHostView, ServiceError> {
        let host = self.administered_pool_host(caller, id).await?;
        self.pool_host_view(host).await
    }

    /// Registers a host and makes its client key pair; the view carries the public key
    /// the admin authorizes on the host.
    pub async fn register_pool_host(
        &self,
        caller: &Caller,
        request: &PoolHostRequest,
    ) -> Result<PoolHostView, ServiceError> {
        caller.require_tenant_admin(caller.tenant_id())?;
        let tenant_id = match &request.tenant {
            None => caller.tenant_id().to_owned(),
            Some(name) => {
                let not_found = || ServiceError::NotFound(format!("tenant {name:?}"));
                let tenant = self
                    .store
                    .tenant_by_name(name)
                    .await
                    .map_err(|_| not_found())?;
                if !caller.principal.can_administer_tenant(&tenant.id) {
                    return Err(not_found());
                }
                tenant.id
            }
        };
        let mut problems = Vec::new();
        let name = request.name.trim();
        let address = request.host.trim();
        let user = request.user.trim();
        check_name(name, &mut problems);
        check_host(address, &mut problems);
        let port = check_port(request.port, &mut problems);
        check_user(user, &mut problems);
        let host_key = check_host_key(&request.host_key, &mut problems);
        let Some(host_key) = host_key.filter(|_| problems.is_empty()) else {
            return Err(ServiceError::invalid_fields("pool host", problems));
        };
        let pair = ClientKeyPair::generate(&format!("corral-pool-{name}"))
            .map_err(ServiceError::internal)?;
        let now = now_ms();
        let host = PoolHost {
            id: uuid::Uuid::new_v4().to_string(),
            tenant_id,
            name: name.to_owned(),
            host: address.to_owned(),
            port,
            user: user.to_owned(),
            host_key: host_key.to_openssh(),
            client_public_key: pair.public_openssh,
            checked_out_node: None,
            checked_out_at_ms: None,
            created_at_ms: now,
            updated_at_ms: now,
        };
        self.store
            .insert_pool_host(&host, &pair.private_openssh)
            .await?;
        self.audit(
            caller,
            AuditRecord {
                after: Some(audit_body(&host)),
                ..AuditRecord::new(
                    &host.tenant_id,
                    AuditAction::PoolHostCreate,
                    "pool_host",
                    &host.name,
                )
            },
        )
        .await;
        self.pool_host_view(host).await
    }

    /// Changes a host's name, address, user or host key. A lent host keeps how it is
    /// reached until its node is deleted: its node pinned that.
    pub async fn update_pool_host(
        &self,
        caller: &Caller,
        id: &str,
        update: &PoolHostUpdate,
    ) -> Result<PoolHostView, ServiceError> {
        let before = self.administered_pool_host(caller, id).await?;
        let mut problems = Vec::new();
        let mut host = before.clone();
        if let Some(name) = &update.name {
            host.name = name.trim().to_owned();
            check_name(&host.name, &mut problems);
        }
        if let Some(address) = &update.host {
            host.host = address.trim().to_owned();
            check_host(&host.host, &mut problems);
        }
        if let Some(port) = update.port {
            host.port = check_port(port, &mut problems);
        }
        if let Some(user) = &update.user {
            host.user = user.trim().to_owned();
            check_user(&host.user, &mut problems);
        }
        if let Some(text) = &update.host_key {
            if let Some(key) = check_host_key(text, &mut problems) {
                host.host_key = key.to_openssh();
            }
        }
        if !problems.is_empty() {
            return Err(ServiceError::invalid_fields("pool host", problems));
        }
        let reached_differently = (&host.host, host.port, &host.user, &host.host_key)
            != (&before.host, before.port, &before.user, &before.host_key);
        if reached_differently {
            if let Some(node) = &before.checked_out_node {
                return Err(ServiceError::Conflict(format!(
                    "pool host {:?} is checked out to {}; its address, user and host key \
                     can change once that node is deleted",
                    before.name,
                    self.describe_node(node, &before.tenant_id).await?
                )));
            }
        }
        host.updated_at_ms = now_ms();
        self.store.update_pool_host(&host).await?;
        self.audit(
            caller,
            AuditRecord {
                before: Some(audit_body(&before)),
                after: Some(audit_body(&host)),
                ..AuditRecord::new(
                    &host.tenant_id,
                    AuditAction::PoolHostUpdate,
                    "pool_host",
                    &host.name,
                )
            },
        )
        .await;
        let saved = self.store.pool_host(id).await?;
        self.pool_host_view(saved).await
    }

    /// Removes a host that no node holds; a lent host is refused, naming its node.
    pub async fn remove_pool_host(&self, caller: &Caller, id: &str) -> Result<(), ServiceError> {
        let host = self.administered_pool_host(caller, id).await?;
        if !self.store.delete_free_pool_host(&host.id).await? {
            // Lent out between the read and the delete, or already gone.
            let now = self.store.pool_host(&host.id).await?;
            let node = now.checked_out_node.unwrap_or_default();
            return Err(ServiceError::Conflict(format!(
                "pool host {:?} is checked out to {}; delete that cluster (or its node) first",
                host.name,
                self.describe_node(&node, &host.tenant_id).await?
            )));
        }
        self.audit(
            caller,
            AuditRecord {
                before: Some(audit_body(&host)),
                ..AuditRecord::new(
                    &host.tenant_id,
                    AuditAction::PoolHostDelete,
                    "pool_host",
                    &host.name,
                )
            },
        )
        .await;
        Ok(())
    }

    /// "node 3 of cluster shop (<node id>)", or the bare node id when its cluster is gone.
    async fn describe_node(&self, node: &str, tenant_id: &str) -> Result<String, ServiceError> {
        if let Some((cluster_id, number)) = split_node_id(node) {
            match self.store.cluster(cluster_id).await {
                Ok(cluster) if cluster.tenant_id == tenant_id => {
                    return Ok(format!(
                        "node {number} of cluster {} (node id {node})",
                        cluster.name
                    ))
                }
                Ok(_) | Err(StoreError::NotFound(_)) => {}
                Err(error) => return Err(error.into()),
            }
        }
        Ok(format!("node {node}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ids_split_at_the_last_dash() {
        assert_eq!(
            split_node_id("9b2f0c1e-8d4b-4c47-9f7e-3a1d2c3b4a5f-12"),
            Some(("9b2f0c1e-8d4b-4c47-9f7e-3a1d2c3b4a5f", 12))
        );
        assert_eq!(split_node_id("nodash"), None);
    }

    #[test]
    fn a_keyscan_line_is_a_host_key() {
        let mut problems = Vec::new();
        let key =
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMjL5g2tLCXY/mxtwGZ1QuYVzyZ8Z7reMrGN53ioWB2o";
        assert!(check_host_key(&format!("10.0.0.1 {key}"), &mut problems).is_some());
        assert!(check_host_key("ssh-ed25519 AAAAnot", &mut problems).is_none());
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].path, "host_key");
    }
}
