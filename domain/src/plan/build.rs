//! Turns per-node work into a [`TaskDag`].
//!
//! Tasks are grouped by *key* = (service, action), or (node task kind) for node
//! tasks. A dependency rule "every B task before every A task" is one edge between
//! two keys, so rules cost O(keys) to reason about (cycle check, redundant-edge
//! removal, layering) and only the final `after` lists are expanded per task.

use std::collections::BTreeMap;

use crate::names::ServiceName;

use super::graph::{action_index, DepKind, ResolvedDeps, ServiceAction};
use super::work::{NodeStep, NodeWork};
use super::{Action, PlanError, Task, TaskDag, TaskId};

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
    let group_edges = group_edges(deps, keys, &drafted.key_tasks);
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
    node_count: usize,
}

fn draft(work: &[NodeWork], deps: &ResolvedDeps, keys: Keys) -> Drafted {
    let mut out = Drafted {
        tasks: Vec::new(),
        key_tasks: vec![Vec::new(); keys.count()],
        chain_edges: Vec::new(),
        node_count: 0,
    };
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
        let mut last_before = None;
        for &action in &node.before {
            let task = push(&mut out, keys.node(action));
            if let Some(previous) = last_before {
                out.chain_edges.push((task, previous));
            }
            last_before = Some(task);
        }
        let mut chain_ends = Vec::new();
        for (service, steps) in &node.chains {
            let mut previous = last_before;
            for &step in steps {
                if !deps.defines(*service, step) {
                    continue;
                }
                let task = push(&mut out, keys.service(*service, step));
                if let Some(previous) = previous {
                    out.chain_edges.push((task, previous));
                }
                previous = Some(task);
            }
            if previous != last_before {
                chain_ends.extend(previous);
            }
        }
        let mut last_after: Option<u32> = None;
        for &action in &node.after {
            let task = push(&mut out, keys.node(action));
            match last_after {
                Some(previous) => out.chain_edges.push((task, previous)),
                None if chain_ends.is_empty() => {
                    out.chain_edges
                        .extend(last_before.map(|before| (task, before)));
                }
                None => out
                    .chain_edges
                    .extend(chain_ends.iter().map(|&end| (task, end))),
            }
            last_after = Some(task);
        }
    }
    out.node_count = slots.len();
    out
}

/// Cross-service rules as (source key, target key): every source task must finish
/// before any target task starts. Only keys with planned tasks take part.
fn group_edges(deps: &ResolvedDeps, keys: Keys, key_tasks: &[Vec<u32>]) -> Vec<(usize, usize)> {
    use ServiceAction::{Initialize, Install, Remove, Start, Stop};
    let planned = |key: usize| !key_tasks[key].is_empty();
    let mut edges = Vec::new();
    let mut add = |source: usize, target: usize| {
        if planned(source) && planned(target) {
            edges.push((source, target));
        }
    };
    for service in 0..deps.len() {
        for dep in deps.effective(service, DepKind::Install, Install) {
            add(keys.service(dep, Install), keys.service(service, Install));
        }
        for dep in deps.effective(service, DepKind::Install, Remove) {
            add(keys.service(service, Remove), keys.service(dep, Remove));
        }
        for dep in deps.effective(service, DepKind::Runtime, Start) {
            add(keys.service(dep, Start), keys.service(service, Initialize));
            add(keys.service(dep, Start), keys.service(service, Start));
        }
        for dep in deps.effective(service, DepKind::Runtime, Stop) {
            add(keys.service(service, Stop), keys.service(dep, Stop));
        }
    }
    edges.sort_unstable();
    edges.dedup();
    edges
}

/// Orders keys so every task edge goes forward, or names a dependency cycle.
fn key_topological_order(
    keys: Keys,
    drafted: &Drafted,
    group_edges: &[(usize, usize)],
    deps: &ResolvedDeps,
) -> Result<Vec<usize>, PlanError> {
    let mut edges: Vec<(usize, usize)> = drafted
        .chain_edges
        .iter()
        .map(|&(task, previous)| {
            (
                drafted.tasks[previous as usize].key as usize,
                drafted.tasks[task as usize].key as usize,
            )
        })
        .chain(group_edges.iter().copied())
        .collect();
    edges.sort_unstable();
    edges.dedup();
    let count = keys.count();
    let mut successors = vec![Vec::new(); count];
    let mut predecessors = vec![Vec::new(); count];
    let mut indegree = vec![0usize; count];
    for &(source, target) in &edges {
        successors[source].push(target);
        predecessors[target].push(source);
        indegree[target] += 1;
    }
    let mut ready: Vec<usize> = (0..count).filter(|&key| indegree[key] == 0).collect();
    ready.reverse();
    let mut order = Vec::with_capacity(count);
    while let Some(key) = ready.pop() {
        order.push(key);
        for &next in &successors[key] {
            indegree[next] -= 1;
            if indegree[next] == 0 {
                ready.push(next);
            }
        }
    }
    if order.len() == count {
        return Ok(order);
    }
    Err(cycle_error(keys, &indegree, &predecessors, deps))
}

/// Every key left with a positive in-degree has a predecessor also left, so walking
/// predecessors from any of them must revisit a key: that loop is a cycle.
fn cycle_error(
    keys: Keys,
    indegree: &[usize],
    predecessors: &[Vec<usize>],
    deps: &ResolvedDeps,
) -> PlanError {
    let Some(start) = (0..indegree.len()).find(|&key| indegree[key] > 0) else {
        return PlanError::DependencyCycle {
            services: Vec::new(),
        };
    };
    let mut path = vec![start];
    let mut current = start;
    let services = loop {
        let Some(&previous) = predecessors[current]
            .iter()
            .find(|&&candidate| indegree[candidate] > 0)
        else {
            break Vec::new();
        };
        if let Some(position) = path.iter().position(|&key| key == previous) {
            break path[position..].to_vec();
        }
        path.push(previous);
        current = previous;
    };
    let mut names: Vec<ServiceName> = services
        .into_iter()
        .filter_map(|key| keys.decode(key).0)
        .map(|service| deps.names[service].clone())
        .collect();
    names.sort();
    names.dedup();
    PlanError::DependencyCycle { services: names }
}

/// The cross-service rules in the form the later passes use.
struct GroupRules {
    /// Source keys per target key, without rules implied by two others (every A
    /// before every B, and every B before every C, imply every A before every C;
    /// B has tasks, so nothing is lost).
    sources: Vec<Vec<usize>>,
    /// Per key K, a bit set of the keys S whose every task precedes every K task.
    ancestors: Vec<Vec<u64>>,
}

fn has(bits: &[u64], key: usize) -> bool {
    bits[key / 64] & (1 << (key % 64)) != 0
}

fn group_rules(keys: Keys, group_edges: &[(usize, usize)], key_order: &[usize]) -> GroupRules {
    let count = keys.count();
    let mut successors = vec![Vec::new(); count];
    for &(source, target) in group_edges {
        successors[source].push(target);
    }
    let words = count.div_ceil(64);
    // reach[k]: keys reachable from k through one or more group edges.
    let mut reach = vec![vec![0u64; words]; count];
    for &key in key_order.iter().rev() {
        let mut row = vec![0u64; words];
        for &next in &successors[key] {
            row[next / 64] |= 1 << (next % 64);
            for (word, bits) in row.iter_mut().zip(&reach[next]) {
                *word |= bits;
            }
        }
        reach[key] = row;
    }
    let mut sources = vec![Vec::new(); count];
    for &(source, target) in group_edges {
        let implied = successors[source]
            .iter()
            .any(|&middle| middle != target && has(&reach[middle], target));
        if !implied {
            sources[target].push(source);
        }
    }
    let mut ancestors = vec![vec![0u64; words]; count];
    for (source, row) in reach.iter().enumerate() {
        for (target, ancestor_row) in ancestors.iter_mut().enumerate() {
            if has(row, target) {
                ancestor_row[source / 64] |= 1 << (source % 64);
            }
        }
    }
    GroupRules { sources, ancestors }
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

/// Coopr's layering: a task's layer is one more than its latest predecessor's.
fn layers(
    drafted: &Drafted,
    key_order: &[usize],
    sources: &[Vec<usize>],
    chain_preds: &Csr,
    keys: Keys,
) -> Vec<u32> {
    let mut layer = vec![0u32; drafted.tasks.len()];
    let mut key_max = vec![0u32; keys.count()];
    for &key in key_order {
        let group_floor = sources[key]
            .iter()
            .map(|&source| key_max[source] + 1)
            .max()
            .unwrap_or(0);
        let mut max = 0;
        for &task in &drafted.key_tasks[key] {
            let task = task as usize;
            let value = chain_preds
                .of(task)
                .iter()
                .map(|&previous| layer[previous as usize] + 1)
                .fold(group_floor, u32::max);
            layer[task] = value;
            max = max.max(value);
        }
        key_max[key] = max;
    }
    layer
}

/// Longest number of tasks from each task to the end of the plan (itself included),
/// following dependency and chain edges: the tasks on the critical path go first.
fn bottom_levels(
    drafted: &Drafted,
    key_order: &[usize],
    sources: &[Vec<usize>],
    keys: Keys,
) -> Vec<u32> {
    let reversed: Vec<(u32, u32)> = drafted
        .chain_edges
        .iter()
        .map(|&(task, previous)| (previous, task))
        .collect();
    let chain_successors = Csr::new(drafted.tasks.len(), &reversed);
    let mut targets = vec![Vec::new(); keys.count()];
    for (target, key_sources) in sources.iter().enumerate() {
        for &source in key_sources {
            targets[source].push(target);
        }
    }
    let mut bottom = vec![0u32; drafted.tasks.len()];
    let mut key_max = vec![0u32; keys.count()];
    for &key in key_order.iter().rev() {
        let group_floor = targets[key]
            .iter()
            .map(|&target| key_max[target])
            .max()
            .unwrap_or(0);
        let mut max = 0;
        for &task in &drafted.key_tasks[key] {
            let task = task as usize;
            let value = 1 + chain_successors
                .of(task)
                .iter()
                .map(|&next| bottom[next as usize])
                .fold(group_floor, u32::max);
            bottom[task] = value;
            max = max.max(value);
        }
        key_max[key] = max;
    }
    bottom
}

/// Splits each layer so no node has two tasks in one stage and returns the tasks in
/// (stage, node) order with each task's stage. A node's tasks within a layer go to
/// consecutive sub-stages, longest remaining path first (then action, service).
fn staged_order(
    drafted: &Drafted,
    layers: &[u32],
    bottom: &[u32],
    keys: Keys,
) -> (Vec<u32>, Vec<u32>) {
    // Packed sort keys: (layer, node slot) in the first word; (priority, action,
    // service) in the second, so sorting compares plain integers.
    let mut by_layer_node: Vec<(u64, u64, u32)> = drafted
        .tasks
        .iter()
        .enumerate()
        .map(|(task, draft)| {
            let (service, action) = keys.decode(draft.key as usize);
            let service = service.map_or(0, |service| service as u64 + 1);
            let priority = u64::from(u32::MAX - bottom[task]);
            let rank = (priority << 32) | ((action as u64) << 24) | (service % (1 << 24));
            (
                (u64::from(layers[task]) << 32) | u64::from(draft.slot),
                rank,
                task as u32,
            )
        })
        .collect();
    by_layer_node.sort_unstable();
    let layer_count = layers.iter().max().map_or(0, |max| *max as usize + 1);
    let mut sub = vec![0u32; drafted.tasks.len()];
    let mut substages = vec![0u32; layer_count];
    let mut previous: Option<u64> = None;
    let mut run = 0u32;
    for &(here, _, task) in &by_layer_node {
        run = if previous == Some(here) { run + 1 } else { 0 };
        previous = Some(here);
        sub[task as usize] = run;
        let count = &mut substages[(here >> 32) as usize];
        *count = (*count).max(run + 1);
    }
    let mut offsets = vec![0u32; layer_count];
    for layer in 1..layer_count {
        offsets[layer] = offsets[layer - 1] + substages[layer - 1];
    }
    let stage_of: Vec<u32> = (0..drafted.tasks.len())
        .map(|task| offsets[layers[task] as usize] + sub[task])
        .collect();
    let mut by_stage: Vec<(u64, u32)> = drafted
        .tasks
        .iter()
        .enumerate()
        .map(|(task, draft)| {
            (
                (u64::from(stage_of[task]) << 32) | u64::from(draft.node),
                task as u32,
            )
        })
        .collect();
    by_stage.sort_unstable();
    let order = by_stage.into_iter().map(|(_, task)| task).collect();
    (order, stage_of)
}

/// Assigns ids in staged order, chains each node's tasks in that order, and writes
/// every task's `after` list.
///
/// A rule "every S task before this task" is left out when an earlier task on the
/// same node already waits for every S task: the node chain carries it. On nodes
/// running several services that share dependencies this removes most edges.
fn assemble(
    drafted: &Drafted,
    keys: Keys,
    deps: &ResolvedDeps,
    rules: &GroupRules,
    chain_preds: &Csr,
    order: &[u32],
    stage_of: &[u32],
) -> TaskDag {
    let mut new_id = vec![0u32; drafted.tasks.len()];
    for (position, &task) in order.iter().enumerate() {
        new_id[task as usize] = position as u32;
    }
    let sources = &rules.sources;
    let mut key_ids: Vec<Vec<TaskId>> = vec![Vec::new(); keys.count()];
    for key_sources in sources {
        for &source in key_sources {
            if key_ids[source].is_empty() {
                key_ids[source] = drafted.key_tasks[source]
                    .iter()
                    .map(|&task| TaskId(new_id[task as usize]))
                    .collect();
            }
        }
    }
    let mut last_on_node: Vec<Option<u32>> = vec![None; drafted.node_count];
    let words = keys.count().div_ceil(64);
    // covered[node]: keys whose every task precedes the node's latest task.
    let mut covered: Vec<Vec<u64>> = vec![vec![0u64; words]; drafted.node_count];
    let mut key_sources: Vec<usize> = Vec::new();
    let mut tasks = Vec::with_capacity(order.len());
    for (position, &task) in order.iter().enumerate() {
        let draft = drafted.tasks[task as usize];
        let key = draft.key as usize;
        let slot = draft.slot as usize;
        let own_chain = chain_preds.of(task as usize);
        key_sources.clear();
        key_sources.extend(
            sources[key]
                .iter()
                .copied()
                .filter(|&source| !has(&covered[slot], source)),
        );
        let group_len: usize = key_sources.iter().map(|&s| key_ids[s].len()).sum();
        let mut after = Vec::with_capacity(own_chain.len() + 1 + group_len);
        after.extend(
            own_chain
                .iter()
                .map(|&previous| TaskId(new_id[previous as usize])),
        );
        if let Some(previous) = last_on_node[slot] {
            let previous_key = drafted.tasks[previous as usize].key as usize;
            let listed = own_chain.contains(&previous) || key_sources.contains(&previous_key);
            if !listed {
                after.push(TaskId(new_id[previous as usize]));
            }
        }
        for &source in &key_sources {
            after.extend_from_slice(&key_ids[source]);
        }
        last_on_node[slot] = Some(task);
        for (word, bits) in covered[slot].iter_mut().zip(&rules.ancestors[key]) {
            *word |= bits;
        }
        let (service, action) = keys.decode(key);
        tasks.push(Task {
            id: TaskId(position as u32),
            node: draft.node,
            service: service.map(|service| deps.names[service].clone()),
            action,
            after,
            stage: stage_of[task as usize],
        });
    }
    TaskDag { tasks }
}
