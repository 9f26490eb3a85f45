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
