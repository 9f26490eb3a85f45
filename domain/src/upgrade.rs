//! Moving a live cluster to the catalog's newer definitions.
//!
//! A cluster keeps the catalog snapshot it was built from. [`drift`] compares that
//! snapshot with the tenant's current catalog entity by entity (the cluster's
//! template, provider, hardware and image types, and services), and
//! [`service_upgrades`] decides what each changed service must run on its nodes:
//!
//! | what changed               | steps on the service's nodes                 |
//! |----------------------------|----------------------------------------------|
//! | `install`                  | stop (old definition), install, configure, start |
//! | `configure`                | stop (old definition), configure, start      |
//! | `start` or `stop`          | stop (old definition), start                 |
//! | anything else              | nothing: the new definition is recorded      |
//!
//! `initialize` runs once in a node's life and `remove` only when a service goes, so
//! their changes are recorded for later and run nothing now. Services that depend at
//! run time on a restarted service are configured again afterwards, so a load
//! balancer learns of restarted backends. The planner turns the result into batches
//! ([`crate::plan::PlanOperation::Upgrade`]).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::catalog::coopr::entity_to_value;
use crate::catalog::{Catalog, ClusterTemplate, EntityKind, Service, ServiceAction};
use crate::names::ServiceName;
use crate::plan::{ServiceGraph, ServiceNode};

/// How one entity of a cluster's snapshot differs from the current catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DriftKind {
    /// The current catalog has a different definition.
    Changed,
    /// The current catalog no longer has it.
    Removed,
}

/// One entity whose definition moved on since the cluster's snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityDrift {
    pub kind: EntityKind,
    pub name: String,
    pub drift: DriftKind,
    /// The snapshot's definition (Coopr JSON).
    pub before: Value,
    /// The current definition; `None` when removed.
    pub after: Option<Value>,
}

/// Every entity of `snapshot` the cluster uses whose current definition differs,
/// in kind order (providers, hardware, images, services, the template), then by name.
///
/// `current_template` is the current catalog's template resolved (extends and
/// includes merged), as the snapshot keeps it; `None` when the template is gone.
pub fn drift(
    snapshot: &Catalog,
    current: &Catalog,
    current_template: Option<&ClusterTemplate>,
) -> Vec<EntityDrift> {
    let mut out = Vec::new();
    let mut compare = |kind, name: &str, before: Value, after: Option<Value>| {
        let drift = match &after {
            None => DriftKind::Removed,
            Some(after) if *after != before => DriftKind::Changed,
            Some(_) => return,
        };
        out.push(EntityDrift {
            kind,
            name: name.to_owned(),
            drift,
            before,
            after,
        });
    };
    for (name, provider) in &snapshot.providers {
        let now = current.provider(name.as_str()).map(entity_to_value);
        compare(
            EntityKind::Provider,
            name.as_str(),
            entity_to_value(provider),
            now,
        );
    }
    for (name, hardware) in &snapshot.hardwaretypes {
        let now = current.hardwaretype(name.as_str()).map(entity_to_value);
        compare(
            EntityKind::HardwareType,
            name.as_str(),
            entity_to_value(hardware),
            now,
        );
    }
    for (name, image) in &snapshot.imagetypes {
        let now = current.imagetype(name.as_str()).map(entity_to_value);
        compare(
            EntityKind::ImageType,
            name.as_str(),
            entity_to_value(image),
            now,
        );
    }
    for (name, service) in &snapshot.services {
        let now = current.service(name.as_str()).map(entity_to_value);
        compare(
            EntityKind::Service,
            name.as_str(),
            entity_to_value(service),
            now,
        );
    }
    for (name, template) in &snapshot.clustertemplates {
        let now = current_template.map(entity_to_value);
        compare(
            EntityKind::ClusterTemplate,
            name.as_str(),
            entity_to_value(template),
            now,
        );
    }
    out
}

/// What an upgrade runs for one service on each node that has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServiceUpgrade {
    /// Stop, start.
    Restart,
    /// Stop, configure, start.
    Reconfigure,
    /// Stop, install, configure, start.
    Reinstall,
}

impl ServiceUpgrade {
    /// The steps, in order; the stop runs the old definition, the rest the new one.
    pub fn steps(self) -> &'static [ServiceAction] {
        use ServiceAction::{Configure, Install, Start, Stop};
        match self {
            ServiceUpgrade::Restart => &[Stop, Start],
            ServiceUpgrade::Reconfigure => &[Stop, Configure, Start],
            ServiceUpgrade::Reinstall => &[Stop, Install, Configure, Start],
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ServiceUpgrade::Restart => "restart",
            ServiceUpgrade::Reconfigure => "reconfigure",
            ServiceUpgrade::Reinstall => "reinstall",
        }
    }

    /// What a change of `action`'s definition asks for, if anything.
    fn for_changed(action: ServiceAction) -> Option<Self> {
        match action {
            ServiceAction::Install => Some(ServiceUpgrade::Reinstall),
            ServiceAction::Configure => Some(ServiceUpgrade::Reconfigure),
            ServiceAction::Start | ServiceAction::Stop => Some(ServiceUpgrade::Restart),
            ServiceAction::Initialize | ServiceAction::Remove => None,
        }
    }
}

/// What the upgrade of one cluster runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpgradeSteps {
    /// Changed services on the cluster and what each runs.
    pub services: BTreeMap<ServiceName, ServiceUpgrade>,
    /// Services on the cluster configured again afterwards: they depend at run time
    /// on a restarted service and are not restarted themselves.
    pub reconfigure: BTreeSet<ServiceName>,
}

impl UpgradeSteps {
    pub fn is_empty(&self) -> bool {
        self.services.is_empty() && self.reconfigure.is_empty()
    }
}

/// The actions whose definitions differ between two versions of a service (added,
/// removed or changed), in lifecycle order.
pub fn changed_actions(before: &Service, after: &Service) -> Vec<ServiceAction> {
    ServiceAction::ALL
        .into_iter()
        .filter(|action| before.action(*action) != after.action(*action))
        .collect()
}

/// What upgrading `on_cluster` services from `old` to `new` definitions runs.
pub fn service_upgrades(
    old: &Catalog,
    new: &Catalog,
    on_cluster: &BTreeSet<ServiceName>,
) -> UpgradeSteps {
    let mut steps = UpgradeSteps::default();
    for name in on_cluster {
        let (Some(before), Some(after)) = (old.service(name.as_str()), new.service(name.as_str()))
        else {
            continue;
        };
        if let Some(upgrade) = changed_actions(before, after)
            .into_iter()
            .filter_map(ServiceUpgrade::for_changed)
            .max()
        {
            steps.services.insert(name.clone(), upgrade);
        }
    }
    for name in on_cluster {
        if steps.services.contains_key(name) {
            continue;
        }
        let Some(service) = new.service(name.as_str()) else {
            continue;
        };
        if service.action(ServiceAction::Configure).is_none() {
            continue;
        }
        let runtime = &service.dependencies.runtime;
        let needs_restarted = runtime.requires.iter().chain(&runtime.uses).any(|needed| {
            steps.services.keys().any(|restarted| {
                new.service(restarted.as_str())
                    .is_some_and(|restarted| restarted.answers_to(needed.as_str()))
            })
        });
        if needs_restarted {
            steps.reconfigure.insert(name.clone());
        }
    }
    steps
}

/// The planner's view of the services for an upgrade: the new definitions, plus a
/// stop wherever only the old definition has one (the stop runs the old definition).
pub fn upgrade_graph(old: &Catalog, new: &Catalog) -> ServiceGraph {
    let mut graph = ServiceGraph::from_catalog(new);
    for (name, service) in &old.services {
        if service.action(ServiceAction::Stop).is_none() {
            continue;
        }
        let mut node = graph
            .get(name.as_str())
            .cloned()
            .unwrap_or_else(|| ServiceNode::from_catalog(service));
        node.actions.insert(ServiceAction::Stop);
        graph.insert(name.clone(), node);
    }
    graph
}

#[cfg(test)]
mod tests;
