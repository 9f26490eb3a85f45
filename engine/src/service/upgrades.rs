//! How far a cluster's catalog snapshot is behind the tenant's catalog, and an
//! upgrade's preview, as users see them (`ClusterView::catalog_behind`,
//! `PlanView::upgrade`).

use api_types::{
    CatalogChange, DefinitionChange, DefinitionDiff, ServiceUpgradeView, UpgradePlanView,
    UpgradeRun,
};
use domain::catalog::coopr::import_bundle;
use domain::catalog::Catalog;
use domain::upgrade::{DriftKind, EntityDrift, ServiceUpgrade};

use super::{ClusterView, Service, ServiceError};
use crate::operations::{catalog_behind, ClusterState, UpgradePreview};
use crate::store::clusters::Cluster;
use crate::store::StoreError;

const TEMPLATES: &str = "clustertemplates";

/// What of `current` the cluster's snapshot is behind; nothing for a deleted cluster
/// or an unreadable snapshot (its operations say what is wrong with it).
pub(super) fn behind(cluster: &Cluster, current: &Catalog) -> Vec<CatalogChange> {
    if cluster.state == ClusterState::Deleted {
        return Vec::new();
    }
    let Ok(snapshot) = import_bundle(&cluster.catalog_json) else {
        return Vec::new();
    };
    catalog_behind(cluster, &snapshot, current)
        .iter()
        .map(|entity| CatalogChange {
            kind: entity.kind.key().to_owned(),
            name: entity.name.clone(),
            change: definition_change(entity.drift),
        })
        .collect()
}

impl Service {
    /// Sets what the cluster is behind, and the template's current revision when it
    /// is behind at all.
    pub(super) async fn note_catalog_behind(
        &self,
        tenant_id: &str,
        view: &mut ClusterView,
        behind: Vec<CatalogChange>,
    ) -> Result<(), ServiceError> {
        view.template_current_version = if behind.is_empty() {
            None
        } else {
            match self
                .store
                .catalog_entity(tenant_id, TEMPLATES, &view.template)
                .await
            {
                Ok(revision) => Some(revision.version),
                Err(StoreError::NotFound(_)) => None,
                Err(error) => return Err(error.into()),
            }
        };
        view.catalog_behind = behind;
        Ok(())
    }
}

pub(super) fn upgrade_plan_view(upgrade: &UpgradePreview) -> UpgradePlanView {
    UpgradePlanView {
        changes: upgrade.drift.iter().map(definition_diff).collect(),
        services: upgrade
            .steps
            .services
            .iter()
            .map(|(service, runs)| ServiceUpgradeView {
                service: service.to_string(),
                runs: match runs {
                    ServiceUpgrade::Restart => UpgradeRun::Restart,
                    ServiceUpgrade::Reconfigure => UpgradeRun::Reconfigure,
                    ServiceUpgrade::Reinstall => UpgradeRun::Reinstall,
                },
            })
            .collect(),
        reconfigure: upgrade
            .steps
            .reconfigure
            .iter()
            .map(ToString::to_string)
            .collect(),
        batches: upgrade.batches.clone(),
    }
}

fn definition_diff(entity: &EntityDrift) -> DefinitionDiff {
    DefinitionDiff {
        kind: entity.kind.key().to_owned(),
        name: entity.name.clone(),
        change: definition_change(entity.drift),
        before: entity.before.clone(),
        after: entity.after.clone(),
    }
}

fn definition_change(drift: DriftKind) -> DefinitionChange {
    match drift {
        DriftKind::Changed => DefinitionChange::Changed,
        DriftKind::Removed => DefinitionChange::Removed,
    }
}
