//! Constraints that contradict each other at every cluster size
//! (docs/coopr-format.md §3 error 8).
//!
//! Must-coexist groups are cut down to the default services and chained through
//! shared members, as the solver does (A+B and B+C force A+B+C).

use std::collections::BTreeSet;

use super::Report;
use crate::catalog::{ClusterTemplate, Count};

/// Chained must-coexist groups: the first group's index and the default services
/// they hold together.
fn chained_groups<'t>(
    template: &'t ClusterTemplate,
    defaults: &BTreeSet<&'t str>,
) -> Vec<(usize, BTreeSet<&'t str>)> {
    let Some(layout) = template.layout() else {
        return Vec::new();
    };
    let mut chains: Vec<(usize, BTreeSet<&str>)> = Vec::new();
    for (index, group) in layout.mustcoexist.iter().enumerate() {
        let members: BTreeSet<&str> = group
            .iter()
            .map(|service| service.as_str())
            .filter(|service| defaults.contains(service))
            .collect();
        if members.len() < 2 {
            continue;
        }
        let mut chain = (index, members);
        chains.retain(|(first, other)| {
            if other.is_disjoint(&chain.1) {
                return true;
            }
            chain.0 = chain.0.min(*first);
            chain.1.extend(other.iter().copied());
            false
        });
        chains.push(chain);
    }
    chains.sort_by_key(|(first, _)| *first);
    chains
}

pub(super) fn check(template: &ClusterTemplate, base: &str, report: &mut Report) {
    let Some(constraints) = &template.constraints else {
        return;
    };
    let defaults: BTreeSet<&str> = template
        .defaults
        .service_names()
        .map(|service| service.as_str())
        .collect();
    for (first, chain) in chained_groups(template, &defaults) {
        let group_path = format!("{base}.constraints.layout.mustcoexist[{first}]");
        for (index, cant) in constraints.layout.cantcoexist.iter().enumerate() {
            if !cant.is_empty() && cant.iter().all(|s| chain.contains(s.as_str())) {
                report.error(
                    format!("{base}.constraints.layout.cantcoexist[{index}]"),
                    format!(
                        "all of these default services must coexist (constraints.layout.mustcoexist[{first}]), so none of them can be placed"
                    ),
                );
            }
        }
        check_quantities(template, &chain, &group_path, report);
        check_whitelists(template, &chain, &group_path, report);
    }
    // A negative size max is reported on its own; comparing with it says nothing.
    let size_max = template.size().max.and_then(Count::bounded);
    if let Some(size_max) = size_max.and_then(|max| u32::try_from(max).ok()) {
        for (service, constraint) in &constraints.services {
            let min = constraint.min_nodes();
            if min > size_max {
                report.error(
                    format!("{base}.constraints.services.{service}.quantities.min"),
                    format!("min {min} is above constraints.size.max {size_max}"),
                );
            }
        }
    }
}

/// Services that always share nodes share their count, so their ranges must meet.
fn check_quantities(
    template: &ClusterTemplate,
    chain: &BTreeSet<&str>,
    at: &str,
    report: &mut Report,
) {
    let mut highest_min: Option<(&str, u32)> = None;
    let mut lowest_max: Option<(&str, u32)> = None;
    for &service in chain {
        let Some(constraint) = template.service_constraint(service) else {
            continue;
        };
        let min = constraint.min_nodes();
        if highest_min.is_none_or(|(_, best)| min > best) {
            highest_min = Some((service, min));
        }
        if let Some(max) = constraint.max_nodes() {
            if lowest_max.is_none_or(|(_, best)| max < best) {
                lowest_max = Some((service, max));
            }
        }
    }
    if let (Some((low, min)), Some((high, max))) = (highest_min, lowest_max) {
        if min > max {
            report.error(
                at.to_owned(),
                format!(
                    "\"{low}\" (min {min}) and \"{high}\" (max {max}) must share nodes, so their quantities cannot both be met"
                ),
            );
        }
    }
}

/// Services that always share nodes need a hardware and an image type all allow.
fn check_whitelists(
    template: &ClusterTemplate,
    chain: &BTreeSet<&str>,
    at: &str,
    report: &mut Report,
) {
    let constraints: Vec<_> = chain
        .iter()
        .filter_map(|&service| Some((service, template.service_constraint(service)?)))
        .collect();
    let hardware: Vec<(&str, Vec<&str>)> = constraints
        .iter()
        .filter(|(_, c)| !c.hardwaretypes.is_empty())
        .map(|(s, c)| (*s, c.hardwaretypes.iter().map(|h| h.as_str()).collect()))
        .collect();
    let images: Vec<(&str, Vec<&str>)> = constraints
        .iter()
        .filter(|(_, c)| !c.imagetypes.is_empty())
        .map(|(s, c)| (*s, c.imagetypes.iter().map(|i| i.as_str()).collect()))
        .collect();
    for (kind, lists) in [("hardware type", hardware), ("image type", images)] {
        if disjoint(&lists) {
            let services: Vec<String> = lists.iter().map(|(s, _)| format!("\"{s}\"")).collect();
            report.error(
                at.to_owned(),
                format!(
                    "no {kind} is allowed for all of {}, which must share nodes",
                    services.join(", ")
                ),
            );
        }
    }
}

fn disjoint(lists: &[(&str, Vec<&str>)]) -> bool {
    let Some(((_, first), rest)) = lists.split_first() else {
        return false;
    };
    !first
        .iter()
        .any(|item| rest.iter().all(|(_, list)| list.contains(item)))
}
