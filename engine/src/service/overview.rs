//! The admin overview of the caller's tenant (admins only): clusters and nodes per
//! state, the catalog's size, users and quotas, and what the workers are doing (jobs
//! per state, tasks running now and the workers running them, the latest failed tasks).

use std::collections::BTreeMap;

use api_types::{ClusterRef, ClusterState, OverviewView};
use domain::catalog::EntityKind;

use super::{ActivityView, Caller, Service, ServiceError};

impl Service {
    pub async fn overview(&self, caller: &Caller) -> Result<OverviewView, ServiceError> {
        caller.require_tenant_admin(caller.tenant_id())?;
        let tenant = self.tenant(caller, caller.tenant_id()).await?;
        let clusters: Vec<_> = self
            .store
            .list_clusters(caller.tenant_id())
            .await?
            .into_iter()
            .filter(|cluster| cluster.state.is_live())
            .map(super::ClusterView::try_from)
            .collect::<Result<_, _>>()?;
        let mut by_state: BTreeMap<ClusterState, u64> = ClusterState::ALL
            .iter()
            .filter(|state| state.is_live())
            .map(|state| (*state, 0))
            .collect();
        for cluster in &clusters {
            *by_state.entry(cluster.state).or_default() += 1;
        }
        let reference = |cluster: &super::ClusterView| ClusterRef {
            id: cluster.id.clone(),
            name: cluster.name.clone(),
            state: cluster.state,
        };
        let catalog_rows = self.store.current_catalog(caller.tenant_id()).await?;
        let catalog = EntityKind::ALL
            .iter()
            .map(|kind| {
                let count = catalog_rows
                    .iter()
                    .filter(|revision| revision.kind == kind.key())
                    .count();
                (kind.key().to_owned(), count as u64)
            })
            .collect();
        Ok(OverviewView {
            clusters_by_state: by_state.into_iter().collect(),
            nodes: clusters.iter().map(|cluster| cluster.size as u64).sum(),
            active_nodes: clusters
                .iter()
                .filter(|cluster| cluster.state == ClusterState::Active)
                .map(|cluster| cluster.size as u64)
                .sum(),
            catalog,
            users: self.usernames_of(caller.tenant_id()).await?.len() as u64,
            busy: clusters
                .iter()
                .filter(|cluster| cluster.state.is_busy())
                .map(reference)
                .collect(),
            failed: clusters
                .iter()
                .filter(|cluster| cluster.state == ClusterState::Failed)
                .map(reference)
                .collect(),
            activity: self.activity(caller).await?,
            tenant,
        })
    }

    pub async fn activity(&self, caller: &Caller) -> Result<ActivityView, ServiceError> {
        caller.require_tenant_admin(caller.tenant_id())?;
        Ok(crate::queue::tenant_activity(&self.store, caller.tenant_id()).await?)
    }
}
