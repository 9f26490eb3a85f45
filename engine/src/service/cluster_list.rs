//! The cluster list (`GET /api/v1/clusters`, `corral cluster list`, the portal's
//! `/clusters`): a page of the caller's tenant's live clusters, expiring first, read in
//! SQL by cursor ([`crate::store::clusters::listing`]), with the whole list's count and
//! cost from aggregates, so a tenant with thousands of clusters costs a page's worth.

use api_types::{ClusterCost, ClusterList, ClusterState};
use domain::cost::units;
use serde::Deserialize;
use utoipa::IntoParams;

use super::clusters::field_problem;
use super::{Caller, Service, ServiceError, MAX_PAGE};
use crate::store::clusters::listing::{ClusterCursor, ClusterFilter};
use crate::store::now_ms;

const DEFAULT_LIMIT: u32 = 50;

/// What a list of clusters asks for: a page (by `cursor`, or by `offset` for older
/// clients) and filters.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ClusterListRequest {
    /// Clusters to return, 1-500 (default 50).
    #[serde(default = "default_limit")]
    #[param(minimum = 1, maximum = 500)]
    pub limit: u32,
    /// The `next` of the page before: this page starts right after that one's last
    /// cluster (stable while clusters are added). Absent: the first page.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Clusters to skip (default 0); only without `cursor`.
    #[serde(default)]
    pub offset: u32,
    /// Only clusters in this state.
    #[serde(default)]
    pub state: Option<ClusterState>,
    /// Only clusters of this template.
    #[serde(default)]
    pub template: Option<String>,
    /// Only clusters whose name contains this, in any case.
    #[serde(default)]
    pub q: Option<String>,
    /// Only the caller's own clusters.
    #[serde(default)]
    pub mine: bool,
}

fn default_limit() -> u32 {
    DEFAULT_LIMIT
}

impl Default for ClusterListRequest {
    fn default() -> Self {
        Self {
            limit: DEFAULT_LIMIT,
            cursor: None,
            offset: 0,
            state: None,
            template: None,
            q: None,
            mine: false,
        }
    }
}

/// `Some` of a value that says something (a blank filter keeps every cluster).
fn given(value: &Option<String>) -> Option<String> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|value| !value.is_empty())
        .map(str::to_owned)
}

impl ClusterListRequest {
    /// The cursor to go on after, checked (the limit and offset too).
    fn checked_cursor(&self) -> Result<Option<ClusterCursor>, ServiceError> {
        if self.limit == 0 || self.limit > MAX_PAGE {
            return Err(field_problem(
                "limit",
                format!("{} is out of range (1 to {MAX_PAGE})", self.limit),
            ));
        }
        let Some(text) = given(&self.cursor) else {
            return Ok(None);
        };
        let cursor = ClusterCursor::decode(&text).ok_or_else(|| {
            field_problem(
                "cursor",
                "is not a cursor this list gave out (pass a page's next as it is)",
            )
        })?;
        if self.offset != 0 {
            return Err(field_problem(
                "offset",
                "goes with no cursor: a cursor already says where the page starts",
            ));
        }
        Ok(Some(cursor))
    }
}

impl Service {
    /// A page of the caller's tenant's live clusters (a superadmin's own tenant too;
    /// other tenants are not mixed in, whatever the cursor says: it only positions).
    pub async fn list_clusters(
        &self,
        caller: &Caller,
        request: &ClusterListRequest,
    ) -> Result<ClusterList, ServiceError> {
        let after = request.checked_cursor()?;
        let tenant_id = caller.tenant_id();
        let filter = ClusterFilter {
            tenant_id: tenant_id.to_owned(),
            state: request.state,
            template: given(&request.template),
            name_contains: given(&request.q),
            owner_id: request.mine.then(|| caller.principal.user_id.clone()),
        };
        let now = now_ms();
        let page = self
            .store
            .cluster_page(&filter, after.as_ref(), request.offset, request.limit)
            .await?;
        let totals = self.store.cluster_totals(&filter, now).await?;
        let facets = self.store.cluster_facets(tenant_id).await?;

        let ids: Vec<&str> = page
            .clusters
            .iter()
            .map(|cluster| cluster.id.as_str())
            .collect();
        let mut intervals = self.store.clusters_cost_intervals(&ids).await?;
        let usernames = self.owner_names(tenant_id, &page.clusters).await?;
        let current = self.catalogs.current(&self.store, tenant_id).await?;
        let mut items = Vec::with_capacity(page.clusters.len());
        for cluster in page.clusters {
            let behind = super::upgrades::behind(&self.catalogs, &cluster, &current);
            let cost = intervals
                .remove(&cluster.id)
                .and_then(|intervals| super::cost::cluster_cost(&intervals, now));
            let mut view = super::clusters::cluster_view(&self.catalogs, cluster, &usernames, now)?;
            super::upgrades::note_catalog_behind(&mut view, behind, &current);
            view.cost = cost;
            items.push(view);
        }

        let mut templates: Vec<String> = facets
            .iter()
            .map(|(template, _)| template.clone())
            .collect();
        templates.dedup();
        let mut states: Vec<ClusterState> = facets.iter().map(|(_, state)| *state).collect();
        states.sort();
        states.dedup();
        Ok(ClusterList {
            items,
            total: totals.clusters,
            offset: request.offset,
            limit: request.limit,
            next: page.next.map(|cursor| cursor.encode()),
            cost: (totals.cost_intervals > 0).then(|| ClusterCost {
                per_hour: units(totals.per_hour),
                so_far: units(totals.so_far),
                this_month: units(totals.this_month),
                priced: true,
            }),
            templates,
            states,
        })
    }

    /// How many live clusters the caller's tenant has and their layouts' nodes (for
    /// its quotas): aggregates, not the rows.
    pub async fn cluster_usage(&self, caller: &Caller) -> Result<(u64, u64), ServiceError> {
        let counts = self.store.cluster_state_counts(caller.tenant_id()).await?;
        Ok(counts.iter().fold((0, 0), |(clusters, nodes), count| {
            (clusters + count.clusters, nodes + count.nodes)
        }))
    }
}
