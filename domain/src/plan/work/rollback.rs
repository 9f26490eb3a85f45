//! Rollback of a failed job: the work that undoes what its completed tasks did.

use std::collections::{BTreeMap, BTreeSet};

use super::{NodeStep, NodeWork};
use crate::plan::graph::{ResolvedDeps, ServiceAction};
use crate::plan::{Action, PlanError, TaskDag, TaskId};

/// Net effect of a failed job on one service of one node.
#[derive(Debug, Default)]
struct ServiceEffect {
    installed: bool,
    /// First and last completed start/stop, in task order.
    first_run_change: Option<Action>,
    last_run_change: Option<Action>,
}

/// Undoes the completed tasks of a failed job, newest effects first: a node the job
/// created is torn down and deleted; on other nodes, a service it installed is
/// stopped and removed, one it left started is stopped, one it left stopped is
/// started. What cannot be undone (a deleted node, a removed service) is left.
pub(super) fn rollback(
    failed: &TaskDag,
    completed: &BTreeSet<TaskId>,
    deps: &ResolvedDeps,
) -> Result<Vec<NodeWork>, PlanError> {
    if let Some(&unknown) = completed.iter().find(|id| failed.get(**id).is_none()) {
        return Err(PlanError::UnknownTask(unknown));
    }
    let mut created = BTreeSet::new();
    let mut deleted = BTreeSet::new();
    let mut effects: BTreeMap<u32, BTreeMap<usize, ServiceEffect>> = BTreeMap::new();
    for id in completed {
        let Some(task) = failed.get(*id) else {
            continue;
        };
        let service = task
            .service
            .as_ref()
            .and_then(|s| deps.index_of(s.as_str()));
        match (task.action, service) {
            (Action::Create, _) => {
                created.insert(task.node);
            }
            (Action::Delete, _) => {
                deleted.insert(task.node);
            }
            (Action::Install, Some(service)) => {
                effect(&mut effects, task.node, service).installed = true;
            }
            (Action::Remove, Some(service)) => {
                effect(&mut effects, task.node, service).installed = false;
            }
            (Action::Start | Action::Stop, Some(service)) => {
                let entry = effect(&mut effects, task.node, service);
                entry.first_run_change.get_or_insert(task.action);
                entry.last_run_change = Some(task.action);
            }
            _ => {}
        }
    }
    let mut nodes: BTreeSet<u32> = created.clone();
    nodes.extend(effects.keys().copied());
    let mut out = Vec::new();
    for number in nodes {
        if deleted.contains(&number) {
            continue;
        }
        let mut work = NodeWork {
            number,
            ..NodeWork::default()
        };
        for (&service, effect) in effects.get(&number).into_iter().flatten() {
            let net_run_change = match (effect.first_run_change, effect.last_run_change) {
                (Some(first), Some(last)) if first == last => Some(last),
                _ => None,
            };
            if effect.installed {
                let mut steps = Vec::new();
                if effect.last_run_change == Some(Action::Start) {
                    steps.push(ServiceAction::Stop);
                }
                steps.push(ServiceAction::Remove);
                work.teardown.push((service, steps));
            } else if net_run_change == Some(Action::Start) {
                work.teardown.push((service, vec![ServiceAction::Stop]));
            } else if net_run_change == Some(Action::Stop) {
                work.chains.push((service, vec![ServiceAction::Start]));
            }
        }
        if created.contains(&number) {
            work.after.push(NodeStep::Delete);
        }
        if !work.is_empty() {
            out.push(work);
        }
    }
    Ok(out)
}

fn effect(
    effects: &mut BTreeMap<u32, BTreeMap<usize, ServiceEffect>>,
    node: u32,
    service: usize,
) -> &mut ServiceEffect {
    effects.entry(node).or_default().entry(service).or_default()
}
