//! Turns per-node work into a [`TaskDag`].
//!
//! Tasks are grouped by *key* = (service, action), or (node task kind) for node
//! tasks. A dependency rule "every B task before every A task" is one edge between
//! two keys, so rules cost O(keys) to reason about (cycle check, redundant-edge
//! removal, layering) and only the final `after` lists are expanded per task.

mod assemble;
mod order;
mod rules;

use std::collections::{BTreeMap, BTreeSet};

use super::graph::{action_index, ResolvedDeps, ServiceAction};
use super::work::{Chain, NodeStep, NodeWork};
use super::{Action, PlanError, TaskDag};

use assemble::assemble;
use order::{bottom_levels, layers, staged_order};
use rules::{group_edges, group_rules, key_topological_order};

/// Key numbering: service `s`, action `a` → `s * 6 + a`; node tasks after those.
#[derive(Debug, Clone, Copy)]
struct Keys {
    services: usize,
}

impl Keys {
    fn count(self) -> usize {
        self.services * ServiceAction::ALL.len() + NodeStep::ALL.len()
    }

    fn service(self, service: usize, action: ServiceAction) -> usize {
        service * ServiceAction::ALL.len() + action_index(action)
    }

    fn node(self, step: NodeStep) -> usize {
        self.services * ServiceAction::ALL.len() + step as usize
    }

    /// (service index, action) of a key.
    fn decode(self, key: usize) -> (Option<usize>, Action) {
        let per_service = ServiceAction::ALL.len();
        if key < self.services * per_service {
            (
                Some(key / per_service),
                Action::from(ServiceAction::ALL[key % per_service]),
            )
        } else {
            (
                None,
                Action::from(NodeStep::ALL[key - self.services * per_service]),
            )
        }
    }
}

/// A task before ids are assigned.
#[derive(Debug, Clone, Copy)]
struct Draft {
    node: u32,
    /// Dense index of the node, for per-node bookkeeping.
    slot: u32,
    key: u32,
}

pub(crate) fn build(work: &[NodeWork], deps: &ResolvedDeps) -> Result<TaskDag, PlanError> {
    let keys = Keys {
        services: deps.len(),
    };
    let drafted = draft(work, deps, keys);
    let group_edges = group_edges(deps, keys, &drafted.key_tasks, &drafted.drain_edges);
    let key_order = key_topological_order(keys, &drafted, &group_edges, deps)?;
    let rules = group_rules(keys, &group_edges, &key_order);
    let chain_preds = Csr::new(drafted.tasks.len(), &drafted.chain_edges);
    let layers = layers(&drafted, &key_order, &rules.sources, &chain_preds, keys);
    let bottom = bottom_levels(&drafted, &key_order, &rules.sources, keys);
    let (order, stage_of) = staged_order(&drafted, &layers, &bottom, keys);
    Ok(assemble(
        &drafted,
        keys,
        deps,
        &rules,
        &chain_preds,
        &order,
        &stage_of,
    ))
}

struct Drafted {
    tasks: Vec<Draft>,
    /// Tasks of each key, in node order.
    key_tasks: Vec<Vec<u32>>,
    /// Same-node ordering: (task, must follow).
    chain_edges: Vec<(u32, u32)>,
    /// Key-level rules (before, after) from the phases: every prelude step, on any
    /// node, before any teardown step or node delete.
    drain_edges: Vec<(usize, usize)>,
    node_count: usize,
}

fn draft(work: &[NodeWork], deps: &ResolvedDeps, keys: Keys) -> Drafted {
    let mut out = Drafted {
        tasks: Vec::new(),
        key_tasks: vec![Vec::new(); keys.count()],
        chain_edges: Vec::new(),
        drain_edges: Vec::new(),
        node_count: 0,
    };
    let mut prelude_keys = BTreeSet::new();
    let mut teardown_keys = BTreeSet::new();
    let mut slots: BTreeMap<u32, u32> = BTreeMap::new();
    for node in work {
        let next_slot = slots.len() as u32;
        let slot = *slots.entry(node.number).or_insert(next_slot);
        let push = |out: &mut Drafted, key: usize| -> u32 {
            let id = out.tasks.len() as u32;
            out.tasks.push(Draft {
                node: node.number,
                slot,
                key: key as u32,
            });
            out.key_tasks[key].push(id);
            id
        };
        // Each phase follows every task that ended the previous one: prelude chains,
        // teardown chains, then node steps, then service chains, then closing node steps.
        let mut frontier: Vec<u32> = Vec::new();
        let service_phase = |out: &mut Drafted, frontier: &mut Vec<u32>, chains: &[Chain]| {
            let mut ends = Vec::new();
            for (service, steps) in chains {
                let mut previous: Vec<u32> = frontier.clone();
                let mut produced = false;
                for &step in steps {
                    if !deps.defines(*service, step) {
                        continue;
                    }
                    let task = push(out, keys.service(*service, step));
                    out.chain_edges
                        .extend(previous.iter().map(|&before| (task, before)));
                    previous = vec![task];
                    produced = true;
                }
                if produced {
                    ends.extend(previous);
                }
            }
            if !ends.is_empty() {
                *frontier = ends;
            }
        };
        let node_phase = |out: &mut Drafted, frontier: &mut Vec<u32>, steps: &[NodeStep]| {
            for &step in steps {
                let task = push(out, keys.node(step));
                out.chain_edges
                    .extend(frontier.iter().map(|&before| (task, before)));
                *frontier = vec![task];
            }
        };
        let first = out.tasks.len();
        service_phase(&mut out, &mut frontier, &node.prelude);
        let teardown_from = out.tasks.len();
        service_phase(&mut out, &mut frontier, &node.teardown);
        let teardown_to = out.tasks.len();
        node_phase(&mut out, &mut frontier, &node.before);
        service_phase(&mut out, &mut frontier, &node.chains);
        let closing_from = out.tasks.len();
        node_phase(&mut out, &mut frontier, &node.after);
        let key = |task: &Draft| task.key as usize;
        prelude_keys.extend(out.tasks[first..teardown_from].iter().map(key));
        teardown_keys.extend(out.tasks[teardown_from..teardown_to].iter().map(key));
        teardown_keys.extend(out.tasks[closing_from..].iter().map(key));
    }
    for &before in &prelude_keys {
        for &after in &teardown_keys {
            out.drain_edges.push((before, after));
        }
    }
    out.node_count = slots.len();
    out
}

/// Compressed per-task predecessor lists.
struct Csr {
    offsets: Vec<u32>,
    items: Vec<u32>,
}

impl Csr {
    fn new(len: usize, edges: &[(u32, u32)]) -> Self {
        let mut offsets = vec![0u32; len + 1];
        for &(task, _) in edges {
            offsets[task as usize + 1] += 1;
        }
        for i in 0..len {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut items = vec![0u32; edges.len()];
        for &(task, previous) in edges {
            items[fill[task as usize] as usize] = previous;
            fill[task as usize] += 1;
        }
        Self { offsets, items }
    }

    fn of(&self, task: usize) -> &[u32] {
        &self.items[self.offsets[task] as usize..self.offsets[task + 1] as usize]
    }
}
