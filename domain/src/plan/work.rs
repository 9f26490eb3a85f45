//! What each operation asks of each node: services torn down, node steps, one chain
//! of steps per service acted on, closing node steps. Dependencies between services are added
//! later, by the builder; this module only decides *what* runs *where*.

mod rollback;

use std::collections::{BTreeMap, BTreeSet};

use crate::layout::{Layout, NodeLayout};
use crate::names::ServiceName;

use super::graph::{ResolvedDeps, ServiceAction, ServiceGraph};
use super::{Action, PlanError, PlanOperation};

/// Steps of a service being added, in chain order.
const BUILD: [ServiceAction; 4] = [
    ServiceAction::Install,
    ServiceAction::Configure,
    ServiceAction::Initialize,
    ServiceAction::Start,
];
/// Steps of a service going away, in chain order.
const TEAR_DOWN: [ServiceAction; 2] = [ServiceAction::Stop, ServiceAction::Remove];
const NEW_NODE: [NodeStep; 3] = [NodeStep::Create, NodeStep::Confirm, NodeStep::Bootstrap];

/// A node task, as opposed to a service step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NodeStep {
    Create,
    Confirm,
    Bootstrap,
    Delete,
}

impl NodeStep {
    pub const ALL: [NodeStep; 4] = [
        NodeStep::Create,
        NodeStep::Confirm,
        NodeStep::Bootstrap,
        NodeStep::Delete,
    ];
}

impl From<NodeStep> for Action {
    fn from(step: NodeStep) -> Self {
        match step {
            NodeStep::Create => Action::Create,
            NodeStep::Confirm => Action::Confirm,
            NodeStep::Bootstrap => Action::Bootstrap,
            NodeStep::Delete => Action::Delete,
        }
    }
}

/// One service's steps on one node, in order (index into the resolved services).
pub(crate) type Chain = (usize, Vec<ServiceAction>);

/// The work on one node, in five phases; each starts once the previous one is done
/// on this node (an empty phase is skipped). Steps a service does not define are
/// skipped by the builder.
#[derive(Debug, Default)]
pub(crate) struct NodeWork {
    pub number: u32,
    /// Services that stay, configured for the new layout before anything goes away
    /// (on every node: the builder orders every prelude step before every teardown).
    pub prelude: Vec<Chain>,
    /// Services going away (stop, remove), side by side.
    pub teardown: Vec<Chain>,
    /// Node steps, in order.
    pub before: Vec<NodeStep>,
    /// Services being built or acted on, side by side.
    pub chains: Vec<Chain>,
    /// Node steps, in order, last.
    pub after: Vec<NodeStep>,
}

impl NodeWork {
    fn is_empty(&self) -> bool {
        self.prelude.is_empty()
            && self.teardown.is_empty()
            && self.before.is_empty()
            && self.chains.is_empty()
            && self.after.is_empty()
    }
}

/// Every service name the plan may meet: dependencies resolve against these.
pub(crate) fn cluster_services(
    old: &Layout,
    new: &Layout,
    operation: &PlanOperation,
) -> BTreeSet<ServiceName> {
    let mut out: BTreeSet<ServiceName> = old.services().into_iter().cloned().collect();
    out.extend(new.services().into_iter().cloned());
    if let PlanOperation::Rollback { failed, .. } = operation {
        out.extend(
            failed
                .tasks()
                .iter()
                .filter_map(|task| task.service.clone()),
        );
    }
    out
}

/// Which layout changes an operation accepts.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Allowed {
    pub add_nodes: bool,
    pub remove_nodes: bool,
    pub add_services: bool,
    pub remove_services: bool,
}

pub(crate) fn for_operation(
    old: &Layout,
    new: &Layout,
    operation: &PlanOperation,
    deps: &ResolvedDeps,
    graph: &ServiceGraph,
) -> Result<Vec<NodeWork>, PlanError> {
    let name = operation.name();
    // Start, stop and restart differ only in which way the selection grows (to
    // dependencies, or to dependents) and in the steps run on what it selects.
    let on_selected = |services, dependents, steps| {
        let targets = selected(services, deps, graph, dependents)?;
        Ok(on_services(new, deps, targets.as_ref(), Vec::new(), steps))
    };
    match operation {
        PlanOperation::Create => {
            if !old.nodes.is_empty() {
                return Err(mismatch(
                    name,
                    format!("the cluster already has {} nodes", old.size()),
                ));
            }
            diff(old, new, name, deps, allow(|a| a.add_nodes = true))
        }
        PlanOperation::Delete => {
            let empty = Layout::empty(old.template.clone());
            diff(old, &empty, name, deps, allow(|a| a.remove_nodes = true))
        }
        PlanOperation::AddServices => diff(old, new, name, deps, allow(|a| a.add_services = true)),
        PlanOperation::RemoveServices => {
            let work = diff(old, new, name, deps, allow(|a| a.remove_services = true))?;
            Ok(reconfigure_first(work, new, deps))
        }
        PlanOperation::AddNodes => diff(old, new, name, deps, allow(|a| a.add_nodes = true)),
        PlanOperation::RemoveNodes => {
            let work = diff(old, new, name, deps, allow(|a| a.remove_nodes = true))?;
            Ok(reconfigure_first(work, new, deps))
        }
        PlanOperation::Update => diff(
            old,
            new,
            name,
            deps,
            Allowed {
                add_nodes: true,
                remove_nodes: true,
                add_services: true,
                remove_services: true,
            },
        ),
        PlanOperation::Reconfigure { restart } => {
            let steps: &[ServiceAction] = if *restart {
                &[
                    ServiceAction::Stop,
                    ServiceAction::Configure,
                    ServiceAction::Start,
                ]
            } else {
                &[ServiceAction::Configure]
            };
            Ok(on_services(
                new,
                deps,
                None,
                vec![NodeStep::Bootstrap],
                steps,
            ))
        }
        PlanOperation::SyncKeys => Ok(new
            .nodes
            .iter()
            .map(|node| NodeWork {
                number: node.number,
                before: vec![NodeStep::Bootstrap],
                ..NodeWork::default()
            })
            .collect()),
        PlanOperation::Start { services } => {
            on_selected(services.as_ref(), false, &[ServiceAction::Start])
        }
        PlanOperation::Stop { services } => {
            on_selected(services.as_ref(), true, &[ServiceAction::Stop])
        }
        PlanOperation::Restart { services } => on_selected(
            services.as_ref(),
            true,
            &[ServiceAction::Stop, ServiceAction::Start],
        ),
        PlanOperation::Rollback { failed, completed } => {
            rollback::rollback(failed, completed, deps)
        }
        // In one batch; `plan` cuts an upgrade into batches instead of calling this.
        PlanOperation::Upgrade(upgrade) => Ok(super::rolling::all_at_once(new, upgrade, deps)),
        // All at once; `plan` builds the new nodes before the old ones go instead.
        PlanOperation::ReplaceNodes => diff(
            old,
            new,
            name,
            deps,
            allow(|a| {
                a.add_nodes = true;
                a.remove_nodes = true;
            }),
        ),
    }
}

pub(super) fn allow(set: impl FnOnce(&mut Allowed)) -> Allowed {
    let mut allowed = Allowed::default();
    set(&mut allowed);
    allowed
}

fn mismatch(operation: &'static str, detail: String) -> PlanError {
    PlanError::LayoutMismatch { operation, detail }
}

fn indices(services: impl IntoIterator<Item = impl AsRef<str>>, deps: &ResolvedDeps) -> Vec<usize> {
    services
        .into_iter()
        .filter_map(|name| deps.index_of(name.as_ref()))
        .collect()
}

fn build_node(node: &NodeLayout, deps: &ResolvedDeps) -> NodeWork {
    NodeWork {
        number: node.number,
        prelude: Vec::new(),
        teardown: Vec::new(),
        before: NEW_NODE.to_vec(),
        chains: indices(&node.services, deps)
            .into_iter()
            .map(|service| (service, BUILD.to_vec()))
            .collect(),
        after: Vec::new(),
    }
}

fn tear_down_node(node: &NodeLayout, deps: &ResolvedDeps) -> NodeWork {
    NodeWork {
        number: node.number,
        prelude: Vec::new(),
        teardown: indices(&node.services, deps)
            .into_iter()
            .map(|service| (service, TEAR_DOWN.to_vec()))
            .collect(),
        before: Vec::new(),
        chains: Vec::new(),
        after: vec![NodeStep::Delete],
    }
}

/// Plans the difference between two layouts, refusing changes `allowed` excludes.
pub(super) fn diff(
    old: &Layout,
    new: &Layout,
    operation: &'static str,
    deps: &ResolvedDeps,
    allowed: Allowed,
) -> Result<Vec<NodeWork>, PlanError> {
    let mut pairs: BTreeMap<u32, (Option<&NodeLayout>, Option<&NodeLayout>)> = BTreeMap::new();
    for node in &old.nodes {
        pairs.entry(node.number).or_default().0 = Some(node);
    }
    for node in &new.nodes {
        pairs.entry(node.number).or_default().1 = Some(node);
    }
    let mut out = Vec::new();
    for (number, pair) in pairs {
        match pair {
            (None, Some(added)) => {
                if !allowed.add_nodes {
                    return Err(mismatch(operation, format!("node {number} would be added")));
                }
                out.push(build_node(added, deps));
            }
            (Some(dropped), None) => {
                if !allowed.remove_nodes {
                    return Err(mismatch(
                        operation,
                        format!("node {number} would be removed"),
                    ));
                }
                out.push(tear_down_node(dropped, deps));
            }
            (Some(before), Some(after)) => {
                let added: Vec<&ServiceName> =
                    after.services.difference(&before.services).collect();
                let removed: Vec<&ServiceName> =
                    before.services.difference(&after.services).collect();
                if let Some(first) = added.first().filter(|_| !allowed.add_services) {
                    return Err(mismatch(
                        operation,
                        format!("service {first} would be added to node {number}"),
                    ));
                }
                if let Some(first) = removed.first().filter(|_| !allowed.remove_services) {
                    return Err(mismatch(
                        operation,
                        format!("service {first} would be removed from node {number}"),
                    ));
                }
                let mut work = NodeWork {
                    number,
                    ..NodeWork::default()
                };
                if !added.is_empty() {
                    work.before.push(NodeStep::Bootstrap);
                }
                // A node trading one service for another tears the old one down
                // before building the new one (they may share ports or files).
                for service in indices(&removed, deps) {
                    work.teardown.push((service, TEAR_DOWN.to_vec()));
                }
                for service in indices(&added, deps) {
                    work.chains.push((service, BUILD.to_vec()));
                }
                if !work.is_empty() {
                    out.push(work);
                }
            }
            (None, None) => {}
        }
    }
    Ok(out)
}

/// Adds, when anything goes away, a configure of every service that stays (on every
/// node of `new`) ahead of the teardown: what stays stops using what goes before it
/// goes (a load balancer forgets removed backends before they stop).
pub(super) fn reconfigure_first(
    work: Vec<NodeWork>,
    new: &Layout,
    deps: &ResolvedDeps,
) -> Vec<NodeWork> {
    if work.is_empty() {
        return work;
    }
    let mut by_node: BTreeMap<u32, NodeWork> =
        work.into_iter().map(|node| (node.number, node)).collect();
    for node in &new.nodes {
        let entry = by_node.entry(node.number).or_insert_with(|| NodeWork {
            number: node.number,
            ..NodeWork::default()
        });
        entry.prelude = indices(&node.services, deps)
            .into_iter()
            .filter(|&service| deps.defines(service, ServiceAction::Configure))
            .map(|service| (service, vec![ServiceAction::Configure]))
            .collect();
    }
    by_node
        .into_values()
        .filter(|node| !node.is_empty())
        .collect()
}

/// The services a start/stop/restart acts on: `None` means all; otherwise the named
/// services (or aliases) plus their runtime dependencies (for start) or their runtime
/// dependents (for stop and restart).
fn selected(
    names: Option<&BTreeSet<ServiceName>>,
    deps: &ResolvedDeps,
    graph: &ServiceGraph,
    dependents: bool,
) -> Result<Option<BTreeSet<usize>>, PlanError> {
    let Some(names) = names else {
        return Ok(None);
    };
    let mut roots = BTreeSet::new();
    for name in names {
        let found = deps.resolve_name(graph, name.as_str());
        if found.is_empty() {
            return Err(PlanError::NotOnCluster(name.clone()));
        }
        roots.extend(found);
    }
    Ok(Some(if dependents {
        deps.runtime_dependents_closure(&roots)
    } else {
        deps.runtime_closure(&roots)
    }))
}

/// The same steps for the selected services (all if `None`) on every node of `layout`.
fn on_services(
    layout: &Layout,
    deps: &ResolvedDeps,
    targets: Option<&BTreeSet<usize>>,
    before: Vec<NodeStep>,
    steps: &[ServiceAction],
) -> Vec<NodeWork> {
    layout
        .nodes
        .iter()
        .filter_map(|node| {
            let chains: Vec<(usize, Vec<ServiceAction>)> = indices(&node.services, deps)
                .into_iter()
                .filter(|service| targets.is_none_or(|set| set.contains(service)))
                .map(|service| (service, steps.to_vec()))
                .collect();
            if chains.is_empty() && targets.is_some() {
                return None;
            }
            Some(NodeWork {
                number: node.number,
                before: before.clone(),
                chains,
                ..NodeWork::default()
            })
        })
        .collect()
}
