//! Stage 3: how many nodes each layout gets.
//!
//! Coopr walks count vectors in decreasing lexicographic order (layouts in
//! preference order) from a greedy start and returns the first that meets every
//! quantity: the lexicographically largest feasible vector when the greedy start is
//! not refused. Corral computes that vector directly: walk layouts in preference
//! order and give each the most nodes that still leave a feasible remainder (one
//! covering-number test per candidate count, see [`super::pack`]). A layout earlier
//! in the order is never needed again, since any remainder using it would have let
//! it take more nodes when its turn came; so no backtracking is needed and the cost
//! does not grow with the cluster size beyond a binary search on each count.

use super::model::{units_of, Model, UNBOUNDED};
use super::order::{next_layout, Position};
use super::pack::{Packer, StepLimit};

/// Per-unit counts still to satisfy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Remaining {
    pub need: Vec<u32>,
    pub headroom: Vec<u32>,
}

impl Remaining {
    /// What the model's quantities leave once `used[u]` nodes already carry unit u.
    /// `None` if some unit is already over its maximum.
    pub fn after(model: &Model, used: &[u32]) -> Option<Remaining> {
        let mut need = Vec::with_capacity(model.units.len());
        let mut headroom = Vec::with_capacity(model.units.len());
        for (unit, used) in model.units.iter().zip(used) {
            if unit.hi != UNBOUNDED && *used > unit.hi {
                return None;
            }
            need.push(unit.lo.saturating_sub(*used));
            headroom.push(if unit.hi == UNBOUNDED {
                UNBOUNDED
            } else {
                unit.hi - used
            });
        }
        Some(Remaining { need, headroom })
    }

    fn take(&mut self, units: u64, count: u32) {
        for index in units_of(units) {
            self.need[index] = self.need[index].saturating_sub(count);
            if self.headroom[index] != UNBOUNDED {
                self.headroom[index] = self.headroom[index].saturating_sub(count);
            }
        }
    }
}

/// The preferred assignment of `nodes` new nodes, as (layout, count) in order, or
/// `None` when no assignment meets the quantities.
pub(crate) fn assign(
    model: &Model,
    packer: &mut Packer<'_>,
    mut remaining: Remaining,
    nodes: u32,
) -> Result<Option<Vec<(Position, u32)>>, StepLimit> {
    if !packer.feasible(&remaining.need, &remaining.headroom, nodes)? {
        return Ok(None);
    }
    let mut left = nodes;
    let mut chosen = Vec::new();
    let mut cursor: Option<Position> = None;
    while left > 0 {
        let required = mask_where(&remaining.need, |need| need == left);
        let available = mask_where(&remaining.headroom, |room| room > 0);
        // Mutually exclusive units whose needs add up to every remaining node:
        // each node must carry one of them.
        let hitting: Vec<u64> = packer
            .cliques(&remaining.need)
            .into_iter()
            .filter(|(clique, total)| *total == left && clique.count_ones() > 1)
            .map(|(clique, _)| clique)
            .collect();
        let Some(position) = next_layout(model, cursor.as_ref(), available, required, &hitting)
        else {
            // Unreachable when the feasibility test is exact; fail safe.
            return Ok(None);
        };
        let count = most_nodes(packer, &remaining, left, position.units)?;
        if count > 0 {
            remaining.take(position.units, count);
            left -= count;
            chosen.push((position, count));
        }
        cursor = Some(position);
    }
    Ok(Some(chosen))
}

/// The most nodes `units` can take with a feasible remainder.
fn most_nodes(
    packer: &mut Packer<'_>,
    remaining: &Remaining,
    left: u32,
    units: u64,
) -> Result<u32, StepLimit> {
    let mut cap = units_of(units).fold(left, |cap, index| cap.min(remaining.headroom[index]));
    let width = units.count_ones();
    if width >= 2 && packer.max_nodes(&remaining.headroom) != UNBOUNDED {
        // Each node of this layout uses `width` units of headroom where single-unit
        // nodes would use one; the rest still need a unit each.
        let total: u64 = remaining.headroom.iter().map(|room| u64::from(*room)).sum();
        let spare = total.saturating_sub(u64::from(left));
        let limit = spare / u64::from(width - 1);
        cap = cap.min(u32::try_from(limit).unwrap_or(UNBOUNDED));
    }
    let fits = |packer: &mut Packer<'_>, count: u32| -> Result<bool, StepLimit> {
        let mut after = remaining.clone();
        after.take(units, count);
        packer.feasible(&after.need, &after.headroom, left - count)
    };
    if cap == 0 || fits(packer, cap)? {
        return Ok(cap);
    }
    // Feasible counts form a prefix [0, best]; 0 is feasible.
    let (mut low, mut high) = (0u32, cap);
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        if fits(packer, middle)? {
            low = middle;
        } else {
            high = middle;
        }
    }
    Ok(low)
}

pub(crate) fn mask_where(values: &[u32], keep: impl Fn(u32) -> bool) -> u64 {
    values
        .iter()
        .enumerate()
        .filter(|(_, value)| keep(**value))
        .fold(0u64, |mask, (index, _)| mask | (1u64 << index))
}
