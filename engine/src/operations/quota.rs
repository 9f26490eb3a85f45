//! Tenant quotas (most live clusters, most live nodes), checked inside the
//! transaction that grows the tenant, with the tenant's row locked, so two
//! concurrent creates cannot both slip under the limit; and the server's own size
//! limits ([`SizeLimits`]), which a create, a grow and their previews are held to
//! before anything is solved or planned.

use domain::layout::Layout;
use sqlx::{Any, Transaction};

use super::OperationError;
use crate::store::tenants::{live_cluster_footprints, lock_quotas, LockedQuotas};
use crate::store::{Backend, Store, StoreError};

fn layout_size(json: Option<&str>) -> u64 {
    json.and_then(|json| serde_json::from_str::<Layout>(json).ok())
        .map_or(0, |layout| layout.size() as u64)
}

/// Refuses growth by `new_clusters` clusters and `new_nodes` nodes past the tenant's
/// quotas. A cluster being built or grown counts at the size its job is heading for,
/// and never below the nodes that exist: a cancelled or failed create leaves its
/// made nodes running with nothing committed to the cluster's layout.
pub(crate) async fn check_growth(
    tx: &mut Transaction<'static, Any>,
    backend: Backend,
    tenant_id: &str,
    new_clusters: u64,
    new_nodes: u64,
) -> Result<(), OperationError> {
    let LockedQuotas {
        name,
        max_clusters,
        max_nodes,
    } = lock_quotas(tx, backend, tenant_id).await?;
    if max_clusters.is_none() && max_nodes.is_none() {
        return Ok(());
    }
    let clusters = live_cluster_footprints(tx, tenant_id).await?;
    if let Some(max) = max_clusters {
        let have = clusters.len() as u64;
        if new_clusters > 0 && have + new_clusters > max.max(0) as u64 {
            return Err(OperationError::QuotaExceeded(format!(
                "tenant {name} may have at most {max} cluster(s) and has {have}"
            )));
        }
    }
    if let Some(max) = max_nodes {
        let mut have = 0u64;
        for cluster in &clusters {
            have += layout_size(cluster.layout_json.as_deref())
                .max(layout_size(cluster.planned_layout_json.as_deref()))
                .max(u64::try_from(cluster.existing_nodes).unwrap_or(0));
        }
        if new_nodes > 0 && have + new_nodes > max.max(0) as u64 {
            return Err(OperationError::QuotaExceeded(format!(
                "tenant {name} may have at most {max} node(s): it has {have} and this needs \
                 {new_nodes} more"
            )));
        }
    }
    Ok(())
}

/// The same check without growing anything (for previews): a transaction that is
/// rolled back.
pub async fn check_quota(
    store: &Store,
    tenant_id: &str,
    new_clusters: u64,
    new_nodes: u64,
) -> Result<(), OperationError> {
    let mut tx = store.pool().begin().await.map_err(StoreError::from)?;
    let checked = check_growth(&mut tx, store.backend(), tenant_id, new_clusters, new_nodes).await;
    tx.rollback().await.map_err(StoreError::from)?;
    checked
}

/// The most nodes one cluster may have when the operator sets nothing.
pub const DEFAULT_MAX_CLUSTER_NODES: u32 = 1_000;

/// The node quota of a new tenant when the operator sets nothing.
pub const DEFAULT_TENANT_MAX_NODES: u32 = 100;

/// How big what this server plans may get, as the operator set it. A plan's
/// dependencies grow with the square of its nodes, and a preview plans exactly what a
/// create would: without a bound before planning, one dry run of a few thousand nodes
/// takes gigabytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeLimits {
    /// The most nodes one cluster may have, whatever its tenant's quota.
    pub max_cluster_nodes: u32,
    /// The node quota a tenant gets when whoever creates it names none.
    pub default_tenant_max_nodes: u32,
}

impl Default for SizeLimits {
    fn default() -> Self {
        Self {
            max_cluster_nodes: DEFAULT_MAX_CLUSTER_NODES,
            default_tenant_max_nodes: DEFAULT_TENANT_MAX_NODES,
        }
    }
}

impl SizeLimits {
    /// Why a cluster of `size` nodes cannot be planned on this server, if it cannot.
    pub fn refuse_size(&self, size: u64) -> Option<String> {
        let max = self.max_cluster_nodes;
        (size > u64::from(max)).then(|| {
            format!(
                "a cluster on this server may have at most {max} node(s) and this one would \
                 have {size} (the operator sets the limit with --max-cluster-nodes)"
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_past_the_servers_cap_are_refused_before_planning() {
        let limits = SizeLimits {
            max_cluster_nodes: 1_000,
            default_tenant_max_nodes: 100,
        };
        let cases: [(u64, bool); 5] = [
            (0, false),
            (1, false),
            (1_000, false),
            (1_001, true),
            (u64::from(u32::MAX) + 5, true),
        ];
        for (size, refused) in cases {
            let refusal = limits.refuse_size(size);
            assert_eq!(refusal.is_some(), refused, "size {size}: {refusal:?}");
            if let Some(message) = refusal {
                assert!(message.contains("at most 1000 node(s)"), "{message}");
                assert!(message.contains(&size.to_string()), "{message}");
            }
        }
    }
}
