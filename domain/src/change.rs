//! A change to a live cluster as layouts: the layout its plan starts from and the
//! one it ends at, decided from the committed layout and the facts the caller read
//! (the failed job's layouts, the services leaving, ...).
//!
//! The engine reads the cluster, its newest job and its catalog, checks the request,
//! and asks [`layouts`] where the change goes; this module does no reads, and the
//! solving it needs goes through the problem the caller builds from its catalog, so
//! tests can hand it plain problems.

use std::collections::BTreeSet;

use crate::layout::Layout;
use crate::names::ServiceName;
use crate::solver::{
    solve_removal, solve_with_existing, Existing, LayoutProblem, NodesToRemove, Unsatisfiable,
};

/// What a change does to the layout, its request already checked.
#[derive(Debug, Clone, PartialEq)]
pub enum LayoutChange {
    /// Services (or aliases) to add: onto existing nodes where the template allows,
    /// on new nodes otherwise.
    AddServices { services: Vec<String> },
    /// Nodes to add, with the cluster's current services laid out over all of them;
    /// the existing nodes stay as they are.
    AddNodes { count: u32 },
    /// Nodes to take away, chosen by the solver or named.
    RemoveNodes { which: NodesToRemove },
    /// Services to take off every node that runs them; what stays must still be a
    /// cluster the template allows.
    RemoveServices { leaving: BTreeSet<ServiceName> },
    /// Nothing moves: reconfigure, start, stop, restart, key sync.
    Same,
    /// Back from the newest job, which failed or was cancelled: from where it was
    /// going to where it started (the committed layout stands in for either one the
    /// job did not record).
    Rollback {
        started: Option<Layout>,
        target: Option<Layout>,
    },
    /// Take everything down. `failed_target` is the target layout of a newest job
    /// that failed or was cancelled: some of its nodes may exist, so they go too.
    Delete { failed_target: Option<Layout> },
}

/// Where a change starts and ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layouts {
    pub from: Layout,
    pub to: Layout,
}

/// The layouts `change` goes between from `committed`. `problem_for(services, size)`
/// is the solver's problem for a cluster of those services (names or aliases) and
/// that many nodes, on the cluster's own template and catalog.
pub fn layouts(
    committed: &Layout,
    change: &LayoutChange,
    problem_for: impl Fn(Vec<String>, u32) -> Result<LayoutProblem, Unsatisfiable>,
) -> Result<Layouts, Unsatisfiable> {
    let size = u32::try_from(committed.nodes.len()).unwrap_or(u32::MAX);
    let current_services = || -> Vec<String> {
        committed
            .services()
            .into_iter()
            .map(ToString::to_string)
            .collect()
    };
    let from_committed = |to: Layout| Layouts {
        from: committed.clone(),
        to,
    };
    match change {
        LayoutChange::AddServices { services } => {
            let mut wanted = current_services();
            wanted.extend(services.iter().cloned());
            let problem = problem_for(wanted, size)?;
            let existing = Existing {
                nodes: committed.nodes.clone(),
                extend_nodes: true,
                grow_up_to: None,
            };
            Ok(from_committed(solve_with_existing(&problem, &existing)?))
        }
        LayoutChange::AddNodes { count } => {
            let problem = problem_for(current_services(), size.saturating_add(*count))?;
            let existing = Existing {
                nodes: committed.nodes.clone(),
                extend_nodes: false,
                grow_up_to: None,
            };
            Ok(from_committed(solve_with_existing(&problem, &existing)?))
        }
        LayoutChange::RemoveNodes { which } => {
            let problem = problem_for(current_services(), size)?;
            Ok(from_committed(solve_removal(
                &problem,
                &committed.nodes,
                which,
            )?))
        }
        LayoutChange::RemoveServices { leaving } => {
            let staying: Vec<String> = current_services()
                .into_iter()
                .filter(|name| !leaving.iter().any(|gone| gone.as_str() == name))
                .collect();
            // Only checked: the nodes keep what they run, less the leaving services.
            problem_for(staying, size)?;
            let mut to = committed.clone();
            for node in &mut to.nodes {
                node.services.retain(|service| !leaving.contains(service));
            }
            Ok(from_committed(to))
        }
        LayoutChange::Same => Ok(from_committed(committed.clone())),
        LayoutChange::Rollback { started, target } => Ok(Layouts {
            from: target.as_ref().unwrap_or(committed).clone(),
            to: started.as_ref().unwrap_or(committed).clone(),
        }),
        LayoutChange::Delete { failed_target } => {
            let from = match failed_target {
                Some(target) => union(committed, target),
                None => committed.clone(),
            };
            let to = Layout::empty(from.template.clone());
            Ok(Layouts { from, to })
        }
    }
}

/// The nodes of both layouts (`first`'s where a number is in both), in number order.
fn union(first: &Layout, second: &Layout) -> Layout {
    let mut nodes = first.nodes.clone();
    for node in &second.nodes {
        if !nodes.iter().any(|known| known.number == node.number) {
            nodes.push(node.clone());
        }
    }
    nodes.sort_by_key(|node| node.number);
    Layout {
        template: first.template.clone(),
        nodes,
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::collections::BTreeMap;

    use super::*;
    use crate::layout::NodeLayout;
    use crate::names::{HardwareTypeName, ImageTypeName, TemplateName};
    use crate::solver::{LayoutGroups, Reason, ServiceConstraint, SizeBounds, TypeCandidates};

    fn svc(name: &str) -> ServiceName {
        ServiceName::parse(name).expect("valid name")
    }

    fn node(number: u32, services: &[&str]) -> NodeLayout {
        NodeLayout {
            number,
            hardwaretype: HardwareTypeName::parse("small").expect("valid name"),
            imagetype: ImageTypeName::parse("debian").expect("valid name"),
            services: services.iter().map(|name| svc(name)).collect(),
        }
    }

    fn layout(nodes: &[(u32, &[&str])]) -> Layout {
        Layout {
            template: TemplateName::parse("t").expect("valid name"),
            nodes: nodes
                .iter()
                .map(|(number, services)| node(*number, services))
                .collect(),
        }
    }

    /// The problem for `services` on `size` nodes, as a catalog would give it: any
    /// mix of services per node, except that `solo` runs alone and at most once.
    fn problem(services: Vec<String>, size: u32) -> Result<LayoutProblem, Unsatisfiable> {
        if services.iter().any(|name| name == "unknown") {
            return Err(Unsatisfiable::new(vec![Reason::NoProvider]));
        }
        let layout = LayoutGroups {
            cant_coexist: vec![vec![svc("solo"), svc("base")]],
            ..LayoutGroups::default()
        };
        let solo = ServiceConstraint {
            max: Some(1),
            ..ServiceConstraint::default()
        };
        let service_constraints = BTreeMap::from([(svc("solo"), solo)]);
        Ok(LayoutProblem {
            template: TemplateName::parse("t").expect("valid name"),
            size,
            size_bounds: SizeBounds::default(),
            services: services.iter().map(|name| svc(name)).collect(),
            hardware: TypeCandidates::any_of(vec![
                HardwareTypeName::parse("small").expect("valid name")
            ]),
            images: TypeCandidates::any_of(vec![
                ImageTypeName::parse("debian").expect("valid name")
            ]),
            layout,
            service_constraints,
        })
    }

    /// Each node's (number, services) for comparing.
    type Shape = Vec<(u32, Vec<&'static str>)>;

    /// (name, change, expected from, expected to, (services, size) asked of the solver)
    type Case = (
        &'static str,
        LayoutChange,
        Shape,
        Shape,
        Option<(Vec<&'static str>, u32)>,
    );

    fn shape(layout: &Layout) -> Vec<(u32, Vec<String>)> {
        layout.services_by_node().collect()
    }

    fn owned(shape: &Shape) -> Vec<(u32, Vec<String>)> {
        shape
            .iter()
            .map(|(number, services)| (*number, services.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    #[test]
    fn layouts_follow_each_change() {
        let committed = layout(&[(1000, &["base", "web"]), (1001, &["base", "web"])]);
        let started = layout(&[(1000, &["base"])]);
        let target = layout(&[(1000, &["base", "web"]), (1002, &["base", "web"])]);
        let add = ["cache".to_owned()];
        let leaving: BTreeSet<ServiceName> = [svc("web")].into();
        let one = NodesToRemove::Count(1);
        let named = NodesToRemove::Named([1000].into());
        let cases: Vec<Case> = vec![
            (
                "add a service onto the existing nodes",
                LayoutChange::AddServices {
                    services: add.to_vec(),
                },
                vec![(1000, vec!["base", "web"]), (1001, vec!["base", "web"])],
                vec![
                    (1000, vec!["base", "cache", "web"]),
                    (1001, vec!["base", "cache", "web"]),
                ],
                Some((vec!["base", "web", "cache"], 2)),
            ),
            (
                "add nodes",
                LayoutChange::AddNodes { count: 1 },
                vec![(1000, vec!["base", "web"]), (1001, vec!["base", "web"])],
                vec![
                    (1000, vec!["base", "web"]),
                    (1001, vec!["base", "web"]),
                    (1002, vec!["base", "web"]),
                ],
                Some((vec!["base", "web"], 3)),
            ),
            (
                "remove a node the solver picks",
                LayoutChange::RemoveNodes { which: one.clone() },
                vec![(1000, vec!["base", "web"]), (1001, vec!["base", "web"])],
                vec![(1000, vec!["base", "web"])],
                Some((vec!["base", "web"], 2)),
            ),
            (
                "remove a named node",
                LayoutChange::RemoveNodes {
                    which: named.clone(),
                },
                vec![(1000, vec!["base", "web"]), (1001, vec!["base", "web"])],
                vec![(1001, vec!["base", "web"])],
                Some((vec!["base", "web"], 2)),
            ),
            (
                "remove a service",
                LayoutChange::RemoveServices {
                    leaving: leaving.clone(),
                },
                vec![(1000, vec!["base", "web"]), (1001, vec!["base", "web"])],
                vec![(1000, vec!["base"]), (1001, vec!["base"])],
                Some((vec!["base"], 2)),
            ),
            (
                "reconfigure and the like",
                LayoutChange::Same,
                vec![(1000, vec!["base", "web"]), (1001, vec!["base", "web"])],
                vec![(1000, vec!["base", "web"]), (1001, vec!["base", "web"])],
                None,
            ),
            (
                "roll back from the target to the start",
                LayoutChange::Rollback {
                    started: Some(started.clone()),
                    target: Some(target.clone()),
                },
                vec![(1000, vec!["base", "web"]), (1002, vec!["base", "web"])],
                vec![(1000, vec!["base"])],
                None,
            ),
            (
                "roll back a job that recorded no layouts",
                LayoutChange::Rollback {
                    started: None,
                    target: None,
                },
                vec![(1000, vec!["base", "web"]), (1001, vec!["base", "web"])],
                vec![(1000, vec!["base", "web"]), (1001, vec!["base", "web"])],
                None,
            ),
            (
                "roll back a job that recorded only where it started",
                LayoutChange::Rollback {
                    started: Some(started.clone()),
                    target: None,
                },
                vec![(1000, vec!["base", "web"]), (1001, vec!["base", "web"])],
                vec![(1000, vec!["base"])],
                None,
            ),
            (
                "delete",
                LayoutChange::Delete {
                    failed_target: None,
                },
                vec![(1000, vec!["base", "web"]), (1001, vec!["base", "web"])],
                vec![],
                None,
            ),
            (
                "delete after a failed job also takes its new nodes",
                LayoutChange::Delete {
                    failed_target: Some(target.clone()),
                },
                vec![
                    (1000, vec!["base", "web"]),
                    (1001, vec!["base", "web"]),
                    (1002, vec!["base", "web"]),
                ],
                vec![],
                None,
            ),
        ];
        for (name, change, from, to, asked) in cases {
            let requests = RefCell::new(Vec::new());
            let got = layouts(&committed, &change, |services, size| {
                requests.borrow_mut().push((services.clone(), size));
                problem(services, size)
            })
            .unwrap_or_else(|error| panic!("{name}: {error:?}"));
            assert_eq!(shape(&got.from), owned(&from), "{name}: from");
            assert_eq!(shape(&got.to), owned(&to), "{name}: to");
            assert_eq!(got.to.template, committed.template, "{name}: template");
            let asked: Vec<(Vec<String>, u32)> = asked
                .into_iter()
                .map(|(services, size)| (services.iter().map(|s| s.to_string()).collect(), size))
                .collect();
            assert_eq!(requests.into_inner(), asked, "{name}: solver asked");
        }
    }

    #[test]
    fn changes_the_solver_cannot_meet_are_refused() {
        let plain = layout(&[(1000, &["base", "web"]), (1001, &["base", "web"])]);
        let odd = layout(&[(1000, &["base", "unknown"]), (1001, &["base", "web"])]);
        let unknown = ["unknown".to_owned()];
        let web: BTreeSet<ServiceName> = [svc("web")].into();
        // (name, committed layout, change): `unknown` is a service the problem refuses.
        #[rustfmt::skip]
        let cases = [
            ("add an unknown service", &plain, LayoutChange::AddServices { services: unknown.to_vec() }),
            ("adding services adds no node", &plain, LayoutChange::AddServices { services: vec!["solo".into()] }),
            ("add nodes next to an unknown service", &odd, LayoutChange::AddNodes { count: 1 }),
            ("remove nodes next to an unknown service", &odd, LayoutChange::RemoveNodes { which: NodesToRemove::Count(1) }),
            ("remove every node", &plain, LayoutChange::RemoveNodes { which: NodesToRemove::Count(2) }),
            ("remove a service, an unknown one staying", &odd, LayoutChange::RemoveServices { leaving: web.clone() }),
        ];
        for (name, committed, change) in cases {
            let got = layouts(committed, &change, problem);
            assert!(got.is_err(), "{name}: {got:?}");
        }
    }
}
