//! Scaling a live cluster in: which nodes go.
//!
//! Nodes that stay keep everything (number, types, services), so the only constraints
//! a removal can break are the template's size bounds and each service's minimum
//! quantity (a service on the cluster keeps at least one node, as in a create). Every
//! per-node rule (`mustcoexist`, `cantcoexist`, whitelists) held before and still holds.
//!
//! When the user names the nodes, the removal is checked. Otherwise the solver chooses:
//! nodes with the same services are interchangeable, so it searches over those groups
//! (how many of each go), trying first the group whose services keep the most instances
//! beyond their minimum, and within a group the newest nodes (highest numbers) first.
//! The search is exact: if any choice of `count` nodes keeps every minimum, it finds one.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use super::diagnose::size_reason;
use super::error::{NearestSizes, Reason, Unsatisfiable};
use super::problem::LayoutProblem;
use crate::layout::{Layout, NodeLayout};
use crate::names::ServiceName;

/// Group-count vectors visited before the search gives up.
const SHRINK_STEP_LIMIT: usize = 200_000;

/// Which nodes a scale-in removes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodesToRemove {
    /// This many, chosen by the solver.
    Count(u32),
    /// Exactly these node numbers (each on the cluster).
    Named(BTreeSet<u32>),
}

/// The cluster after removing nodes from `nodes` (its current layout), or why no such
/// removal keeps the template's constraints. `problem` is the cluster's template as a
/// solve of its current services would see it; its `size` is ignored.
pub fn solve_removal(
    problem: &LayoutProblem,
    nodes: &[NodeLayout],
    which: &NodesToRemove,
) -> Result<Layout, Unsatisfiable> {
    let groups = Groups::new(problem, nodes);
    let total = u32::try_from(nodes.len()).unwrap_or(u32::MAX);
    let removed: BTreeSet<u32> = match which {
        NodesToRemove::Named(numbers) => {
            let count = u32::try_from(numbers.len()).unwrap_or(u32::MAX);
            check_size(problem, &groups, total, count)?;
            let left = groups.counts_without(|number| numbers.contains(&number));
            let reasons = groups.below_minimum(&left);
            if !reasons.is_empty() {
                return Err(Unsatisfiable::new(reasons));
            }
            numbers.clone()
        }
        NodesToRemove::Count(count) => {
            check_size(problem, &groups, total, *count)?;
            let mut search = Search::new(&groups);
            match search.remove(*count)? {
                Some(taken) => groups.numbers(&taken),
                None => return Err(groups.cannot_remove(problem, total, *count)),
            }
        }
    };
    Ok(Layout {
        template: problem.template.clone(),
        nodes: nodes
            .iter()
            .filter(|node| !removed.contains(&node.number))
            .cloned()
            .collect(),
    })
}

/// Refuses a removal that leaves a size the template does not allow (or no node).
fn check_size(
    problem: &LayoutProblem,
    groups: &Groups,
    total: u32,
    count: u32,
) -> Result<(), Unsatisfiable> {
    let bounds = problem.size_bounds;
    let left = total.saturating_sub(count);
    if count < total && bounds.contains(left) {
        return Ok(());
    }
    let mut refused = Unsatisfiable::one(if count >= total {
        Reason::RemovesEveryNode { size: total }
    } else {
        size_reason(bounds, left)
    });
    refused.nearest = groups.nearest_sizes(problem, total, left);
    Err(refused)
}

/// The cluster's nodes grouped by service set.
struct Groups {
    /// Each distinct service set with its nodes, newest first.
    sets: Vec<(BTreeSet<ServiceName>, Vec<u32>)>,
    /// Per service on the cluster: the nodes it needs at least.
    minimum: BTreeMap<ServiceName, u32>,
    /// Per service: how many nodes carry it now.
    count: BTreeMap<ServiceName, u32>,
}

impl Groups {
    fn new(problem: &LayoutProblem, nodes: &[NodeLayout]) -> Self {
        let mut by_set: BTreeMap<BTreeSet<ServiceName>, Vec<u32>> = BTreeMap::new();
        let mut count: BTreeMap<ServiceName, u32> = BTreeMap::new();
        for node in nodes {
            by_set
                .entry(node.services.clone())
                .or_default()
                .push(node.number);
            for service in &node.services {
                *count.entry(service.clone()).or_default() += 1;
            }
        }
        let minimum = count
            .keys()
            .map(|service| {
                let min = problem
                    .service_constraints
                    .get(service)
                    .map_or(1, |constraint| constraint.min.max(1));
                (service.clone(), min)
            })
            .collect();
        let sets = by_set
            .into_iter()
            .map(|(set, mut numbers)| {
                numbers.sort_unstable_by(|a, b| b.cmp(a));
                (set, numbers)
            })
            .collect();
        Self {
            sets,
            minimum,
            count,
        }
    }

    /// Per service: the nodes carrying it once the nodes `gone` picks are removed.
    fn counts_without(&self, gone: impl Fn(u32) -> bool) -> BTreeMap<ServiceName, u32> {
        let mut left = self.count.clone();
        for (set, numbers) in &self.sets {
            for &number in numbers {
                if gone(number) {
                    for service in set {
                        if let Some(count) = left.get_mut(service) {
                            *count -= 1;
                        }
                    }
                }
            }
        }
        left
    }

    fn below_minimum(&self, left: &BTreeMap<ServiceName, u32>) -> Vec<Reason> {
        left.iter()
            .filter_map(|(service, &remaining)| {
                let min = self.minimum.get(service).copied().unwrap_or(1);
                (remaining < min).then(|| Reason::RemovalBelowMinimum {
                    service: service.clone(),
                    remaining,
                    min,
                })
            })
            .collect()
    }

    /// Node numbers for a count per group (the newest of each group).
    fn numbers(&self, taken: &[u32]) -> BTreeSet<u32> {
        self.sets
            .iter()
            .zip(taken)
            .flat_map(|((_, numbers), &count)| numbers.iter().take(count as usize).copied())
            .collect()
    }

    /// The most nodes that can go at all (minimums only; sizes aside).
    fn most_removable(&self) -> Result<u32, Unsatisfiable> {
        let mut search = Search::new(self);
        search.deepest()
    }

    /// Why no `count` nodes can go, with the sizes that work.
    fn cannot_remove(&self, problem: &LayoutProblem, total: u32, count: u32) -> Unsatisfiable {
        let most = match self.most_removable() {
            Ok(most) => most,
            Err(refused) => return refused,
        };
        let binding: Vec<ServiceName> = self
            .count
            .iter()
            .filter(|(service, count)| **count <= self.minimum.get(*service).copied().unwrap_or(1))
            .map(|(service, _)| service.clone())
            .collect();
        Unsatisfiable {
            reasons: vec![Reason::CannotRemoveNodes {
                count,
                most,
                services: binding,
            }],
            nearest: self.nearest_sizes(problem, total, total.saturating_sub(count)),
        }
    }

    /// The closest sizes (nodes left) a removal can reach: at least one node removed,
    /// inside the template's bounds, keeping every minimum.
    fn nearest_sizes(&self, problem: &LayoutProblem, total: u32, wanted: u32) -> NearestSizes {
        let Ok(most) = self.most_removable() else {
            return NearestSizes::default();
        };
        let bounds = problem.size_bounds;
        let smallest = total.saturating_sub(most).max(1);
        let reachable = |size: &u32| bounds.contains(*size);
        NearestSizes {
            below: (smallest..wanted.min(total)).rev().find(reachable),
            above: (wanted.saturating_add(1).max(smallest)..total).find(reachable),
        }
    }
}

/// Depth-first search over how many nodes of each group go.
struct Search<'g> {
    groups: &'g Groups,
    taken: Vec<u32>,
    left: BTreeMap<ServiceName, u32>,
    seen: HashSet<Vec<u32>>,
}

impl<'g> Search<'g> {
    fn new(groups: &'g Groups) -> Self {
        Self {
            groups,
            taken: vec![0; groups.sets.len()],
            left: groups.count.clone(),
            seen: HashSet::new(),
        }
    }

    /// Counts per group removing `count` nodes, if any choice keeps every minimum.
    fn remove(&mut self, count: u32) -> Result<Option<Vec<u32>>, Unsatisfiable> {
        let mut most = 0;
        Ok(self.visit(count, &mut most)?.then(|| self.taken.clone()))
    }

    /// The most nodes any removal can take: the deepest state the search reaches when
    /// it never stops early.
    fn deepest(&mut self) -> Result<u32, Unsatisfiable> {
        let mut most = 0;
        self.visit(u32::MAX, &mut most)?;
        Ok(most)
    }

    /// Whether `count` more nodes can go from the current state; `most` records the
    /// most nodes taken in any state visited.
    fn visit(&mut self, count: u32, most: &mut u32) -> Result<bool, Unsatisfiable> {
        *most = (*most).max(self.taken.iter().sum());
        if count == 0 {
            return Ok(true);
        }
        if !self.seen.insert(self.taken.clone()) {
            return Ok(false);
        }
        if self.seen.len() > SHRINK_STEP_LIMIT {
            return Err(Unsatisfiable::one(Reason::SearchLimit {
                limit: SHRINK_STEP_LIMIT as u64,
            }));
        }
        for group in self.candidates() {
            self.take(group, true);
            if self.visit(count - 1, most)? {
                return Ok(true);
            }
            self.take(group, false);
        }
        Ok(false)
    }

    /// Takes one more node of `group` (or puts it back).
    fn take(&mut self, group: usize, take: bool) {
        let (set, _) = &self.groups.sets[group];
        if take {
            self.taken[group] += 1;
        } else {
            self.taken[group] -= 1;
        }
        for service in set {
            if let Some(left) = self.left.get_mut(service) {
                if take {
                    *left -= 1;
                } else {
                    *left += 1;
                }
            }
        }
    }

    /// Groups with a node that can go now, best first: the group whose services keep
    /// the most instances beyond their minimum, then the one whose next node is newest.
    fn candidates(&self) -> Vec<usize> {
        let mut found: Vec<(u32, u32, usize)> = self
            .groups
            .sets
            .iter()
            .enumerate()
            .filter(|(group, (_, numbers))| (self.taken[*group] as usize) < numbers.len())
            .filter_map(|(group, (set, numbers))| {
                let slack = set
                    .iter()
                    .map(|service| {
                        let left = self.left.get(service).copied().unwrap_or(0);
                        let min = self.groups.minimum.get(service).copied().unwrap_or(1);
                        left.checked_sub(min)
                    })
                    .try_fold(u32::MAX, |lowest, slack| Some(lowest.min(slack?)))?;
                if slack == 0 {
                    return None;
                }
                let next = numbers[self.taken[group] as usize];
                Some((slack, next, group))
            })
            .collect();
        found.sort_unstable_by_key(|&(slack, next, _)| std::cmp::Reverse((slack, next)));
        found.into_iter().map(|(_, _, group)| group).collect()
    }
}
