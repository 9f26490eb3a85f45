//! The cross-service rules of a plan at key level: which (service, action) groups
//! must wait for which, checked for cycles and stripped of rules two others imply.

use super::{Drafted, Keys};
use crate::names::ServiceName;
use crate::plan::graph::{DepKind, ResolvedDeps, ServiceAction};
use crate::plan::PlanError;

/// Cross-service rules as (source key, target key): every source task must finish
/// before any target task starts. Only keys with planned tasks take part. `phase_rules`
/// are the builder's own (prelude before teardown), added as they are.
pub(super) fn group_edges(
    deps: &ResolvedDeps,
    keys: Keys,
    key_tasks: &[Vec<u32>],
    phase_rules: &[(usize, usize)],
) -> Vec<(usize, usize)> {
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
    edges.extend_from_slice(phase_rules);
    edges.sort_unstable();
    edges.dedup();
    edges
}

/// Orders keys so every task edge goes forward, or names a dependency cycle.
pub(super) fn key_topological_order(
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
pub(super) struct GroupRules {
    /// Source keys per target key, without rules implied by two others (every A
    /// before every B, and every B before every C, imply every A before every C;
    /// B has tasks, so nothing is lost).
    pub sources: Vec<Vec<usize>>,
    /// Per key K, a bit set of the keys S whose every task precedes every K task.
    pub ancestors: Vec<Vec<u64>>,
}

pub(super) fn has(bits: &[u64], key: usize) -> bool {
    bits[key / 64] & (1 << (key % 64)) != 0
}

pub(super) fn group_rules(
    keys: Keys,
    group_edges: &[(usize, usize)],
    key_order: &[usize],
) -> GroupRules {
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
