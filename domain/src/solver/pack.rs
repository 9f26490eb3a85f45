//! How many nodes a set of per-unit needs takes: the feasibility oracle.
//!
//! Because every subset of a valid node set is valid, a remaining problem "R nodes,
//! unit u on between need[u] and headroom[u] of them" is feasible exactly when
//! `min_nodes(need) <= R <= max_nodes(headroom)`: a packing of the needs can be split
//! node by node (each split adds one node) down to single-unit nodes, and single-unit
//! nodes can be added while headroom lasts. So feasibility costs one covering number,
//! whatever the cluster size. The covering number (weighted colouring of the
//! "cannot share a node" hypergraph) is NP-hard in general; it is bracketed by a
//! lower bound (cliques of mutually exclusive units, `cantcoexist` groups) and a
//! greedy packing, which agree on realistic templates; otherwise a DSatur-style
//! branch and bound decides "at most k nodes?" exactly, within a step limit, and
//! the answers are remembered per need vector.

use std::collections::HashMap;

use super::model::{bit, units_of, Model, UNBOUNDED};

/// Branch-and-bound steps (over one whole solve) before giving up.
pub(crate) const STEP_LIMIT: u64 = 300_000;

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
    /// Per need vector: proven (lower, upper) bounds on its covering number.
    memo: HashMap<Vec<u32>, (u32, u32)>,
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
        self.at_most(need, remaining)
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
        let mut nodes = lower;
        while nodes < upper {
            if self.at_most(need, nodes)? {
                return Ok(nodes);
            }
            nodes += 1;
        }
        Ok(upper)
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

    /// Whether `need` fits on `nodes` nodes, remembering what was proven.
    fn at_most(&mut self, need: &[u32], nodes: u32) -> Result<bool, StepLimit> {
        let (mut lower, mut upper) = match self.memo.get(need) {
            Some(known) => *known,
            None => (self.lower_bound(need).needed, self.greedy(need)),
        };
        if nodes >= upper {
            return Ok(true);
        }
        if nodes < lower {
            return Ok(false);
        }
        let mut search = Colouring::new(self.model, need, nodes, &mut self.steps);
        let found = search.run()?;
        match found {
            Some(used) => upper = upper.min(used),
            None => lower = lower.max(nodes + 1),
        }
        self.memo.insert(need.to_vec(), (lower, upper));
        Ok(found.is_some())
    }
}

/// Exact search for a packing of `need` on at most `limit` nodes: each unit's
/// copies are placed one at a time, the most constrained unit first (fewest nodes
/// it can still join), onto an open node or a new one. Copies of a unit go to
/// nodes in increasing order, which removes the symmetric orderings.
struct Colouring<'m, 's> {
    model: &'m Model,
    left: Vec<u32>,
    /// Units on each open node.
    nodes: Vec<u64>,
    /// Per unit: the highest node index holding one of its copies, plus one.
    floor: Vec<usize>,
    limit: u32,
    steps: &'s mut u64,
}

impl<'m, 's> Colouring<'m, 's> {
    fn new(model: &'m Model, need: &[u32], limit: u32, steps: &'s mut u64) -> Self {
        Self {
            model,
            left: need.to_vec(),
            nodes: Vec::new(),
            floor: vec![0; need.len()],
            limit,
            steps,
        }
    }

    /// Nodes used by the packing found, if any.
    fn run(&mut self) -> Result<Option<u32>, StepLimit> {
        Ok(self
            .place()?
            .then(|| u32::try_from(self.nodes.len()).unwrap_or(u32::MAX)))
    }

    fn joinable(&self, unit: usize) -> impl Iterator<Item = usize> + '_ {
        (self.floor[unit]..self.nodes.len()).filter(move |node| {
            self.nodes[*node] & bit(unit) == 0 && self.model.can_add(self.nodes[*node], unit)
        })
    }

    fn place(&mut self) -> Result<bool, StepLimit> {
        *self.steps += 1;
        if *self.steps > STEP_LIMIT {
            return Err(StepLimit);
        }
        let open_slots = self
            .limit
            .saturating_sub(u32::try_from(self.nodes.len()).unwrap_or(u32::MAX));
        let can_open = open_slots > 0;
        // The unit with the fewest places to go; a unit with none ends the branch.
        let mut choice: Option<(usize, usize)> = None;
        for unit in 0..self.left.len() {
            if self.left[unit] == 0 {
                continue;
            }
            let joinable = self.joinable(unit).count();
            if joinable as u64 + u64::from(open_slots) < u64::from(self.left[unit]) {
                // Copies need distinct nodes: not enough left for them.
                return Ok(false);
            }
            let places = joinable + usize::from(can_open);
            let better = choice.is_none_or(|(_, best)| places < best);
            if better {
                choice = Some((unit, places));
            }
        }
        let Some((unit, _)) = choice else {
            return Ok(true);
        };
        let options: Vec<usize> = self.joinable(unit).collect();
        let saved_floor = self.floor[unit];
        self.left[unit] -= 1;
        for node in options {
            self.nodes[node] |= bit(unit);
            self.floor[unit] = node + 1;
            if self.place()? {
                return Ok(true);
            }
            self.nodes[node] &= !bit(unit);
        }
        if can_open {
            self.nodes.push(bit(unit));
            self.floor[unit] = self.nodes.len();
            if self.place()? {
                return Ok(true);
            }
            self.nodes.pop();
        }
        self.floor[unit] = saved_floor;
        self.left[unit] += 1;
        Ok(false)
    }
}
