//! How far a cluster's catalog snapshot is behind the tenant's catalog, and an
//! upgrade's preview, as users see them (`ClusterView::catalog_behind`,
//! `PlanView::upgrade`).

use api_types::{
    CatalogChange, DefinitionChange, DefinitionDiff, ServiceUpgradeView, UpgradePlanView,
    UpgradeRun,
};
use domain::names::TemplateName;
use domain::upgrade::{DriftKind, EntityDrift, ServiceUpgrade};

use super::ClusterView;
use crate::catalog::memo::{CatalogMemo, CurrentCatalog};
use crate::operations::{ClusterState, UpgradePreview};
use crate::store::clusters::Cluster;

const TEMPLATES: &str = "clustertemplates";

/// What of `current` the cluster's snapshot is behind; nothing for a deleted cluster
/// or an unreadable snapshot (its operations say what is wrong with it).
pub(super) fn behind(
    memo: &CatalogMemo,
    cluster: &Cluster,
    current: &CurrentCatalog,
) -> Vec<CatalogChange> {
    if cluster.state == ClusterState::Deleted {
        return Vec::new();
    }
    let Ok(snapshot) = memo.snapshot(&cluster.catalog_json) else {
        return Vec::new();
    };
    let template = TemplateName::parse(cluster.template_name.clone()).ok();
    memo.behind(&snapshot, current, template.as_ref())
        .iter()
        .map(|entity| CatalogChange {
            kind: entity.kind.key().to_owned(),
            name: entity.name.clone(),
            change: definition_change(entity.drift),
        })
        .collect()
}

/// Sets on `view` what it is `behind`, and the template's current revision when it is
/// behind at all.
pub(super) fn note_catalog_behind(
    view: &mut ClusterView,
    behind: Vec<CatalogChange>,
    current: &CurrentCatalog,
) {
    view.template_current_version = if behind.is_empty() {
        None
    } else {
        current.revision(TEMPLATES, &view.template)
    };
    view.catalog_behind = behind;
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
