//! How many nodes a set of per-unit needs takes: the feasibility oracle.
//!
//! Because every subset of a valid node set is valid, a remaining problem "R nodes,
//! unit u on between need[u] and headroom[u] of them" is feasible exactly when
//! `min_nodes(need) <= R <= max_nodes(headroom)`: a packing of the needs can be split
//! node by node (each split adds one node) down to single-unit nodes, and single-unit
//! nodes can be added while headroom lasts. So feasibility costs one covering number,
//! whatever the cluster size. The covering number (weighted colouring of the
//! "cannot share a node" hypergraph) is NP-hard in general; it is computed from a
//! lower bound (cliques of mutually exclusive units, `cantcoexist` groups) and a
//! greedy packing, which agree on realistic templates, and otherwise by a memoised
//! branch and bound over maximal node sets with a step limit.

use std::collections::HashMap;

use super::model::{bit, units_of, Model, UNBOUNDED};

/// Branch-and-bound steps before giving up.
pub(crate) const STEP_LIMIT: u64 = 2_000_000;

/// The search needed more than [`STEP_LIMIT`] steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StepLimit;

/// A lower bound on the covering number with the units that prove it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Witness {
    pub needed: u32,
    pub units: u64,
}

/// Computes covering numbers for one model, remembering exact answers.
pub(crate) struct Packer<'m> {
    model: &'m Model,
    memo: HashMap<Vec<u32>, u32>,
    steps: u64,
}

impl<'m> Packer<'m> {
    pub fn new(model: &'m Model) -> Self {
        Self {
            model,
            memo: HashMap::new(),
            steps: 0,
        }
    }

    /// Whether `remaining` more nodes can take units so that each unit u is on
    /// between `need[u]` and `headroom[u]` of them.
    pub fn feasible(
        &mut self,
        need: &[u32],
        headroom: &[u32],
        remaining: u32,
    ) -> Result<bool, StepLimit> {
        if need.iter().any(|n| *n > remaining) || remaining > self.max_nodes(headroom) {
            return Ok(false);
        }
        // Only "at most `remaining`?" matters: the bounds usually settle it.
        if self.lower_bound(need).needed > remaining {
            return Ok(false);
        }
        if self.greedy(need) <= remaining {
            return Ok(true);
        }
        Ok(self.exact(need)? <= remaining)
    }

    /// Most nodes `headroom` can fill (each node needs a unit unless nodes may carry
    /// only unconstrained services).
    pub fn max_nodes(&self, headroom: &[u32]) -> u32 {
        if self.model.empty_allowed {
            return UNBOUNDED;
        }
        let total: u64 = headroom.iter().map(|h| u64::from(*h)).sum();
        u32::try_from(total).unwrap_or(UNBOUNDED)
    }

    /// Fewest nodes covering every unit `need` times.
    pub fn min_nodes(&mut self, need: &[u32]) -> Result<u32, StepLimit> {
        let lower = self.lower_bound(need).needed;
        let upper = self.greedy(need);
        if lower >= upper {
            return Ok(upper);
        }
        self.exact(need)
    }

    /// The best of the cheap lower bounds, with the units behind it.
    pub fn lower_bound(&self, need: &[u32]) -> Witness {
        let mut best = Witness {
            needed: 0,
            units: 0,
        };
        for (index, count) in need.iter().enumerate() {
            if *count > best.needed {
                best = Witness {
                    needed: *count,
                    units: bit(index),
                };
            }
        }
        // Mutually exclusive units each need their own nodes.
        for (clique, total) in self.cliques(need) {
            if total > best.needed {
                best = Witness {
                    needed: total,
                    units: clique,
                };
            }
        }
        // A node holds at most k-1 units of a k-unit cantcoexist group.
        for group in &self.model.forbidden {
            let size = u64::from(group.count_ones());
            if size < 3 {
                continue;
            }
            let total: u64 = units_of(*group).map(|index| u64::from(need[index])).sum();
            let needed = u32::try_from(total.div_ceil(size - 1)).unwrap_or(UNBOUNDED);
            if needed > best.needed {
                best = Witness {
                    needed,
                    units: *group,
                };
            }
        }
        best
    }

    /// Greedy cliques of mutually exclusive units with their total need, one grown
    /// from each unit with a need (largest needs joined first).
    pub fn cliques(&self, need: &[u32]) -> Vec<(u64, u32)> {
        let mut order: Vec<usize> = (0..need.len()).filter(|index| need[*index] > 0).collect();
        order.sort_by_key(|index| (std::cmp::Reverse(need[*index]), *index));
        let mut found = Vec::with_capacity(order.len());
        for start in &order {
            let mut clique = bit(*start);
            let mut total = need[*start];
            for other in &order {
                if self.model.pair_conflicts[*other] & clique == clique {
                    clique |= bit(*other);
                    total = total.saturating_add(need[*other]);
                }
            }
            found.push((clique, total));
        }
        found
    }

    /// Largest-need-first packing, a batch of identical nodes at a time.
    pub fn greedy(&self, need: &[u32]) -> u32 {
        let mut left = need.to_vec();
        let mut nodes = 0u32;
        let mut order: Vec<usize> = (0..left.len()).collect();
        loop {
            order.sort_by_key(|index| (std::cmp::Reverse(left[*index]), *index));
            if order.first().is_none_or(|first| left[*first] == 0) {
                return nodes;
            }
            let mut set = 0u64;
            for index in &order {
                if left[*index] > 0 && self.model.can_add(set, *index) {
                    set |= bit(*index);
                }
            }
            let lowest_in = units_of(set).map(|index| left[index]).min().unwrap_or(1);
            let highest_out = order
                .iter()
                .filter(|index| set & bit(**index) == 0)
                .map(|index| left[*index])
                .max()
                .unwrap_or(0);
            // Same nodes as one at a time until the need order would change.
            let batch = lowest_in.saturating_sub(highest_out).max(1);
            for index in units_of(set) {
                left[index] = left[index].saturating_sub(batch);
            }
            nodes = nodes.saturating_add(batch);
        }
    }

    fn exact(&mut self, need: &[u32]) -> Result<u32, StepLimit> {
        if let Some(known) = self.memo.get(need) {
            return Ok(*known);
        }
        self.steps += 1;
        if self.steps > STEP_LIMIT {
            return Err(StepLimit);
        }
        let lower = self.lower_bound(need).needed;
        let mut best = self.greedy(need);
        if lower < best {
            // Some node carries the unit with the largest need; try each maximal
            // node set that contains it.
            let pivot = (0..need.len())
                .max_by_key(|index| (need[*index], std::cmp::Reverse(*index)))
                .unwrap_or(0);
            let open = (0..need.len())
                .filter(|index| need[*index] > 0)
                .fold(0u64, |mask, index| mask | bit(index));
            for set in self.maximal_sets(bit(pivot), open) {
                let mut child = need.to_vec();
                for index in units_of(set) {
                    child[index] -= 1;
                }
                if 1 + self.lower_bound(&child).needed >= best {
                    continue;
                }
                let value = 1 + self.exact(&child)?;
                best = best.min(value);
                if best <= lower {
                    break;
                }
            }
        }
        self.memo.insert(need.to_vec(), best);
        Ok(best)
    }

    /// Valid sets within `open` that contain `base` and to which no unit of `open`
    /// can be added.
    fn maximal_sets(&self, base: u64, open: u64) -> Vec<u64> {
        let mut found = Vec::new();
        let candidates: Vec<usize> = units_of(open & !base).collect();
        self.extend(base, &candidates, 0, open, &mut found);
        found
    }

    fn extend(&self, set: u64, candidates: &[usize], from: usize, open: u64, found: &mut Vec<u64>) {
        if from == candidates.len() {
            let maximal = units_of(open & !set).all(|index| !self.model.can_add(set, index));
            if maximal {
                found.push(set);
            }
            return;
        }
        let index = candidates[from];
        if self.model.can_add(set, index) {
            self.extend(set | bit(index), candidates, from + 1, open, found);
        }
        self.extend(set, candidates, from + 1, open, found);
    }
}
