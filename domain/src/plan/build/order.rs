//! Coopr's stages for the planned tasks, and the order each node runs its tasks in.

use super::{Csr, Drafted, Keys};

/// Coopr's layering: a task's layer is one more than its latest predecessor's.
pub(super) fn layers(
    drafted: &Drafted,
    key_order: &[usize],
    sources: &[Vec<usize>],
    chain_preds: &Csr,
    keys: Keys,
) -> Vec<u32> {
    // Walked forward, along the edges to predecessors; a task with nothing before it
    // is in layer 0.
    let forward = key_order.iter().copied();
    longest_paths(drafted, forward, sources, chain_preds, keys, 0)
}

/// Longest number of tasks from each task to the end of the plan (itself included),
/// following dependency and chain edges: the tasks on the critical path go first.
pub(super) fn bottom_levels(
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
    // Walked backward, along the edges to successors; a task with nothing after it
    // counts itself, 1.
    let backward = key_order.iter().rev().copied();
    longest_paths(drafted, backward, &targets, &chain_successors, keys, 1)
}

/// For each task, one more than the largest value among its `task_edges` neighbours
/// and among every task of its key's `key_edges` neighbour keys, and at least `alone`
/// when its key has no neighbour keys: the longest path that reaches it along the
/// edges given, counted from `alone`. Keys are visited in `key_order`, which must put
/// each key after its `key_edges` neighbours; layers and bottom levels are this one
/// walk, forward and backward.
fn longest_paths(
    drafted: &Drafted,
    key_order: impl Iterator<Item = usize>,
    key_edges: &[Vec<usize>],
    task_edges: &Csr,
    keys: Keys,
    alone: u32,
) -> Vec<u32> {
    let mut length = vec![0u32; drafted.tasks.len()];
    let mut key_max = vec![0u32; keys.count()];
    for key in key_order {
        let group_floor = key_edges[key]
            .iter()
            .map(|&other| key_max[other] + 1)
            .max()
            .unwrap_or(alone);
        let mut max = 0;
        for &task in &drafted.key_tasks[key] {
            let task = task as usize;
            let value = task_edges
                .of(task)
                .iter()
                .map(|&other| length[other as usize] + 1)
                .fold(group_floor, u32::max);
            length[task] = value;
            max = max.max(value);
        }
        key_max[key] = max;
    }
    length
}

/// Splits each layer so no node has two tasks in one stage and returns the tasks in
/// (stage, node) order with each task's stage. A node's tasks within a layer go to
/// consecutive sub-stages, longest remaining path first (then action, service).
pub(super) fn staged_order(
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
