//! Rolling a template's new catalog revision out across its clusters (issue 40): the
//! owner's pin, which keeps a cluster on its revision while a rollout passes it over,
//! and starting and reading rollouts. The rollout itself is moved on by
//! [`crate::rollout`] from the worker pool's monitor loop.

use api_types::{
    AuditAction, ClusterChangeRequest, RolloutCandidate, RolloutClusterState, RolloutClusterView,
    RolloutRequest, RolloutStarted, RolloutState, RolloutTemplate, RolloutView,
};

use super::{AuditRecord, Caller, ClusterView, Service, ServiceError};
use crate::store::rollouts::Rollout;
use crate::store::{now_ms, StoreError};

/// The catalog kind of cluster templates.
const TEMPLATES: &str = "clustertemplates";

impl Service {
    /// Pins the cluster to its catalog revision, or unpins it: the owner's or a tenant
    /// user's choice, like every change to the tenant's clusters; audited.
    pub async fn set_pinned(
        &self,
        caller: &Caller,
        id: &str,
        choice: &api_types::PinChoice,
    ) -> Result<api_types::PinChoice, ServiceError> {
        let cluster = self.live_cluster(caller, id).await?;
        let before = self.store.cluster_pinned(&cluster.id).await?;
        self.store
            .set_cluster_pinned(&cluster.id, choice.pinned)
            .await?;
        let word = |pinned: bool| if pinned { "pinned" } else { "unpinned" }.to_owned();
        let mut record = AuditRecord::new(
            &cluster.tenant_id,
            AuditAction::ClusterPin,
            "cluster",
            &cluster.name,
        );
        record.before = Some(word(before));
        record.after = Some(word(choice.pinned));
        self.audit(caller, record).await;
        Ok(api_types::PinChoice {
            pinned: self.store.cluster_pinned(&cluster.id).await?,
        })
    }
}

impl Service {
    /// Lists the clusters of `request.template` that are behind its current revision,
    /// each with its plan summary, and (unless a dry run) starts a rollout upgrading
    /// them: the record and all its cluster rows in one transaction, pinned clusters
    /// listed as passed over. Tenant admins only.
    pub async fn start_rollout(
        &self,
        caller: &Caller,
        request: &RolloutRequest,
    ) -> Result<RolloutStarted, ServiceError> {
        let tenant_id = caller.tenant_id().to_owned();
        caller.require_tenant_admin(&tenant_id)?;
        if request.max_parallel == 0 {
            return Err(ServiceError::invalid(
                "max_parallel must be at least 1 (clusters upgraded at once)",
            ));
        }
        let revision = match self
            .store
            .catalog_entity(&tenant_id, TEMPLATES, &request.template)
            .await
        {
            Ok(revision) => revision.version,
            Err(StoreError::NotFound(_)) => {
                return Err(ServiceError::NotFound(format!(
                    "template {:?} (no such template in your catalog)",
                    request.template
                )))
            }
            Err(error) => return Err(error.into()),
        };
        let current = self.catalogs.current(&self.store, &tenant_id).await?;
        let usernames = self.usernames_of(&tenant_id).await?;
        let mut candidates = Vec::new();
        for cluster in self.store.list_clusters(&tenant_id).await? {
            if cluster.template_name != request.template || !cluster.state.is_live() {
                continue;
            }
            let behind = super::upgrades::behind(&self.catalogs, &cluster, &current);
            if behind.is_empty() {
                continue;
            }
            let pinned = self.store.cluster_pinned(&cluster.id).await?;
            let (cluster_id, cluster_name) = (cluster.id.clone(), cluster.name.clone());
            let from_revision = cluster.template_version;
            let owner = cluster
                .owner_id
                .as_ref()
                .and_then(|id| usernames.get(id).cloned());
            let mut view = ClusterView::try_from(cluster)?;
            super::upgrades::note_catalog_behind(&mut view, behind, &current);
            let mut summary = view.catalog_behind_summary().unwrap_or_default();
            let upgrade = ClusterChangeRequest::Upgrade {
                max_unavailable: None,
            };
            match self.plan_change(caller, &cluster_id, &upgrade).await {
                Ok(plan) => {
                    let batches = plan.upgrade.map_or(0, |upgrade| upgrade.batches.len());
                    summary.push_str(&format!("; {} task(s) in {batches} batch(es)", plan.tasks));
                }
                Err(ServiceError::Internal { cause }) => {
                    return Err(ServiceError::Internal { cause })
                }
                Err(refused) => summary.push_str(&format!("; cannot plan: {refused}")),
            }
            candidates.push(RolloutCandidate {
                cluster_id,
                cluster_name,
                owner,
                from_revision,
                pinned,
                summary,
            });
        }
        let mut started = RolloutStarted {
            template: request.template.clone(),
            revision: Some(revision),
            clusters: candidates,
            rollout: None,
        };
        if request.dry_run {
            return Ok(started);
        }
        if started.clusters.is_empty() {
            return Err(ServiceError::Conflict(format!(
                "no cluster of template {:?} is behind its current revision r{revision}: \
                 nothing to roll out",
                request.template
            )));
        }
        let busy = self
            .store
            .list_rollouts(&tenant_id)
            .await?
            .into_iter()
            .find(|rollout| rollout.template == request.template && rollout.state.is_active());
        if let Some(busy) = busy {
            return Err(ServiceError::Conflict(format!(
                "rollout {} of template {:?} is still {}: wait for it to end",
                busy.id, request.template, busy.state
            )));
        }
        let now = now_ms();
        let rollout = Rollout {
            id: uuid::Uuid::new_v4().to_string(),
            tenant_id: tenant_id.clone(),
            template: request.template.clone(),
            max_parallel: i64::from(request.max_parallel),
            state: RolloutState::Running,
            reason: None,
            created_by: caller.principal.user_id.clone(),
            created_at_ms: now,
            updated_at_ms: now,
        };
        let rows: Vec<(String, RolloutClusterState)> = started
            .clusters
            .iter()
            .map(|candidate| {
                let state = if candidate.pinned {
                    RolloutClusterState::SkippedPinned
                } else {
                    RolloutClusterState::Pending
                };
                (candidate.cluster_id.clone(), state)
            })
            .collect();
        self.store.create_rollout(&rollout, &rows).await?;
        let mut record = AuditRecord::new(
            &tenant_id,
            AuditAction::CatalogRollout,
            "template",
            &request.template,
        );
        record.after = Some(format!(
            "r{revision}, {} cluster(s), {} at once",
            rows.len(),
            request.max_parallel
        ));
        self.audit(caller, record).await;
        started.rollout = Some(self.rollout(caller, &rollout.id).await?);
        Ok(started)
    }

    /// Each template of the tenant's catalog with its live clusters and how many of
    /// them are behind its current revision: what a rollout form offers. Those with
    /// clusters behind come first, then by name. Tenant admins only.
    pub async fn rollout_templates(
        &self,
        caller: &Caller,
    ) -> Result<Vec<RolloutTemplate>, ServiceError> {
        let tenant_id = caller.tenant_id().to_owned();
        caller.require_tenant_admin(&tenant_id)?;
        let current = self.catalogs.current(&self.store, &tenant_id).await?;
        // The memo's revisions are the current ones with a body, as read with it.
        let mut templates: Vec<RolloutTemplate> = current
            .revisions_of(TEMPLATES)
            .map(|(name, version)| RolloutTemplate {
                template: name.to_owned(),
                revision: version,
                clusters: 0,
                behind: 0,
            })
            .collect();
        for cluster in self.store.list_clusters(&tenant_id).await? {
            if !cluster.state.is_live() {
                continue;
            }
            let behind = !super::upgrades::behind(&self.catalogs, &cluster, &current).is_empty();
            if let Some(template) = templates
                .iter_mut()
                .find(|template| template.template == cluster.template_name)
            {
                template.clusters += 1;
                template.behind += u32::from(behind);
            }
        }
        templates.sort_by(|a, b| {
            (b.behind > 0)
                .cmp(&(a.behind > 0))
                .then_with(|| a.template.cmp(&b.template))
        });
        Ok(templates)
    }

    /// The tenant's rollouts, newest first, each with its clusters.
    pub async fn rollouts(&self, caller: &Caller) -> Result<Vec<RolloutView>, ServiceError> {
        let mut views = Vec::new();
        for rollout in self.store.list_rollouts(caller.tenant_id()).await? {
            views.push(self.rollout_view(rollout).await?);
        }
        Ok(views)
    }

    /// One rollout of the tenant: its record, and each cluster's outcome and job.
    pub async fn rollout(&self, caller: &Caller, id: &str) -> Result<RolloutView, ServiceError> {
        let rollout = self.store.rollout(caller.tenant_id(), id).await?;
        self.rollout_view(rollout).await
    }

    async fn rollout_view(&self, rollout: Rollout) -> Result<RolloutView, ServiceError> {
        let clusters = self
            .store
            .rollout_clusters(&rollout.id)
            .await?
            .into_iter()
            .map(|row| RolloutClusterView {
                cluster_id: row.cluster_id,
                cluster_name: row.cluster_name,
                position: u32::try_from(row.position).unwrap_or(u32::MAX),
                state: row.state,
                job_id: row.job_id,
                note: row.note,
                started_at_ms: row.started_at_ms,
                updated_at_ms: row.updated_at_ms,
            })
            .collect();
        let created_by = match self.store.user(&rollout.created_by).await {
            Ok(user) => user.username,
            Err(StoreError::NotFound(_)) => rollout.created_by.clone(),
            Err(error) => return Err(error.into()),
        };
        Ok(RolloutView {
            id: rollout.id,
            template: rollout.template,
            max_parallel: u32::try_from(rollout.max_parallel).unwrap_or(u32::MAX),
            state: rollout.state,
            reason: rollout.reason,
            created_by,
            created_at_ms: rollout.created_at_ms,
            updated_at_ms: rollout.updated_at_ms,
            clusters,
        })
    }
}
