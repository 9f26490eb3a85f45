//! The wire contract's views of stored rows ([`api_types`]): no secrets (no password
//! hashes, no token secrets, no node keys), JSON columns parsed, and a column that
//! does not parse a corrupt row, never a silent `null`. Here, beside the rows, because
//! a `From` between two other crates' types may only live in one of them.

use api_types::{
    AuditView, ClusterView, LayoutView, NodeView, ResourceView, TenantView, TokenView, UserView,
};
use serde_json::Value;

use crate::audit::StoredAuditEntry;
use crate::clusters::nodes::Node;
use crate::clusters::Cluster;
use crate::resource_types::ResourceVersion;
use crate::tenants::Tenant;
use crate::tokens::ApiToken;
use crate::users::User;
use crate::StoreError;

/// A JSON column of `table` as a value; text that is not JSON is a corrupt row, never
/// a silent `null` in a view.
fn parse_json(raw: &str, table: &'static str, column: &str) -> Result<Value, StoreError> {
    serde_json::from_str(raw).map_err(|error| StoreError::CorruptRow {
        table,
        reason: format!("{column} is not JSON: {error}"),
    })
}

impl From<Tenant> for TenantView {
    fn from(tenant: Tenant) -> Self {
        let provider_types = tenant.provider_types();
        Self {
            id: tenant.id,
            name: tenant.name,
            max_clusters: tenant.max_clusters,
            max_nodes: tenant.max_nodes,
            created_at_ms: tenant.created_at_ms,
            local_nodes: provider_types
                .iter()
                .any(|providertype| providertype == domain::catalog::LOCAL_PROVIDER),
            provider_types,
            dedicated_workers: tenant.dedicated_workers,
            node_shell: tenant.node_shell,
        }
    }
}

impl From<User> for UserView {
    fn from(user: User) -> Self {
        Self {
            id: user.id,
            username: user.username,
            tenant_id: user.tenant_id,
            role: user.role,
            created_at_ms: user.created_at_ms,
        }
    }
}

impl From<ApiToken> for TokenView {
    fn from(token: ApiToken) -> Self {
        Self {
            id: token.id,
            name: token.name,
            created_at_ms: token.created_at_ms,
            last_used_at_ms: token.last_used_at_ms,
            expires_at_ms: token.expires_at_ms,
            revoked_at_ms: token.revoked_at_ms,
            scope: token.scope,
            renews_on_use: token.renew_ms.is_some(),
        }
    }
}

/// The cluster as stored; the owner's name and the lease's limits are filled in by
/// the service calls that know them (the engine's `Service::cluster`).
impl TryFrom<Cluster> for ClusterView {
    type Error = StoreError;

    fn try_from(cluster: Cluster) -> Result<Self, StoreError> {
        // Read as the wire's layout straight from the column, so the view carries
        // exactly the stored JSON.
        let layout: LayoutView =
            serde_json::from_str(&cluster.layout_json).map_err(|error| StoreError::CorruptRow {
                table: "clusters",
                reason: format!("layout_json is not a layout: {error}"),
            })?;
        let size = layout.size();
        Ok(Self {
            id: cluster.id,
            name: cluster.name,
            state: cluster.state,
            template: cluster.template_name,
            template_version: cluster.template_version,
            provider: cluster.provider,
            owner_id: cluster.owner_id,
            owner: None,
            size,
            layout,
            config: parse_json(&cluster.config_json, "clusters", "config_json")?,
            lease_expires_ms: cluster.lease_expires_ms,
            lease_next_end_ms: None,
            lease_latest_end_ms: None,
            lease_deletes_at_ms: cluster.lease_deletes_at_ms,
            created_at_ms: cluster.created_at_ms,
            updated_at_ms: cluster.updated_at_ms,
            catalog_behind: Vec::new(),
            template_current_version: None,
            cost: None,
        })
    }
}

impl TryFrom<Node> for NodeView {
    type Error = StoreError;

    fn try_from(node: Node) -> Result<Self, StoreError> {
        let record = node
            .provider_json
            .as_deref()
            .map(|json| parse_json(json, "nodes", "provider_json"))
            .transpose()?;
        // The node's own address where the provider records one apart from where SSH
        // reaches it (a container: SSH on 127.0.0.1, services on its network address).
        let address = record.as_ref().and_then(|record| {
            ["address", "host"]
                .into_iter()
                .find_map(|key| record.get(key).and_then(Value::as_str))
                .map(str::to_owned)
        });
        let services =
            serde_json::from_value(parse_json(&node.services_json, "nodes", "services_json")?)
                .map_err(|error| StoreError::CorruptRow {
                    table: "nodes",
                    reason: format!("services_json is not a list of names: {error}"),
                })?;
        Ok(Self {
            id: node.id,
            number: node.number,
            hostname: node.hostname,
            address,
            hardwaretype: node.hardwaretype,
            imagetype: node.imagetype,
            services,
            state: node.state,
            health: Vec::new(),
            machine: node
                .presence
                .zip(node.presence_since_ms)
                .map(|(presence, since_ms)| api_types::MachineView { presence, since_ms }),
        })
    }
}

impl From<ResourceVersion> for ResourceView {
    fn from(resource: ResourceVersion) -> Self {
        Self {
            kind: resource.kind.as_str().to_owned(),
            name: resource.name,
            version: resource.version,
            sha256: resource.sha256,
            size_bytes: resource.size_bytes,
            staged: resource.staged,
            created_at_ms: resource.created_at_ms,
        }
    }
}

impl TryFrom<StoredAuditEntry> for AuditView {
    type Error = StoreError;

    fn try_from(entry: StoredAuditEntry) -> Result<Self, StoreError> {
        // Bodies are JSON; entries written before that rule (pool hosts' plain text)
        // stay readable as strings: the log is history and is never rewritten.
        let body = |text: Option<String>| {
            text.map(|text| serde_json::from_str(&text).unwrap_or(Value::String(text)))
        };
        Ok(Self {
            id: entry.id,
            tenant_id: entry.tenant_id,
            actor: entry.actor_name,
            action: entry.action,
            target_kind: entry.target_kind,
            target: entry.target,
            address: entry.address,
            before: body(entry.before_json),
            after: body(entry.after_json),
            at_ms: entry.at_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(layout_json: &str) -> Cluster {
        crate::testing::stored_cluster(layout_json, "{}")
    }

    const TWO_NODES: &str = r#"{"template":"web","nodes":[{"number":1000,"hardwaretype":"small","imagetype":"debian","services":["base"]},{"number":1001,"hardwaretype":"small","imagetype":"debian","services":["base","nginx"]}]}"#;

    #[test]
    fn a_stored_column_that_is_not_json_is_a_corrupt_row_not_a_null() {
        let view = ClusterView::try_from(cluster(TWO_NODES)).expect("a view");
        assert_eq!(view.size, 2);
        for corrupt in ["{\"nodes\": [", r#"{"nodes": [{}, {}]}"#] {
            match ClusterView::try_from(cluster(corrupt)) {
                Err(StoreError::CorruptRow { table, reason }) => {
                    assert_eq!(table, "clusters");
                    assert!(reason.contains("layout_json"), "{reason}");
                }
                other => panic!("expected a corrupt row, got {other:?}"),
            }
        }
    }
}
