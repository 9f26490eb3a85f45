//! An upgrade's plan: the changed services' steps in batches of nodes, so that no
//! more than `max_unavailable` nodes of any one service are down at once, then the
//! dependants' configure.
//!
//! Each batch is planned like any operation (dependencies order the steps within it)
//! and the batches are chained: every task of a batch waits for every task of the
//! batch before, which the executor sees as ordinary predecessors.

use std::collections::{BTreeMap, BTreeSet};

use super::build::build;
use super::graph::{ResolvedDeps, ServiceAction};
use super::work::NodeWork;
use super::{PlanError, TaskDag, Upgrade};
use crate::layout::{Layout, NodeLayout};
use crate::names::ServiceName;

/// The upgrade of `layout` as batches, then the dependants' configure.
pub(crate) fn plan(
    layout: &Layout,
    upgrade: &Upgrade,
    deps: &ResolvedDeps,
) -> Result<TaskDag, PlanError> {
    let mut dag = TaskDag::default();
    for batch in batches(layout, upgrade) {
        let work: Vec<NodeWork> = batch
            .into_iter()
            .filter_map(|node| node_work(node, &upgrade.steps.services, deps))
            .collect();
        dag.append(build(&work, deps)?);
    }
    let finale: Vec<NodeWork> = layout
        .nodes
        .iter()
        .filter_map(|node| {
            let chains: Vec<_> = node
                .services
                .iter()
                .filter(|service| upgrade.steps.reconfigure.contains(*service))
                .filter_map(|service| deps.index_of(service.as_str()))
                .filter(|&index| deps.defines(index, ServiceAction::Configure))
                .map(|index| (index, vec![ServiceAction::Configure]))
                .collect();
            (!chains.is_empty()).then(|| NodeWork {
                number: node.number,
                chains,
                ..NodeWork::default()
            })
        })
        .collect();
    dag.append(build(&finale, deps)?);
    Ok(dag)
}

/// Every node's upgrade steps at once (one batch, no dependants' configure): what
/// [`super::work::for_operation`] answers for an upgrade; [`plan`] splits it.
pub(crate) fn all_at_once(
    layout: &Layout,
    upgrade: &Upgrade,
    deps: &ResolvedDeps,
) -> Vec<NodeWork> {
    layout
        .nodes
        .iter()
        .filter(|node| selected(upgrade, node))
        .filter_map(|node| node_work(node, &upgrade.steps.services, deps))
        .collect()
}

fn selected(upgrade: &Upgrade, node: &NodeLayout) -> bool {
    upgrade
        .nodes
        .as_ref()
        .is_none_or(|nodes| nodes.contains(&node.number))
}

fn node_work(
    node: &NodeLayout,
    services: &BTreeMap<ServiceName, crate::upgrade::ServiceUpgrade>,
    deps: &ResolvedDeps,
) -> Option<NodeWork> {
    let chains: Vec<_> = node
        .services
        .iter()
        .filter_map(|service| Some((deps.index_of(service.as_str())?, services.get(service)?)))
        .map(|(index, upgrade)| (index, upgrade.steps().to_vec()))
        .collect();
    (!chains.is_empty()).then(|| NodeWork {
        number: node.number,
        chains,
        ..NodeWork::default()
    })
}

/// The selected nodes with a changed service, in number order, cut into batches: a
/// node joins the current batch unless that would put more than `max_unavailable`
/// nodes of one of its changed services in it.
pub(crate) fn batches<'a>(layout: &'a Layout, upgrade: &Upgrade) -> Vec<Vec<&'a NodeLayout>> {
    let limit = upgrade.max_unavailable.max(1);
    let mut out: Vec<Vec<&NodeLayout>> = Vec::new();
    let mut counts: BTreeMap<&ServiceName, u32> = BTreeMap::new();
    for node in layout.nodes.iter().filter(|node| selected(upgrade, node)) {
        let changed: BTreeSet<&ServiceName> = node
            .services
            .iter()
            .filter(|service| upgrade.steps.services.contains_key(*service))
            .collect();
        if changed.is_empty() {
            continue;
        }
        let fits = changed
            .iter()
            .all(|service| counts.get(service).copied().unwrap_or(0) < limit);
        if !fits || out.is_empty() {
            out.push(Vec::new());
            counts.clear();
        }
        for service in changed {
            *counts.entry(service).or_default() += 1;
        }
        if let Some(batch) = out.last_mut() {
            batch.push(node);
        }
    }
    out
}
