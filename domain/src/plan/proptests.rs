//! Property tests: on random acyclic service graphs, layouts and operations, every
//! plan respects every dependency rule (checked against an independent oracle),
//! runs one task per node at a time, is acyclic and well formed, and is
//! deterministic; and the DAG schedule is never longer than Coopr's stages.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use super::tests::{layout, name, names};
use super::*;
use crate::layout::Layout;

const MAX_SERVICES: usize = 7;

/// One random service: actions, whether it provides its alias, and deps by index
/// (only on lower indices, so the graph is acyclic). Deps may name an alias or a
/// service that is not on the cluster.
#[derive(Debug, Clone)]
struct RandomService {
    actions: [bool; 6],
    provides_alias: bool,
    install: Vec<Dep>,
    runtime: Vec<Dep>,
}

#[derive(Debug, Clone, Copy)]
enum Dep {
    Service(usize),
    Alias(usize),
    Ghost,
}

impl Dep {
    fn name(self) -> String {
        match self {
            Dep::Service(i) => format!("s{i}"),
            Dep::Alias(i) => format!("alias{i}"),
            Dep::Ghost => "ghost".to_owned(),
        }
    }
}

fn dep_strategy(below: usize) -> BoxedStrategy<Dep> {
    if below == 0 {
        return Just(Dep::Ghost).boxed();
    }
    prop_oneof![
        4 => (0..below).prop_map(Dep::Service),
        1 => (0..below).prop_map(Dep::Alias),
        1 => Just(Dep::Ghost),
    ]
    .boxed()
}

fn services_strategy() -> impl Strategy<Value = Vec<RandomService>> {
    (2..=MAX_SERVICES).prop_flat_map(|count| {
        (0..count)
            .map(|i| {
                (
                    proptest::array::uniform6(any::<bool>()),
                    any::<bool>(),
                    proptest::collection::vec(dep_strategy(i), 0..3),
                    proptest::collection::vec(dep_strategy(i), 0..3),
                )
                    .prop_map(|(actions, provides_alias, install, runtime)| {
                        RandomService {
                            actions,
                            provides_alias,
                            install,
                            runtime,
                        }
                    })
            })
            .collect::<Vec<_>>()
    })
}

fn graph_of(services: &[RandomService]) -> ServiceGraph {
    services
        .iter()
        .enumerate()
        .map(|(i, random)| {
            let deps = |list: &[Dep]| DependencyLists {
                requires: list.iter().map(|dep| name(&dep.name())).collect(),
                uses: BTreeSet::new(),
            };
            let node = ServiceNode {
                provides: if random.provides_alias {
                    names(&[&format!("alias{i}")])
                } else {
                    BTreeSet::new()
                },
                install: deps(&random.install),
                runtime: deps(&random.runtime),
                actions: ServiceAction::ALL
                    .iter()
                    .zip(random.actions)
                    .filter(|(_, on)| *on)
                    .map(|(action, _)| *action)
                    .collect(),
            };
            (name(&format!("s{i}")), node)
        })
        .collect()
}

/// Nodes 1000.. each with a non-empty service subset (bit masks over services).
fn layout_of(masks: &[u8], service_count: usize) -> Layout {
    let owned: Vec<(u32, Vec<String>)> = masks
        .iter()
        .enumerate()
        .map(|(i, mask)| {
            let mut services: Vec<String> = (0..service_count)
                .filter(|bit| mask & (1 << bit) != 0)
                .map(|bit| format!("s{bit}"))
                .collect();
            if services.is_empty() {
                services.push(format!("s{}", usize::from(*mask) % service_count));
            }
            (1000 + i as u32, services)
        })
        .collect();
    let borrowed: Vec<Vec<&str>> = owned
        .iter()
        .map(|(_, services)| services.iter().map(String::as_str).collect())
        .collect();
    let nodes: Vec<(u32, &[&str])> = owned
        .iter()
        .zip(&borrowed)
        .map(|((number, _), services)| (*number, services.as_slice()))
        .collect();
    layout(&nodes)
}

#[derive(Debug, Clone)]
enum RandomOperation {
    Create,
    Delete,
    AddNodes(Vec<u8>),
    RemoveNodes(usize),
    Update(Vec<u8>),
    Reconfigure(bool),
    Start(u8),
    Stop(u8),
    Restart(u8),
    RollbackCreate(usize),
}

fn operation_strategy() -> impl Strategy<Value = RandomOperation> {
    let masks = || proptest::collection::vec(any::<u8>(), 1..4);
    prop_oneof![
        Just(RandomOperation::Create),
        Just(RandomOperation::Delete),
        masks().prop_map(RandomOperation::AddNodes),
        (1..4usize).prop_map(RandomOperation::RemoveNodes),
        masks().prop_map(RandomOperation::Update),
        any::<bool>().prop_map(RandomOperation::Reconfigure),
        any::<u8>().prop_map(RandomOperation::Start),
        any::<u8>().prop_map(RandomOperation::Stop),
        any::<u8>().prop_map(RandomOperation::Restart),
        (0..400usize).prop_map(RandomOperation::RollbackCreate),
    ]
}

fn selection(mask: u8, cluster: &Layout) -> Option<BTreeSet<ServiceName>> {
    if mask == 0 {
        return None;
    }
    let on: Vec<&ServiceName> = cluster.services().into_iter().collect();
    let picked: BTreeSet<ServiceName> = on
        .iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << (i % 8)) != 0)
        .map(|(_, service)| (*service).clone())
        .collect();
    (!picked.is_empty()).then_some(picked)
}

/// (old, new, operation) for a random case.
fn scenario(
    random: &RandomOperation,
    base: &Layout,
    graph: &ServiceGraph,
    service_count: usize,
) -> (Layout, Layout, PlanOperation) {
    let empty = layout(&[]);
    let extended = |masks: &[u8]| {
        let mut all: Vec<u8> = base
            .nodes
            .iter()
            .map(|node| {
                (0..service_count)
                    .filter(|bit| node.services.contains(format!("s{bit}").as_str()))
                    .fold(0u8, |mask, bit| mask | (1 << bit))
            })
            .collect();
        all.extend_from_slice(masks);
        layout_of(&all, service_count)
    };
    match random {
        RandomOperation::Create => (empty, base.clone(), PlanOperation::Create),
        RandomOperation::Delete => (base.clone(), empty, PlanOperation::Delete),
        RandomOperation::AddNodes(masks) => {
            (base.clone(), extended(masks), PlanOperation::AddNodes)
        }
        RandomOperation::RemoveNodes(drop) => {
            let mut new = base.clone();
            let keep = new.nodes.len().saturating_sub(*drop).max(1);
            new.nodes.truncate(keep);
            (base.clone(), new, PlanOperation::RemoveNodes)
        }
        RandomOperation::Update(masks) => {
            // Shift every node's services by one and add nodes: adds, removes and
            // keeps services on the same node at once.
            let mut new = extended(masks);
            for node in new.nodes.iter_mut().skip(1) {
                node.services = node
                    .services
                    .iter()
                    .map(|s| {
                        let i: usize = s.as_str()[1..].parse().unwrap_or(0);
                        name(&format!("s{}", (i + 1) % service_count))
                    })
                    .collect();
            }
            (base.clone(), new, PlanOperation::Update)
        }
        RandomOperation::Reconfigure(restart) => (
            base.clone(),
            base.clone(),
            PlanOperation::Reconfigure { restart: *restart },
        ),
        RandomOperation::Start(mask) => (
            base.clone(),
            base.clone(),
            PlanOperation::Start {
                services: selection(*mask, base),
            },
        ),
        RandomOperation::Stop(mask) => (
            base.clone(),
            base.clone(),
            PlanOperation::Stop {
                services: selection(*mask, base),
            },
        ),
        RandomOperation::Restart(mask) => (
            base.clone(),
            base.clone(),
            PlanOperation::Restart {
                services: selection(*mask, base),
            },
        ),
        RandomOperation::RollbackCreate(done) => {
            let failed = plan(&empty, base, &PlanOperation::Create, graph).unwrap();
            let completed = (0..(*done).min(failed.len()))
                .map(|i| TaskId(i as u32))
                .collect();
            (
                empty,
                base.clone(),
                PlanOperation::Rollback { failed, completed },
            )
        }
    }
}

/// Independent oracle for "A depends on B" with stand-ins, over the cluster's
/// services: resolve aliases, drop absent services, and replace a dependency that
/// lacks `action` with its own dependencies.
struct Oracle<'a> {
    graph: &'a ServiceGraph,
    cluster: BTreeSet<String>,
}

impl Oracle<'_> {
    fn resolve(&self, dep: &str) -> BTreeSet<String> {
        let providers: BTreeSet<String> = self
            .cluster
            .iter()
            .filter(|s| self.graph.get(s).unwrap().provides.contains(dep))
            .cloned()
            .collect();
        if !providers.is_empty() {
            return providers;
        }
        self.cluster.iter().filter(|s| *s == dep).cloned().collect()
    }

    fn direct(&self, service: &str, install: bool) -> BTreeSet<String> {
        let node = self.graph.get(service).unwrap();
        let lists = if install {
            &node.install
        } else {
            &node.runtime
        };
        lists
            .all()
            .flat_map(|dep| self.resolve(dep.as_str()))
            .filter(|dep| dep != service)
            .collect()
    }

    fn effective(&self, service: &str, install: bool, action: ServiceAction) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut seen = BTreeSet::from([service.to_owned()]);
        let mut todo: Vec<String> = self.direct(service, install).into_iter().collect();
        while let Some(dep) = todo.pop() {
            if !seen.insert(dep.clone()) {
                continue;
            }
            if self.graph.get(&dep).unwrap().defines(action) {
                out.insert(dep);
            } else {
                todo.extend(self.direct(&dep, install));
            }
        }
        out
    }
}

/// reach[t] = tasks that must finish before t.
fn predecessors_closure(dag: &TaskDag) -> Vec<Vec<bool>> {
    let mut reach = vec![vec![false; dag.len()]; dag.len()];
    for task in dag.tasks() {
        let mut row = vec![false; dag.len()];
        for previous in &task.after {
            row[previous.index()] = true;
            for (slot, earlier) in row.iter_mut().zip(&reach[previous.index()]) {
                *slot |= earlier;
            }
        }
        reach[task.id.index()] = row;
    }
    reach
}

fn check_plan(dag: &TaskDag, graph: &ServiceGraph, old: &Layout, new: &Layout) {
    // Well formed and acyclic: the checked deserialiser insists on ids equal to
    // positions and predecessors with smaller ids.
    let json = serde_json::to_string(dag).unwrap();
    let back: TaskDag = serde_json::from_str(&json).unwrap();
    assert_eq!(&back, dag);

    super::tests::assert_nodes_serial(dag);
    super::tests::assert_stages_well_formed(dag);

    let mut cluster: BTreeSet<String> = old.services().iter().map(|s| s.to_string()).collect();
    cluster.extend(new.services().iter().map(|s| s.to_string()));
    let oracle = Oracle { graph, cluster };
    let reach = predecessors_closure(dag);
    let mut by_key: BTreeMap<(String, Action), Vec<TaskId>> = BTreeMap::new();
    for task in dag.tasks() {
        if let Some(service) = &task.service {
            by_key
                .entry((service.to_string(), task.action))
                .or_default()
                .push(task.id);
        }
    }
    let tasks_of = |service: &str, action: Action| {
        by_key
            .get(&(service.to_owned(), action))
            .cloned()
            .unwrap_or_default()
    };
    let must_precede = |before: &[TaskId], after: &[TaskId], rule: &str| {
        for &b in before {
            for &a in after {
                assert!(
                    reach[a.index()][b.index()],
                    "{rule}: {} must precede {}",
                    dag.tasks()[b.index()].label(),
                    dag.tasks()[a.index()].label()
                );
            }
        }
    };
    for service in oracle.cluster.iter() {
        for dep in oracle.effective(service, true, ServiceAction::Install) {
            must_precede(
                &tasks_of(&dep, Action::Install),
                &tasks_of(service, Action::Install),
                "install",
            );
        }
        for dep in oracle.effective(service, true, ServiceAction::Remove) {
            must_precede(
                &tasks_of(service, Action::Remove),
                &tasks_of(&dep, Action::Remove),
                "remove",
            );
        }
        for dep in oracle.effective(service, false, ServiceAction::Start) {
            let starts = tasks_of(&dep, Action::Start);
            must_precede(
                &starts,
                &tasks_of(service, Action::Initialize),
                "initialize",
            );
            must_precede(&starts, &tasks_of(service, Action::Start), "start");
        }
        for dep in oracle.effective(service, false, ServiceAction::Stop) {
            must_precede(
                &tasks_of(service, Action::Stop),
                &tasks_of(&dep, Action::Stop),
                "stop",
            );
        }
    }

    // A step runs only if the service defines it; node steps frame service steps;
    // on a node, what is torn down goes before what is built.
    let building = |t: &&Task| {
        matches!(
            t.action,
            Action::Install | Action::Configure | Action::Initialize | Action::Start
        )
    };
    for task in dag.tasks() {
        if let (Some(service), Some(action)) = (&task.service, task.action.service_action()) {
            assert!(graph.get(service.as_str()).unwrap().defines(action));
        }
        let same_node = dag.tasks().iter().filter(|t| t.node == task.node);
        match task.action {
            Action::Create | Action::Confirm => {
                for other in same_node.filter(|t| t.service.is_some()) {
                    assert!(reach[other.id.index()][task.id.index()]);
                }
            }
            Action::Bootstrap => {
                for other in same_node.filter(building) {
                    assert!(reach[other.id.index()][task.id.index()]);
                }
            }
            Action::Remove => {
                for other in same_node.filter(|t| t.action == Action::Install) {
                    assert!(reach[other.id.index()][task.id.index()]);
                }
            }
            Action::Delete => {
                for other in same_node.filter(|t| t.id != task.id) {
                    assert!(reach[task.id.index()][other.id.index()]);
                }
            }
            _ => {}
        }
    }

    // Coopr's stages are never shorter than the DAG schedule.
    let unit = dag.compare_schedules(unit_cost);
    assert!(unit.dag_critical_path <= unit.staged_critical_path);
    let skewed = |task: &Task| 1 + u64::from(task.node % 7) * 3 + task.action as u64;
    let weighted = dag.compare_schedules(skewed);
    assert!(weighted.dag_critical_path <= weighted.staged_critical_path);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_plan_respects_dependencies_and_runs_one_task_per_node(
        services in services_strategy(),
        masks in proptest::collection::vec(any::<u8>(), 1..6),
        random in operation_strategy(),
    ) {
        let graph = graph_of(&services);
        let base = layout_of(&masks, services.len());
        let (old, new, operation) = scenario(&random, &base, &graph, services.len());
        let dag = plan(&old, &new, &operation, &graph).unwrap();
        check_plan(&dag, &graph, &old, &new);
        let again = plan(&old, &new, &operation, &graph).unwrap();
        prop_assert_eq!(dag, again);
    }
}
