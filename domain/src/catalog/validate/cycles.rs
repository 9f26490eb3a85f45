//! Dependency cycles (docs/coopr-format.md §3 error 3): among the services one template
//! allows together, `requires` ∪ `uses` of one stage, aliases expanded, must be acyclic
//! or the planner cannot order install (or start) tasks.

use std::collections::{BTreeMap, HashMap};

use super::Report;
use crate::catalog::{Catalog, ClusterTemplate, DependencyStage, Service};

/// Picks one stage's dependencies out of a service.
type StageOf = fn(&Service) -> &DependencyStage;

pub(super) fn check(
    catalog: &Catalog,
    template: &ClusterTemplate,
    base: &str,
    report: &mut Report,
) {
    let allowed = allowed_services(catalog, template);
    let at = if template.compatibility.services.is_empty() {
        base.to_owned()
    } else {
        format!("{base}.compatibility.services")
    };
    // Every name a service answers to (its own, its aliases) -> its index.
    let mut answering: HashMap<&str, Vec<usize>> = HashMap::new();
    for (index, service) in allowed.iter().enumerate() {
        let names = std::iter::once(&service.name).chain(&service.dependencies.provides);
        for name in names {
            answering.entry(name.as_str()).or_default().push(index);
        }
    }
    let stages: [(&str, StageOf); 2] = [
        ("install", |s| &s.dependencies.install),
        ("runtime", |s| &s.dependencies.runtime),
    ];
    for (stage_name, stage) in stages {
        let edges: Vec<Vec<usize>> = allowed
            .iter()
            .enumerate()
            .map(|(from, service)| {
                let mut targets: Vec<usize> = stage(service)
                    .all()
                    .filter_map(|dep| answering.get(dep.as_str()))
                    .flatten()
                    .copied()
                    .filter(|&to| to != from)
                    .collect();
                targets.sort_unstable();
                targets.dedup();
                targets
            })
            .collect();
        for component in strongly_connected(&edges) {
            if component.len() < 2 {
                continue;
            }
            let mut names: Vec<String> = component
                .iter()
                .filter_map(|&index| allowed.get(index))
                .map(|service| format!("\"{}\"", service.name))
                .collect();
            names.sort();
            report.error(
                at.clone(),
                format!(
                    "{stage_name} dependency cycle among services {}",
                    names.join(", ")
                ),
            );
        }
    }
}

/// Compatible services (all, if the list is empty) plus the defaults.
fn allowed_services<'c>(catalog: &'c Catalog, template: &ClusterTemplate) -> Vec<&'c Service> {
    let mut allowed: BTreeMap<&str, &Service> = BTreeMap::new();
    if template.compatibility.services.is_empty() {
        allowed.extend(catalog.services.values().map(|s| (s.name.as_str(), s)));
    }
    let named = template
        .compatibility
        .services
        .iter()
        .chain(template.defaults.service_names());
    for name in named {
        if let Some(service) = catalog.service(name.as_str()) {
            allowed.insert(service.name.as_str(), service);
        }
    }
    allowed.into_values().collect()
}

/// Tarjan's algorithm, iterative; components in discovery order.
fn strongly_connected(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let count = edges.len();
    let mut index_of = vec![UNSEEN; count];
    let mut low = vec![0; count];
    let mut on_stack = vec![false; count];
    let mut stack = Vec::new();
    let mut components = Vec::new();
    let mut next_index = 0;
    for root in 0..count {
        if index_of[root] != UNSEEN {
            continue;
        }
        // (node, next edge to look at)
        let mut work = vec![(root, 0)];
        index_of[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (node, ref mut edge)) = work.last_mut() {
            if let Some(&next) = edges[node].get(*edge) {
                *edge += 1;
                if index_of[next] == UNSEEN {
                    index_of[next] = next_index;
                    low[next] = next_index;
                    next_index += 1;
                    stack.push(next);
                    on_stack[next] = true;
                    work.push((next, 0));
                } else if on_stack[next] {
                    low[node] = low[node].min(index_of[next]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[node]);
            }
            if low[node] == index_of[node] {
                let mut component = Vec::new();
                while let Some(member) = stack.pop() {
                    on_stack[member] = false;
                    component.push(member);
                    if member == node {
                        break;
                    }
                }
                components.push(component);
            }
        }
    }
    components
}

#[cfg(test)]
mod tests {
    use super::strongly_connected;

    #[test]
    fn finds_cycles_and_leaves_dags_alone() {
        // 0 -> 1 -> 2 -> 0, 3 -> 0, 4 alone
        let edges = vec![vec![1], vec![2], vec![0], vec![0], vec![]];
        let mut components: Vec<Vec<usize>> = strongly_connected(&edges)
            .into_iter()
            .map(|mut c| {
                c.sort_unstable();
                c
            })
            .collect();
        components.sort();
        assert_eq!(components, vec![vec![0, 1, 2], vec![3], vec![4]]);
    }
}
