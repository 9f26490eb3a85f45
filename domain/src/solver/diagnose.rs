//! Turning a failed solve into named constraints and the nearest sizes that work.
//!
//! The feasible cluster sizes form one interval: at least the covering number of
//! the minimum quantities, at most what the maximum quantities can fill (see
//! [`super::pack`]). Intersected with the template's size bounds, its ends are the
//! nearest satisfiable sizes; whichever end the request misses names the reason.

use super::error::{NearestSizes, Reason, Unsatisfiable};
use super::model::{units_of, Model, Phase, UNBOUNDED};
use super::pack::{Packer, StepLimit};
use super::problem::{LayoutProblem, SizeBounds};
use super::step_limit;

/// Sizes from `fewest` to `most` work (before the template's bounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Feasible {
    pub fewest: u32,
    pub most: u32,
}

impl Feasible {
    pub fn of(
        packer: &mut Packer<'_>,
        need: &[u32],
        headroom: &[u32],
    ) -> Result<Feasible, StepLimit> {
        Ok(Feasible {
            fewest: packer.min_nodes(need)?.max(1),
            most: packer.max_nodes(headroom),
        })
    }

    /// The closest allowed sizes to `size` inside both this interval and `bounds`.
    pub fn nearest(&self, size: u32, bounds: SizeBounds) -> NearestSizes {
        let allowed = SizeBounds {
            max: Some(self.most.min(bounds.max.unwrap_or(UNBOUNDED))),
            ..bounds
        };
        let (Some(low), Some(high)) = (allowed.step_up(self.fewest), allowed.step_down(UNBOUNDED))
        else {
            return NearestSizes::default();
        };
        if low > high {
            return NearestSizes::default();
        }
        if (low..=high).contains(&size) {
            // Inside the interval but off the template's step.
            return NearestSizes {
                below: size.checked_sub(1).and_then(|s| allowed.step_down(s)),
                above: size.checked_add(1).and_then(|s| allowed.step_up(s)),
            };
        }
        NearestSizes {
            below: (size > high).then_some(high),
            above: (size < low).then_some(low),
        }
    }
}

/// Why `size` is not one the template's bounds allow.
pub(crate) fn size_reason(bounds: SizeBounds, size: u32) -> Reason {
    if size >= bounds.min && bounds.max.is_none_or(|max| size <= max) {
        Reason::SizeOffStep {
            size,
            min: bounds.min,
            step: bounds.step,
        }
    } else {
        Reason::SizeOutOfBounds {
            size,
            min: bounds.min,
            max: bounds.max,
        }
    }
}

/// Why `problem` has no layout. `model_reasons` are the reasons the last phase's
/// model could not be built, if it could not.
pub(crate) fn explain(problem: &LayoutProblem, model_reasons: Vec<Reason>) -> Unsatisfiable {
    let bounds = problem.size_bounds;
    let mut reasons = Vec::new();
    if !bounds.contains(problem.size) {
        reasons.push(size_reason(bounds, problem.size));
    }
    let model = match Model::build(problem, Phase::All) {
        Ok(model) => model,
        Err(build_reasons) => {
            let mut all = if build_reasons.is_empty() {
                model_reasons
            } else {
                build_reasons
            };
            reasons.append(&mut all);
            return Unsatisfiable::new(reasons);
        }
    };
    let mut packer = Packer::new(&model);
    let need: Vec<u32> = model.units.iter().map(|unit| unit.lo).collect();
    let headroom: Vec<u32> = model.units.iter().map(|unit| unit.hi).collect();
    match Feasible::of(&mut packer, &need, &headroom) {
        Ok(feasible) => {
            reasons.extend(size_reasons(&model, &packer, &need, feasible, problem.size));
            if reasons.is_empty() {
                // The interval says the size works, so the search itself gave up.
                reasons.push(step_limit());
            }
            Unsatisfiable {
                reasons,
                nearest: feasible.nearest(problem.size, bounds),
            }
        }
        Err(StepLimit) => {
            // The exact minimum is out of reach; the cheap bounds still name what
            // cannot be met, but the nearest sizes are unknown.
            let bounded = Feasible {
                fewest: packer.lower_bound(&need).needed.max(1),
                most: packer.max_nodes(&headroom),
            };
            reasons.extend(size_reasons(&model, &packer, &need, bounded, problem.size));
            if reasons.is_empty() {
                reasons.push(step_limit());
            }
            Unsatisfiable::new(reasons)
        }
    }
}

/// Reasons `size` falls outside `feasible`, naming the constraints responsible.
pub(crate) fn size_reasons(
    model: &Model,
    packer: &Packer<'_>,
    need: &[u32],
    feasible: Feasible,
    size: u32,
) -> Vec<Reason> {
    let mut reasons = Vec::new();
    if size < feasible.fewest {
        for (unit, count) in model.units.iter().zip(need) {
            if *count > size {
                if let Some(service) = unit.members.get(unit.lo_from).cloned() {
                    reasons.push(Reason::QuantityTooHigh {
                        service,
                        min: *count,
                        size,
                    });
                }
            }
        }
        if reasons.is_empty() {
            let witness = packer.lower_bound(need);
            if witness.needed > size && witness.units.count_ones() > 1 {
                reasons.push(Reason::Separation {
                    services: units_of(witness.units)
                        .flat_map(|index| model.units[index].members.iter().cloned())
                        .collect(),
                    needed: witness.needed,
                    size,
                });
            } else {
                reasons.push(Reason::TooFewNodes {
                    needed: feasible.fewest,
                    size,
                });
            }
        }
    }
    if size > feasible.most {
        reasons.push(Reason::TooManyNodes {
            services: model
                .units
                .iter()
                .flat_map(|unit| unit.members.iter().cloned())
                .collect(),
            at_most: feasible.most,
            size,
        });
    }
    reasons
}
