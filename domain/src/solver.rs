//! The layout solver: template constraints + a cluster size → which services run on
//! which node, on which hardware and image (§4 of docs/coopr-format.md).
//!
//! It follows Coopr's three stages and preference order, so it returns Coopr's
//! layout wherever Coopr succeeds with every service placed, minus the Coopr
//! behaviour Corral does not copy: every requested service gets a node, default
//! types are preferences rather than the only candidates, and feasible sizes are
//! never refused by a greedy pre-check. Instead of Coopr's exponential walk over
//! count vectors it computes the same answer layout by layout with an exact
//! feasibility test (modules `pack` and `search`), so its cost depends on the
//! number of constrained services, not on the node count.
//!
//! Choices made where Coopr gives no answer:
//! - Types: the solver first tries the preferred (default) types alone, which is
//!   Coopr's candidate set, and returns that answer if there is one. Only if that
//!   fails does it widen to every candidate type; then layouts on the preferred
//!   types come first in the order (as many nodes as possible keep the defaults),
//!   and within each band Coopr's order applies. A set's type is the first
//!   candidate every member allows (preferred first, then by name).
//! - Quantities: a minimum of 0 is read as 1, for services in layout groups too.
//! - Unsatisfiable requests name the constraints and the nearest feasible sizes
//!   within the template's bounds; feasible sizes always form one interval.
//! - The covering search is exact but NP-hard in general (it is graph colouring);
//!   on pathological templates (dozens of services with dense `cantcoexist`
//!   pairs) it stops after a fixed number of steps with [`Reason::SearchLimit`].
//! - Requests above [`MAX_NODES`] nodes are refused rather than materialised.

mod catalog;
mod contract;
mod diagnose;
mod error;
mod existing;
mod model;
mod order;
mod pack;
mod problem;
mod search;
mod shrink;

use crate::layout::{Layout, NodeLayout, FIRST_NODE_NUMBER};
use crate::names::{HardwareTypeName, ImageTypeName};

pub use catalog::SolveRequest;
pub use contract::{ContractLayout, ContractNode};
pub use error::{NearestSizes, Reason, TypeKind, Unsatisfiable};
pub use problem::{
    Existing, LayoutGroups, LayoutProblem, ServiceConstraint, SizeBounds, TypeCandidates, Unusable,
    UnusableType,
};

use model::{Model, Phase};
use order::Position;
use pack::{Packer, StepLimit, STEP_LIMIT};
use search::{assign, Remaining};
pub use shrink::{solve_removal, NodesToRemove};

/// Largest cluster the solver lays out.
pub const MAX_NODES: u32 = 100_000;

/// Solves a new cluster: `problem.size` nodes numbered from [`FIRST_NODE_NUMBER`].
pub fn solve(problem: &LayoutProblem) -> Result<Layout, Unsatisfiable> {
    if problem.size > MAX_NODES {
        return Err(too_many_nodes(problem.size));
    }
    let mut last_reasons = Vec::new();
    for phase in phases(problem) {
        let model = match Model::build(problem, phase) {
            Ok(model) => model,
            Err(reasons) => {
                last_reasons = reasons;
                continue;
            }
        };
        if !problem.size_bounds.contains(problem.size) {
            break;
        }
        let mut packer = Packer::new(&model);
        let used = vec![0; model.units.len()];
        let Some(remaining) = Remaining::after(&model, &used) else {
            continue;
        };
        match assign(&model, &mut packer, remaining, problem.size) {
            Ok(Some(counts)) => {
                return Ok(Layout {
                    template: problem.template.clone(),
                    nodes: new_nodes(&model, &counts, FIRST_NODE_NUMBER),
                })
            }
            Ok(None) => {}
            Err(StepLimit) => return Err(Unsatisfiable::one(step_limit())),
        }
    }
    Err(diagnose::explain(problem, last_reasons))
}

/// Solves `request` on a (resolved) catalog template: [`LayoutProblem::from_catalog`]'s
/// pre-checks, then [`solve`].
pub fn solve_request(
    catalog: &crate::catalog::Catalog,
    template: &crate::catalog::ClusterTemplate,
    request: &SolveRequest,
) -> Result<Layout, Unsatisfiable> {
    solve(&LayoutProblem::from_catalog(catalog, template, request)?)
}

/// Solves a change to a live cluster whose nodes stay where they are: new services
/// go onto existing nodes when `existing.extend_nodes` (add services), new nodes are
/// numbered after the highest existing one (add nodes, or growth the request allows).
pub fn solve_with_existing(
    problem: &LayoutProblem,
    existing: &Existing,
) -> Result<Layout, Unsatisfiable> {
    let largest = existing
        .grow_up_to
        .unwrap_or(problem.size)
        .max(problem.size);
    if largest > MAX_NODES || existing.nodes.len() > MAX_NODES as usize {
        return Err(too_many_nodes(largest));
    }
    if existing.nodes.is_empty() {
        return solve(problem);
    }
    existing::solve(problem, existing)
}

/// The CLI/API JSON of a layout (see [`ContractLayout`]), with its `size`.
pub fn to_contract_json(layout: &Layout) -> serde_json::Value {
    ContractLayout::json(layout)
}

/// Coopr's candidates first; the wider set only if they cannot do it.
fn phases(problem: &LayoutProblem) -> Vec<Phase> {
    let widens = |preferred: bool, candidates: usize| preferred && candidates > 1;
    if widens(
        problem.hardware.preferred.is_some(),
        problem.hardware.candidates.len(),
    ) || widens(
        problem.images.preferred.is_some(),
        problem.images.candidates.len(),
    ) {
        vec![Phase::Preferred, Phase::All]
    } else {
        vec![Phase::All]
    }
}

fn too_many_nodes(size: u32) -> Unsatisfiable {
    Unsatisfiable::one(Reason::TooLarge {
        what: "nodes".to_owned(),
        count: size as usize,
        limit: MAX_NODES as usize,
    })
}

fn step_limit() -> Reason {
    Reason::SearchLimit { limit: STEP_LIMIT }
}

/// Nodes for `counts`, numbered from `first` in layout order.
fn new_nodes(model: &Model, counts: &[(Position, u32)], first: u32) -> Vec<NodeLayout> {
    let mut nodes = Vec::new();
    let mut number = first;
    for (position, count) in counts {
        let (hr, ir) = position.ranks(model);
        let services = model.services_of(position.units);
        let hardwaretype = type_name::<HardwareTypeName>(&model.hardware, hr);
        let imagetype = type_name::<ImageTypeName>(&model.images, ir);
        let (Some(hardwaretype), Some(imagetype)) = (hardwaretype, imagetype) else {
            continue;
        };
        for _ in 0..*count {
            nodes.push(NodeLayout {
                number,
                hardwaretype: hardwaretype.clone(),
                imagetype: imagetype.clone(),
                services: services.clone(),
            });
            number += 1;
        }
    }
    nodes
}

fn type_name<T: std::str::FromStr>(names: &[String], rank: u32) -> Option<T> {
    names.get(rank as usize).and_then(|name| name.parse().ok())
}

#[cfg(test)]
mod tests;
