//! The admin overview of the caller's tenant (admins only): clusters and nodes per
//! state, the catalog's size, users and quotas, and what the workers are doing (jobs
//! per state, tasks running now and the workers running them, the latest failed tasks).

use std::collections::BTreeMap;

use api_types::{ClusterRef, ClusterState, OverviewView};
use domain::catalog::EntityKind;

use super::{ActivityView, Caller, Service, ServiceError};

/// The busy and the failed clusters the overview names, at most (by name); the counts
/// per state are complete.
const NAMED_AT_MOST: u32 = 100;

impl Service {
    pub async fn overview(&self, caller: &Caller) -> Result<OverviewView, ServiceError> {
        caller.require_tenant_admin(caller.tenant_id())?;
        let tenant = self.tenant(caller, caller.tenant_id()).await?;
        // Aggregates and the few clusters named, never every row: a tenant can have
        // thousands of clusters.
        let counts = self.store.cluster_state_counts(caller.tenant_id()).await?;
        let mut by_state: BTreeMap<ClusterState, u64> = ClusterState::ALL
            .iter()
            .filter(|state| state.is_live())
            .map(|state| (*state, 0))
            .collect();
        for count in &counts {
            *by_state.entry(count.state).or_default() += count.clusters;
        }
        let named = |states: Vec<ClusterState>| async move {
            let rows = self
                .store
                .clusters_in_states(caller.tenant_id(), &states, NAMED_AT_MOST)
                .await?;
            Ok::<_, ServiceError>(
                rows.into_iter()
                    .map(|(id, name, state)| ClusterRef { id, name, state })
                    .collect::<Vec<_>>(),
            )
        };
        let busy_states = ClusterState::ALL
            .iter()
            .copied()
            .filter(|state| state.is_busy())
            .collect();
        let busy = named(busy_states).await?;
        let failed = named(vec![ClusterState::Failed]).await?;
        let current = self
            .catalogs
            .current(&self.store, caller.tenant_id())
            .await?;
        let catalog = EntityKind::ALL
            .iter()
            .map(|kind| (kind.key().to_owned(), current.count(kind.key())))
            .collect();
        Ok(OverviewView {
            clusters_by_state: by_state.into_iter().collect(),
            nodes: counts.iter().map(|count| count.nodes).sum(),
            active_nodes: counts
                .iter()
                .filter(|count| count.state == ClusterState::Active)
                .map(|count| count.nodes)
                .sum(),
            catalog,
            users: self.store.count_tenant_users(caller.tenant_id()).await?,
            busy,
            failed,
            activity: self.activity(caller).await?,
            tenant,
        })
    }

    pub async fn activity(&self, caller: &Caller) -> Result<ActivityView, ServiceError> {
        caller.require_tenant_admin(caller.tenant_id())?;
        Ok(self.queue.tenant_activity(caller.tenant_id()).await?)
    }
}
