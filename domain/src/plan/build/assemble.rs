//! The final [`TaskDag`]: ids, per-node chains and `after` lists.

use super::rules::{has, GroupRules};
use super::{Csr, Drafted, Keys};
use crate::plan::graph::ResolvedDeps;
use crate::plan::{Task, TaskDag, TaskId};

/// Assigns ids in staged order, chains each node's tasks in that order, and writes
/// every task's `after` list.
///
/// A rule "every S task before this task" is left out when an earlier task on the
/// same node already waits for every S task: the node chain carries it. On nodes
/// running several services that share dependencies this removes most edges.
pub(super) fn assemble(
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
