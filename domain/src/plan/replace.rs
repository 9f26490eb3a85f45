//! A node replacement's plan: the new nodes are built first, with the services of the
//! nodes they stand in for; then every service that stays is configured for the
//! cluster without the old nodes (a load balancer moves to the new node before the
//! old one goes); then the old nodes' services are stopped and removed and the nodes
//! deleted.
//!
//! The two halves are an [`PlanOperation::AddNodes`] and an [`PlanOperation::RemoveNodes`]
//! planned as usual and chained, so a replacement orders its steps exactly as a grow
//! followed by a shrink would, without a moment in which the cluster runs short.
//!
//! [`PlanOperation::AddNodes`]: super::PlanOperation::AddNodes
//! [`PlanOperation::RemoveNodes`]: super::PlanOperation::RemoveNodes

use super::build::build;
use super::graph::ResolvedDeps;
use super::work;
use super::{PlanError, TaskDag};
use crate::layout::{Layout, NodeLayout};

const NAME: &str = "replace nodes";

/// The plan taking `old` to `new`, where `new` drops some nodes of `old` and adds as
/// many others; the nodes both have must be unchanged.
pub(crate) fn plan(old: &Layout, new: &Layout, deps: &ResolvedDeps) -> Result<TaskDag, PlanError> {
    let mut replaced = Vec::new();
    for node in &old.nodes {
        match new.nodes.iter().find(|other| other.number == node.number) {
            Some(same) if same == node => {}
            Some(_) => return Err(mismatch(format!("node {} would change", node.number))),
            None => replaced.push(node.number),
        }
    }
    let added: Vec<&NodeLayout> = new
        .nodes
        .iter()
        .filter(|node| !old.nodes.iter().any(|other| other.number == node.number))
        .collect();
    if replaced.is_empty() {
        return Err(mismatch("no node would be replaced".to_owned()));
    }
    if added.len() != replaced.len() {
        return Err(mismatch(format!(
            "{} nodes would go and {} come: a replacement brings one node for each",
            replaced.len(),
            added.len()
        )));
    }
    // Old and new nodes side by side: where the first half ends and the second starts.
    let mut both = old.clone();
    both.nodes.extend(added.into_iter().cloned());
    both.nodes.sort_by_key(|node| node.number);
    let grow = work::diff(old, &both, NAME, deps, work::allow(|a| a.add_nodes = true))?;
    let mut dag = build(&grow, deps)?;
    let shrink = work::diff(
        &both,
        new,
        NAME,
        deps,
        work::allow(|a| a.remove_nodes = true),
    )?;
    dag.append(build(&work::reconfigure_first(shrink, new, deps), deps)?);
    Ok(dag)
}

fn mismatch(detail: String) -> PlanError {
    PlanError::LayoutMismatch {
        operation: NAME,
        detail,
    }
}
