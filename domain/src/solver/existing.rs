//! Solving with a live cluster's nodes fixed.
//!
//! Existing nodes keep their numbers, hardware, image and services. When services
//! are being added, each existing node (in number order) takes the largest set of
//! the new services it can carry (more services first, then Coopr's name order),
//! backtracking when that leaves the rest unplaceable; whatever the existing nodes
//! cannot hold goes onto new nodes, as few as the request allows, laid out by the
//! normal count search and numbered after the highest existing node.

use std::collections::BTreeSet;

use super::diagnose::Feasible;
use super::error::{Reason, Unsatisfiable};
use super::model::{bit, units_of, Model, UNBOUNDED};
use super::pack::{Packer, StepLimit};
use super::problem::{Existing, LayoutProblem, SizeBounds};
use super::search::{assign, Remaining};
use super::{new_nodes, phases, step_limit};
use crate::layout::{Layout, NodeLayout};
use crate::names::ServiceName;

/// Extension choices tried before giving up.
const EXTEND_STEP_LIMIT: u64 = 200_000;

pub(crate) fn solve(problem: &LayoutProblem, existing: &Existing) -> Result<Layout, Unsatisfiable> {
    let mut nodes = existing.nodes.clone();
    nodes.sort_by_key(|node| node.number);
    let count = u32::try_from(nodes.len()).unwrap_or(u32::MAX);
    let mut problem = problem.clone();
    let present: BTreeSet<ServiceName> = nodes
        .iter()
        .flat_map(|node| node.services.iter().cloned())
        .collect();
    for service in &present {
        if !problem.services.contains(service) {
            problem.services.push(service.clone());
        }
    }
    let smallest = problem.size.max(count);
    let largest = existing.grow_up_to.unwrap_or(problem.size).max(smallest);
    let bounds = problem.size_bounds;
    let low = smallest.max(bounds.min);
    let high = largest.min(bounds.max.unwrap_or(u32::MAX));
    if low > high {
        return Err(Unsatisfiable::one(Reason::SizeOutOfBounds {
            size: smallest,
            min: bounds.min,
            max: bounds.max,
        }));
    }
    if low == high && !bounds.on_step(low) {
        // Adding nodes asks for exactly this size; growth ranges are checked below.
        let mut refused = Unsatisfiable::one(super::diagnose::size_reason(bounds, low));
        refused.nearest = Feasible {
            fewest: count,
            most: UNBOUNDED,
        }
        .nearest(low, bounds);
        return Err(refused);
    }
    let next_number = nodes
        .last()
        .map_or(crate::layout::FIRST_NODE_NUMBER, |node| node.number + 1);

    let mut failure = Unsatisfiable::one(Reason::CannotPlaceOnExisting {
        grow_up_to: existing.grow_up_to,
    });
    for phase in phases(&problem) {
        let model = match Model::build(&problem, phase) {
            Ok(model) => model,
            Err(reasons) => {
                failure = Unsatisfiable::new(reasons);
                continue;
            }
        };
        let fixed = match Fixed::new(&model, &problem, &nodes, &present, existing.extend_nodes) {
            Ok(fixed) => fixed,
            Err(reason) => return Err(Unsatisfiable::one(reason)),
        };
        let Some(remaining) = Remaining::after(&model, &fixed.used) else {
            return Err(Unsatisfiable::new(over_max(&model, &fixed.used)));
        };
        let mut packer = Packer::new(&model);
        let new_range = (low - count, high - count);
        let mut search = Extend {
            model: &model,
            fixed: &fixed,
            packer: &mut packer,
            new_range,
            steps: 0,
            chosen: vec![0; nodes.len()],
        };
        match search.run(remaining.clone()) {
            Ok(Some((new_count, _))) if !bounds.on_step(count + new_count) => {
                // Growth ranges are searched without the step; such a size is refused.
                failure =
                    Unsatisfiable::one(super::diagnose::size_reason(bounds, count + new_count));
            }
            Ok(Some((new_count, counts))) => {
                let mut layout_nodes: Vec<NodeLayout> = nodes
                    .iter()
                    .zip(&search.chosen)
                    .zip(&fixed.base)
                    .map(|((node, added), base)| {
                        let mut node = node.clone();
                        if existing.extend_nodes {
                            node.services.extend(model.services_of(added | base));
                        }
                        node
                    })
                    .collect();
                layout_nodes.extend(new_nodes(&model, &counts, next_number));
                debug_assert_eq!(layout_nodes.len(), (count + new_count) as usize);
                return Ok(Layout {
                    template: problem.template.clone(),
                    nodes: layout_nodes,
                });
            }
            Ok(None) => {
                if !existing.extend_nodes {
                    failure = add_nodes_failure(
                        &model,
                        &mut packer,
                        &remaining,
                        count,
                        smallest,
                        &problem,
                    );
                }
            }
            Err(StepLimit) => return Err(Unsatisfiable::one(step_limit())),
        }
    }
    Err(failure)
}

/// Why adding nodes to untouched existing ones fails, and the sizes that work.
fn add_nodes_failure(
    model: &Model,
    packer: &mut Packer<'_>,
    remaining: &Remaining,
    existing: u32,
    size: u32,
    problem: &LayoutProblem,
) -> Unsatisfiable {
    let Ok(feasible) = Feasible::of(packer, &remaining.need, &remaining.headroom) else {
        return Unsatisfiable::one(step_limit());
    };
    let new_nodes = size - existing;
    let mut reasons =
        super::diagnose::size_reasons(model, packer, &remaining.need, feasible, new_nodes);
    if reasons.is_empty() {
        reasons.push(Reason::CannotPlaceOnExisting { grow_up_to: None });
    }
    let shifted = Feasible {
        fewest: feasible.fewest.saturating_add(existing),
        most: feasible.most.saturating_add(existing),
    };
    let bounds = problem.size_bounds;
    Unsatisfiable {
        reasons,
        nearest: shifted.nearest(
            size,
            SizeBounds {
                min: bounds.min.max(existing),
                ..bounds
            },
        ),
    }
}

fn over_max(model: &Model, used: &[u32]) -> Vec<Reason> {
    model
        .units
        .iter()
        .zip(used)
        .filter(|(unit, used)| **used > unit.hi)
        .filter_map(|(unit, used)| {
            Some(Reason::ExistingOverMax {
                service: unit.members.first()?.clone(),
                count: *used,
                max: unit.hi,
            })
        })
        .collect()
}

/// What the existing nodes already hold and what they could still take.
struct Fixed {
    /// Per node: units it already carries (partly or wholly).
    base: Vec<u64>,
    /// Per node: new units it could carry on its own.
    eligible: Vec<u64>,
    /// Per unit: existing nodes carrying it.
    used: Vec<u32>,
    /// `suffix[i][u]`: nodes from `i` on that could take unit `u`.
    suffix: Vec<Vec<u32>>,
}

impl Fixed {
    fn new(
        model: &Model,
        problem: &LayoutProblem,
        nodes: &[NodeLayout],
        present: &BTreeSet<ServiceName>,
        extend: bool,
    ) -> Result<Fixed, Reason> {
        let fresh = model
            .units
            .iter()
            .enumerate()
            .filter(|(_, unit)| unit.members.iter().any(|member| !present.contains(member)))
            .fold(0u64, |mask, (index, _)| mask | bit(index));
        let mut base = Vec::with_capacity(nodes.len());
        let mut eligible = Vec::with_capacity(nodes.len());
        let mut used = vec![0u32; model.units.len()];
        for node in nodes {
            let carried = model
                .units
                .iter()
                .enumerate()
                .filter(|(_, unit)| {
                    unit.members
                        .iter()
                        .any(|member| node.services.contains(member))
                })
                .fold(0u64, |mask, (index, _)| mask | bit(index));
            for index in units_of(carried) {
                used[index] += 1;
            }
            if extend {
                check_completion(model, problem, node, carried)?;
            }
            let takes = if extend {
                units_of(fresh & !carried)
                    .filter(|index| {
                        let unit = &model.units[*index];
                        unit.allows_hardware(node.hardwaretype.as_str())
                            && unit.allows_image(node.imagetype.as_str())
                            && adds_no_violation(model, carried, bit(*index))
                    })
                    .fold(0u64, |mask, index| mask | bit(index))
            } else {
                0
            };
            base.push(carried);
            eligible.push(takes);
        }
        let mut suffix = vec![vec![0u32; model.units.len()]; nodes.len() + 1];
        for position in (0..nodes.len()).rev() {
            let mut counts = suffix[position + 1].clone();
            for index in units_of(eligible[position]) {
                counts[index] += 1;
            }
            suffix[position] = counts;
        }
        Ok(Fixed {
            base,
            eligible,
            used,
            suffix,
        })
    }
}

/// A node carrying part of a `mustcoexist` group gets the rest of it; that must not
/// complete a `cantcoexist` group or break a whitelist. (Violations the node already
/// had, say from an older template version, are left alone.)
fn check_completion(
    model: &Model,
    problem: &LayoutProblem,
    node: &NodeLayout,
    carried: u64,
) -> Result<(), Reason> {
    let completed = model.services_of(carried);
    let invalid = |detail: String| Reason::ExistingNodeInvalid {
        number: node.number,
        detail,
    };
    for index in units_of(carried) {
        let unit = &model.units[index];
        if unit
            .members
            .iter()
            .all(|member| node.services.contains(member))
        {
            continue;
        }
        if !unit.allows_hardware(node.hardwaretype.as_str())
            || !unit.allows_image(node.imagetype.as_str())
        {
            return Err(invalid(format!(
                "services {} must coexist but do not all allow {} / {}",
                join(&unit.members),
                node.hardwaretype,
                node.imagetype
            )));
        }
    }
    for group in &problem.layout.cant_coexist {
        let now = group
            .iter()
            .all(|service| completed.contains(service) || node.services.contains(service));
        let before = group.iter().all(|service| node.services.contains(service));
        if now && !before {
            return Err(invalid(format!(
                "completing its mustcoexist groups would put cantcoexist group {} on it",
                join(group)
            )));
        }
    }
    Ok(())
}

fn join(names: &[ServiceName]) -> String {
    let parts: Vec<&str> = names.iter().map(ServiceName::as_str).collect();
    format!("[{}]", parts.join(", "))
}

/// Whether adding `extra` to a node carrying `base` completes no `cantcoexist`
/// group that `base` alone did not (existing violations are not ours to fix).
fn adds_no_violation(model: &Model, base: u64, extra: u64) -> bool {
    let set = base | extra;
    model
        .forbidden
        .iter()
        .all(|mask| mask & set != *mask || mask & base == *mask)
}

/// The backtracking walk over existing nodes.
struct Extend<'a, 'm> {
    model: &'m Model,
    fixed: &'a Fixed,
    packer: &'a mut Packer<'m>,
    /// Fewest and most new nodes allowed.
    new_range: (u32, u32),
    steps: u64,
    /// Per existing node: the units added to it.
    chosen: Vec<u64>,
}

type Assignment = (u32, Vec<(super::order::Position, u32)>);

impl Extend<'_, '_> {
    fn run(&mut self, remaining: Remaining) -> Result<Option<Assignment>, StepLimit> {
        self.visit(0, remaining)
    }

    fn visit(
        &mut self,
        position: usize,
        remaining: Remaining,
    ) -> Result<Option<Assignment>, StepLimit> {
        self.steps += 1;
        if self.steps > EXTEND_STEP_LIMIT {
            return Err(StepLimit);
        }
        let most_new = self.new_range.1;
        let starved = remaining.need.iter().enumerate().any(|(index, need)| {
            u64::from(*need) > u64::from(self.fixed.suffix[position][index]) + u64::from(most_new)
        });
        if starved {
            return Ok(None);
        }
        if position == self.fixed.base.len() {
            return self.place_new(remaining);
        }
        let open = self.fixed.eligible[position]
            & units_of(self.fixed.eligible[position])
                .filter(|index| remaining.headroom[*index] > 0)
                .fold(0u64, |mask, index| mask | bit(index));
        for extra in self.options(position, open) {
            let mut next = remaining.clone();
            for index in units_of(extra) {
                next.need[index] = next.need[index].saturating_sub(1);
                if next.headroom[index] != super::model::UNBOUNDED {
                    next.headroom[index] -= 1;
                }
            }
            self.chosen[position] = extra;
            if let Some(found) = self.visit(position + 1, next)? {
                return Ok(Some(found));
            }
        }
        self.chosen[position] = 0;
        Ok(None)
    }

    /// Valid additions for one node: more services first, then Coopr's name order.
    fn options(&self, position: usize, open: u64) -> Vec<u64> {
        let base = self.fixed.base[position];
        let mut found = Vec::new();
        let indices: Vec<usize> = units_of(open).collect();
        self.collect(base, 0, &indices, 0, &mut found);
        found.sort_by_key(|extra| std::cmp::Reverse(self.model.weight_of(*extra)));
        found
    }

    fn collect(&self, base: u64, extra: u64, indices: &[usize], from: usize, found: &mut Vec<u64>) {
        if from == indices.len() {
            found.push(extra);
            return;
        }
        let with = extra | bit(indices[from]);
        if adds_no_violation(self.model, base, with) {
            self.collect(base, with, indices, from + 1, found);
        }
        self.collect(base, extra, indices, from + 1, found);
    }

    /// The fewest new nodes that hold what the existing ones left over.
    fn place_new(&mut self, remaining: Remaining) -> Result<Option<Assignment>, StepLimit> {
        let (fewest_new, most_new) = self.new_range;
        let fewest = self.packer.min_nodes(&remaining.need)?;
        let most = self.packer.max_nodes(&remaining.headroom);
        let count = fewest.max(fewest_new);
        if count > most.min(most_new) {
            return Ok(None);
        }
        Ok(assign(self.model, self.packer, remaining, count)?.map(|counts| (count, counts)))
    }
}
