//! Unit tests: one or more per operation, on a small Hadoop-like catalog.

use std::collections::BTreeSet;

use super::*;
use crate::layout::{Layout, NodeLayout};
use crate::names::{HardwareTypeName, ImageTypeName, TemplateName};

use ServiceAction::{Configure, Initialize, Install, Remove, Start, Stop};

pub(crate) fn name(raw: &str) -> ServiceName {
    ServiceName::parse(raw).unwrap()
}

pub(crate) fn names(raw: &[&str]) -> BTreeSet<ServiceName> {
    raw.iter().map(|n| name(n)).collect()
}

pub(crate) fn service(
    actions: &[ServiceAction],
    install: &[&str],
    runtime: &[&str],
    provides: &[&str],
) -> ServiceNode {
    ServiceNode {
        provides: names(provides),
        install: DependencyLists {
            requires: names(install),
            uses: BTreeSet::new(),
        },
        runtime: DependencyLists {
            requires: names(runtime),
            uses: BTreeSet::new(),
        },
        actions: actions.iter().copied().collect(),
    }
}

pub(crate) fn layout(nodes: &[(u32, &[&str])]) -> Layout {
    Layout {
        template: TemplateName::parse("t").unwrap(),
        nodes: nodes
            .iter()
            .map(|(number, services)| NodeLayout {
                number: *number,
                hardwaretype: HardwareTypeName::parse("small").unwrap(),
                imagetype: ImageTypeName::parse("debian12").unwrap(),
                services: names(services),
            })
            .collect(),
    }
}

fn empty() -> Layout {
    layout(&[])
}

const FULL: &[ServiceAction] = &[Install, Configure, Initialize, Start, Stop, Remove];

/// base (install/configure/remove only) on every node; a namenode; datanodes that
/// need the namenode running; a client that uses the alias `hdfs`.
fn hadoop() -> ServiceGraph {
    [
        (
            "base",
            service(&[Install, Configure, Remove], &[], &[], &[]),
        ),
        (
            "namenode",
            service(FULL, &["base"], &["kerberos"], &["hdfs"]),
        ),
        ("datanode", service(FULL, &["base"], &["namenode"], &[])),
        (
            "client",
            service(&[Install, Configure], &["base", "hdfs"], &["hdfs"], &[]),
        ),
    ]
    .into_iter()
    .map(|(n, s)| (name(n), s))
    .collect()
}

fn cluster() -> Layout {
    layout(&[
        (1000, &["base", "namenode"]),
        (1001, &["base", "datanode"]),
        (1002, &["base", "datanode", "client"]),
    ])
}

fn task<'a>(dag: &'a TaskDag, node: u32, service: Option<&str>, action: Action) -> &'a Task {
    dag.find(node, service, action)
        .unwrap_or_else(|| panic!("no task {node} {action} {service:?}"))
}

fn id(dag: &TaskDag, node: u32, service: Option<&str>, action: Action) -> TaskId {
    task(dag, node, service, action).id
}

/// Whether `from` must finish before `to` starts (a path of `after` links).
pub(crate) fn precedes(dag: &TaskDag, from: TaskId, to: TaskId) -> bool {
    let mut reached = vec![false; dag.len()];
    reached[from.index()] = true;
    for task in &dag.tasks()[from.index() + 1..=to.index().max(from.index())] {
        if task.after.iter().any(|previous| reached[previous.index()]) {
            reached[task.id.index()] = true;
        }
    }
    from != to && reached[to.index()]
}

fn actions_on(dag: &TaskDag, node: u32) -> Vec<String> {
    dag.tasks()
        .iter()
        .filter(|task| task.node == node)
        .map(Task::label)
        .collect()
}

/// Stages hold one task per node, and every edge goes to a later stage.
pub(crate) fn assert_stages_well_formed(dag: &TaskDag) {
    for stage in dag.stages() {
        let nodes: BTreeSet<u32> = stage
            .iter()
            .map(|id| dag.tasks()[id.index()].node)
            .collect();
        assert_eq!(nodes.len(), stage.len());
    }
    for task in dag.tasks() {
        for previous in &task.after {
            assert!(dag.tasks()[previous.index()].stage < task.stage);
        }
    }
}

/// One task per node at a time: each node's tasks form a chain.
pub(crate) fn assert_nodes_serial(dag: &TaskDag) {
    let mut last: std::collections::BTreeMap<u32, TaskId> = Default::default();
    for task in dag.tasks() {
        if let Some(previous) = last.insert(task.node, task.id) {
            assert!(
                task.after.contains(&previous),
                "{} does not follow {}",
                task.label(),
                dag.tasks()[previous.index()].label()
            );
        }
    }
}

#[test]
fn create_builds_every_node_in_chain_order() {
    let dag = plan(&empty(), &cluster(), &PlanOperation::Create, &hadoop()).unwrap();
    assert_nodes_serial(&dag);
    let on_1001 = actions_on(&dag, 1001);
    for expected in [
        "1001-create",
        "1001-confirm",
        "1001-bootstrap",
        "1001-install-base",
        "1001-configure-base",
        "1001-install-datanode",
        "1001-configure-datanode",
        "1001-initialize-datanode",
        "1001-start-datanode",
    ] {
        assert!(on_1001.contains(&expected.to_owned()), "{on_1001:?}");
    }
    // No removal or stop in a create, and base has no start: 9 tasks on 1001.
    assert_eq!(on_1001.len(), 9);
    // Each service's chain and the node steps are ordered.
    let create = id(&dag, 1001, None, Action::Create);
    let bootstrap = id(&dag, 1001, None, Action::Bootstrap);
    let install = id(&dag, 1001, Some("datanode"), Action::Install);
    let start = id(&dag, 1001, Some("datanode"), Action::Start);
    assert!(precedes(&dag, create, bootstrap));
    assert!(precedes(&dag, bootstrap, install));
    assert!(precedes(&dag, install, start));
}

#[test]
fn create_orders_installs_across_every_node() {
    let dag = plan(&empty(), &cluster(), &PlanOperation::Create, &hadoop()).unwrap();
    // install(base) on every node before install(datanode) on each node: a direct
    // edge, not just a path through the node chain.
    for base_node in [1000, 1001, 1002] {
        let base = id(&dag, base_node, Some("base"), Action::Install);
        for data_node in [1001, 1002] {
            let datanode = task(&dag, data_node, Some("datanode"), Action::Install);
            assert!(datanode.after.contains(&base), "{base_node}→{data_node}");
        }
    }
}

#[test]
fn create_starts_dependencies_before_initialize_and_start() {
    let dag = plan(&empty(), &cluster(), &PlanOperation::Create, &hadoop()).unwrap();
    let namenode_start = id(&dag, 1000, Some("namenode"), Action::Start);
    for node in [1001, 1002] {
        let initialize = task(&dag, node, Some("datanode"), Action::Initialize);
        assert!(initialize.after.contains(&namenode_start), "{node}");
        // The start needs no edge of its own: its initialize, earlier on the same
        // node, already waits for the namenode.
        let start = task(&dag, node, Some("datanode"), Action::Start);
        assert!(precedes(&dag, namenode_start, start.id));
        assert!(!start.after.contains(&namenode_start));
        // Configure has no cross-service edge.
        let configure = task(&dag, node, Some("datanode"), Action::Configure);
        assert!(!precedes(&dag, namenode_start, configure.id));
    }
}

#[test]
fn an_alias_means_every_provider() {
    let dag = plan(&empty(), &cluster(), &PlanOperation::Create, &hadoop()).unwrap();
    let namenode_install = id(&dag, 1000, Some("namenode"), Action::Install);
    let client_install = task(&dag, 1002, Some("client"), Action::Install);
    assert!(client_install.after.contains(&namenode_install));
}

#[test]
fn dependencies_off_the_cluster_are_dropped() {
    // namenode's runtime dep "kerberos" is on no node: planning still succeeds, and
    // the namenode's start waits only for its own chain and node.
    let dag = plan(&empty(), &cluster(), &PlanOperation::Create, &hadoop()).unwrap();
    let start = task(&dag, 1000, Some("namenode"), Action::Start);
    assert!(start
        .after
        .iter()
        .all(|p| dag.tasks()[p.index()].node == 1000));
}

#[test]
fn delete_stops_dependents_first_and_removes_in_reverse_install_order() {
    let dag = plan(&cluster(), &empty(), &PlanOperation::Delete, &hadoop()).unwrap();
    assert_nodes_serial(&dag);
    let namenode_stop = id(&dag, 1000, Some("namenode"), Action::Stop);
    for node in [1001, 1002] {
        let datanode_stop = task(&dag, node, Some("datanode"), Action::Stop);
        assert!(
            dag.tasks()[namenode_stop.index()]
                .after
                .contains(&datanode_stop.id),
            "stop datanode@{node} before stop namenode"
        );
        let base_remove = id(&dag, node, Some("base"), Action::Remove);
        let datanode_remove = id(&dag, 1001, Some("datanode"), Action::Remove);
        assert!(precedes(&dag, datanode_remove, base_remove));
    }
    for node in [1000, 1001, 1002] {
        let delete = task(&dag, node, None, Action::Delete);
        let last = dag.tasks().iter().rfind(|t| t.node == node).unwrap();
        assert_eq!(last.id, delete.id, "delete is the node's last task");
    }
    assert!(dag.find(1000, None, Action::Create).is_none());
}

#[test]
fn add_services_touches_only_nodes_that_gain_one() {
    let old = cluster();
    let mut new = cluster();
    new.nodes[1].services.insert(name("client"));
    let dag = plan(&old, &new, &PlanOperation::AddServices, &hadoop()).unwrap();
    assert_eq!(
        actions_on(&dag, 1001),
        [
            "1001-bootstrap",
            "1001-install-client",
            "1001-configure-client"
        ]
    );
    assert!(actions_on(&dag, 1000).is_empty());
    assert!(actions_on(&dag, 1002).is_empty());
}

#[test]
fn add_services_refuses_a_new_node() {
    let old = cluster();
    let mut new = cluster();
    new.nodes.push(layout(&[(1003, &["base"])]).nodes.remove(0));
    let err = plan(&old, &new, &PlanOperation::AddServices, &hadoop()).unwrap_err();
    assert_eq!(
        err,
        PlanError::LayoutMismatch {
            operation: "add services",
            detail: "node 1003 would be added".into()
        }
    );
}

#[test]
fn add_nodes_builds_only_new_nodes_and_drops_edges_to_done_work() {
    let old = cluster();
    let mut new = cluster();
    new.nodes
        .push(layout(&[(1003, &["base", "datanode"])]).nodes.remove(0));
    let dag = plan(&old, &new, &PlanOperation::AddNodes, &hadoop()).unwrap();
    assert!(dag.tasks().iter().all(|task| task.node == 1003));
    let start = task(&dag, 1003, Some("datanode"), Action::Start);
    assert!(start
        .after
        .iter()
        .all(|p| dag.tasks()[p.index()].node == 1003));
    assert_eq!(dag.tasks()[0].action, Action::Create);
}

#[test]
fn remove_nodes_reconfigures_what_stays_then_tears_down_and_deletes() {
    let old = cluster();
    let new = layout(&[(1000, &["base", "namenode"]), (1001, &["base", "datanode"])]);
    let dag = plan(&old, &new, &PlanOperation::RemoveNodes, &hadoop()).unwrap();
    assert_eq!(
        actions_on(&dag, 1002),
        [
            "1002-stop-datanode",
            "1002-remove-datanode",
            "1002-remove-base",
            "1002-delete"
        ]
    );
    // Every service that stays is configured for the smaller cluster before anything
    // on the leaving node stops.
    assert_eq!(
        actions_on(&dag, 1000),
        ["1000-configure-base", "1000-configure-namenode"]
    );
    assert_eq!(
        actions_on(&dag, 1001),
        ["1001-configure-base", "1001-configure-datanode"]
    );
    let first_stop = id(&dag, 1002, Some("datanode"), Action::Stop);
    for (node, service) in [(1000, "namenode"), (1001, "datanode"), (1001, "base")] {
        let configure = id(&dag, node, Some(service), Action::Configure);
        assert!(precedes(&dag, configure, first_stop), "{:?}", dag.tasks());
    }
    assert_eq!(dag.len(), 8);
    assert_stages_well_formed(&dag);
    assert_nodes_serial(&dag);
    let err = plan(&new, &old, &PlanOperation::RemoveNodes, &hadoop()).unwrap_err();
    assert!(matches!(err, PlanError::LayoutMismatch { .. }), "{err}");
}

#[test]
fn remove_services_reconfigures_what_stays_then_stops_and_removes_them() {
    let old = cluster();
    let mut new = cluster();
    new.nodes[2].services.remove("client");
    let dag = plan(&old, &new, &PlanOperation::RemoveServices, &hadoop()).unwrap();
    // The client defines no stop or remove; what stays is still configured for a
    // cluster without it.
    assert!(dag
        .tasks()
        .iter()
        .all(|task| task.action == Action::Configure));
    assert_eq!(dag.len(), 6, "{:?}", dag.tasks());
    new.nodes[2].services.remove("datanode");
    let dag = plan(&old, &new, &PlanOperation::RemoveServices, &hadoop()).unwrap();
    assert_eq!(
        actions_on(&dag, 1002),
        [
            "1002-configure-base",
            "1002-stop-datanode",
            "1002-remove-datanode"
        ]
    );
    let stop = id(&dag, 1002, Some("datanode"), Action::Stop);
    let configure = id(&dag, 1001, Some("datanode"), Action::Configure);
    assert!(precedes(&dag, configure, stop));
    assert_stages_well_formed(&dag);
}

#[test]
fn reconfigure_with_restart_stops_configures_and_starts_in_dependency_order() {
    let c = cluster();
    let dag = plan(
        &c,
        &c,
        &PlanOperation::Reconfigure { restart: true },
        &hadoop(),
    )
    .unwrap();
    assert_nodes_serial(&dag);
    let nn_stop = id(&dag, 1000, Some("namenode"), Action::Stop);
    let nn_start = id(&dag, 1000, Some("namenode"), Action::Start);
    let dn_stop = id(&dag, 1001, Some("datanode"), Action::Stop);
    let dn_configure = id(&dag, 1001, Some("datanode"), Action::Configure);
    let dn_start = id(&dag, 1001, Some("datanode"), Action::Start);
    assert!(precedes(&dag, dn_stop, nn_stop));
    assert!(precedes(&dag, nn_start, dn_start));
    assert!(precedes(&dag, dn_stop, dn_configure));
    assert!(precedes(&dag, dn_configure, dn_start));
    assert!(precedes(
        &dag,
        id(&dag, 1001, None, Action::Bootstrap),
        dn_stop
    ));
    assert!(dag.tasks().iter().all(|t| !matches!(
        t.action,
        Action::Install | Action::Initialize | Action::Create
    )));
}

#[test]
fn reconfigure_without_restart_only_configures() {
    let c = cluster();
    let dag = plan(
        &c,
        &c,
        &PlanOperation::Reconfigure { restart: false },
        &hadoop(),
    )
    .unwrap();
    assert_eq!(
        actions_on(&dag, 1002),
        [
            "1002-bootstrap",
            "1002-configure-base",
            "1002-configure-client",
            "1002-configure-datanode"
        ]
    );
}

#[test]
fn sync_keys_bootstraps_every_node_and_touches_no_service() {
    let c = cluster();
    let dag = plan(&c, &c, &PlanOperation::SyncKeys, &hadoop()).unwrap();
    let labels: Vec<String> = dag.tasks().iter().map(Task::label).collect();
    assert_eq!(
        labels,
        ["1000-bootstrap", "1001-bootstrap", "1002-bootstrap"]
    );
}

#[test]
fn start_adds_runtime_dependencies() {
    let c = cluster();
    let op = PlanOperation::Start {
        services: Some(names(&["datanode"])),
    };
    let dag = plan(&c, &c, &op, &hadoop()).unwrap();
    let labels: Vec<String> = dag.tasks().iter().map(Task::label).collect();
    assert_eq!(
        labels,
        [
            "1000-start-namenode",
            "1001-start-datanode",
            "1002-start-datanode"
        ]
    );
    assert!(precedes(&dag, TaskId(0), TaskId(2)));
}

#[test]
fn stop_adds_runtime_dependents() {
    let c = cluster();
    let op = PlanOperation::Stop {
        services: Some(names(&["namenode"])),
    };
    let dag = plan(&c, &c, &op, &hadoop()).unwrap();
    let nn = id(&dag, 1000, Some("namenode"), Action::Stop);
    for node in [1001, 1002] {
        assert!(precedes(
            &dag,
            id(&dag, node, Some("datanode"), Action::Stop),
            nn
        ));
    }
    assert_eq!(dag.len(), 3);
}

#[test]
fn restart_of_some_services_stops_dependents_then_starts_in_order() {
    let c = cluster();
    let op = PlanOperation::Restart {
        services: Some(names(&["namenode"])),
    };
    let dag = plan(&c, &c, &op, &hadoop()).unwrap();
    let nn_stop = id(&dag, 1000, Some("namenode"), Action::Stop);
    let nn_start = id(&dag, 1000, Some("namenode"), Action::Start);
    let dn_stop = id(&dag, 1002, Some("datanode"), Action::Stop);
    let dn_start = id(&dag, 1002, Some("datanode"), Action::Start);
    assert!(precedes(&dag, dn_stop, nn_stop));
    assert!(precedes(&dag, nn_stop, nn_start));
    assert!(precedes(&dag, nn_start, dn_start));
    assert_eq!(dag.len(), 6);
}

#[test]
fn restart_of_a_service_not_on_the_cluster_is_refused() {
    let c = cluster();
    let op = PlanOperation::Restart {
        services: Some(names(&["kerberos"])),
    };
    let err = plan(&c, &c, &op, &hadoop()).unwrap_err();
    assert_eq!(err, PlanError::NotOnCluster(name("kerberos")));
}

#[test]
fn a_dependency_without_the_action_is_stood_in_for_by_its_own_dependencies() {
    // web → proxy (no start) → db: db's start must precede web's initialize/start.
    let graph: ServiceGraph = [
        ("web", service(FULL, &[], &["proxy"], &[])),
        ("proxy", service(&[Install], &[], &["db"], &[])),
        ("db", service(FULL, &[], &[], &[])),
    ]
    .into_iter()
    .map(|(n, s)| (name(n), s))
    .collect();
    let l = layout(&[(1000, &["web", "proxy"]), (1001, &["db"])]);
    let dag = plan(&empty(), &l, &PlanOperation::Create, &graph).unwrap();
    let db_start = id(&dag, 1001, Some("db"), Action::Start);
    let web_init = task(&dag, 1000, Some("web"), Action::Initialize);
    assert!(web_init.after.contains(&db_start));
}

#[test]
fn a_dependency_cycle_names_its_services() {
    let graph: ServiceGraph = [
        ("a", service(FULL, &[], &["b"], &[])),
        ("b", service(FULL, &[], &["a"], &[])),
        ("c", service(FULL, &[], &[], &[])),
    ]
    .into_iter()
    .map(|(n, s)| (name(n), s))
    .collect();
    let l = layout(&[(1000, &["a", "c"]), (1001, &["b"])]);
    let err = plan(&empty(), &l, &PlanOperation::Create, &graph).unwrap_err();
    assert_eq!(
        err,
        PlanError::DependencyCycle {
            services: vec![name("a"), name("b")]
        }
    );
    assert_eq!(err.to_string(), "dependency cycle among services a, b");
}

#[test]
fn an_unknown_service_is_an_error() {
    let l = layout(&[(1000, &["base", "mystery"])]);
    let err = plan(&empty(), &l, &PlanOperation::Create, &hadoop()).unwrap_err();
    assert_eq!(err, PlanError::UnknownService(name("mystery")));
}

#[test]
fn rollback_of_a_failed_create_undoes_what_completed() {
    let graph = hadoop();
    let failed = plan(&empty(), &cluster(), &PlanOperation::Create, &graph).unwrap();
    // Everything on node 1000 completed, and node 1001 was created and confirmed.
    let completed: BTreeSet<TaskId> = failed
        .tasks()
        .iter()
        .filter(|t| {
            t.node == 1000
                || (t.node == 1001 && matches!(t.action, Action::Create | Action::Confirm))
        })
        .map(|t| t.id)
        .collect();
    let op = PlanOperation::Rollback {
        failed: failed.clone(),
        completed,
    };
    let dag = plan(&empty(), &cluster(), &op, &graph).unwrap();
    assert_nodes_serial(&dag);
    assert_eq!(
        actions_on(&dag, 1000),
        [
            "1000-stop-namenode",
            "1000-remove-namenode",
            "1000-remove-base",
            "1000-delete"
        ]
    );
    assert_eq!(actions_on(&dag, 1001), ["1001-delete"]);
    assert!(actions_on(&dag, 1002).is_empty());
}

#[test]
fn rollback_of_a_half_done_restart_starts_what_was_stopped() {
    let c = cluster();
    let graph = hadoop();
    let op = PlanOperation::Restart { services: None };
    let failed = plan(&c, &c, &op, &graph).unwrap();
    // Only the stops completed.
    let completed: BTreeSet<TaskId> = failed
        .tasks()
        .iter()
        .filter(|t| t.action == Action::Stop)
        .map(|t| t.id)
        .collect();
    let dag = plan(
        &c,
        &c,
        &PlanOperation::Rollback { failed, completed },
        &graph,
    )
    .unwrap();
    let labels: BTreeSet<String> = dag.tasks().iter().map(Task::label).collect();
    assert_eq!(
        labels,
        [
            "1000-start-namenode",
            "1001-start-datanode",
            "1002-start-datanode"
        ]
        .map(String::from)
        .into()
    );
    assert!(precedes(
        &dag,
        id(&dag, 1000, Some("namenode"), Action::Start),
        id(&dag, 1001, Some("datanode"), Action::Start)
    ));
}

#[test]
fn rollback_rejects_unknown_task_ids() {
    let c = cluster();
    let op = PlanOperation::Rollback {
        failed: TaskDag::default(),
        completed: [TaskId(3)].into(),
    };
    let err = plan(&c, &c, &op, &hadoop()).unwrap_err();
    assert_eq!(err, PlanError::UnknownTask(TaskId(3)));
}

#[test]
fn planning_is_deterministic() {
    let a = plan(&empty(), &cluster(), &PlanOperation::Create, &hadoop()).unwrap();
    let b = plan(&empty(), &cluster(), &PlanOperation::Create, &hadoop()).unwrap();
    assert_eq!(a, b);
}

#[test]
fn json_has_the_cli_contract_and_round_trips() {
    let dag = plan(&empty(), &cluster(), &PlanOperation::Create, &hadoop()).unwrap();
    let json = serde_json::to_value(&dag).unwrap();
    let first = &json["tasks"][0];
    assert_eq!(first["id"], 0);
    assert_eq!(first["node"], 1000);
    assert_eq!(first["service"], serde_json::Value::Null);
    assert_eq!(first["action"], "create");
    assert!(first["after"].as_array().unwrap().is_empty());
    let install = task(&dag, 1001, Some("datanode"), Action::Install);
    let raw = &json["tasks"][install.id.index()];
    assert_eq!(raw["service"], "datanode");
    assert_eq!(raw["action"], "install");
    let back: TaskDag = serde_json::from_value(json).unwrap();
    assert_eq!(back, dag);
}

#[test]
fn json_with_a_forward_reference_is_rejected() {
    let raw = r#"{"tasks": [
        {"id": 0, "node": 1000, "service": null, "action": "create", "after": [1], "stage": 0},
        {"id": 1, "node": 1000, "service": null, "action": "confirm", "after": [], "stage": 1}
    ]}"#;
    let err = serde_json::from_str::<TaskDag>(raw).unwrap_err();
    assert!(err.to_string().contains("not an earlier task"), "{err}");
}

#[test]
fn stages_never_hold_two_tasks_of_one_node_and_follow_edges() {
    let dag = plan(&empty(), &cluster(), &PlanOperation::Create, &hadoop()).unwrap();
    assert_stages_well_formed(&dag);
}

#[test]
fn the_dag_schedule_beats_stage_barriers_when_nodes_are_uneven() {
    // Node 1000 runs three independent services; node 1001 a chain of two, where the
    // second waits on nothing from 1000. Barriers make 1001 wait for 1000's stages.
    let graph: ServiceGraph = [
        ("a", service(&[Install], &[], &[], &[])),
        ("b", service(&[Install], &[], &[], &[])),
        ("c", service(&[Install], &[], &[], &[])),
        ("d", service(&[Install, Start], &[], &[], &[])),
        ("e", service(&[Install, Start], &["d"], &["d"], &[])),
    ]
    .into_iter()
    .map(|(n, s)| (name(n), s))
    .collect();
    let l = layout(&[(1000, &["a", "b", "c"]), (1001, &["d", "e"])]);
    let dag = plan(&empty(), &l, &PlanOperation::Create, &graph).unwrap();
    let unit = dag.compare_schedules(unit_cost);
    assert!(
        unit.dag_critical_path < unit.staged_critical_path,
        "{unit:?}"
    );
    let costs = ActionCosts {
        create: 30,
        confirm: 5,
        bootstrap: 10,
        install: 20,
        configure: 2,
        initialize: 5,
        start: 3,
        stop: 3,
        remove: 5,
        delete: 10,
    };
    let weighted = dag.compare_schedules(|t: &Task| costs.of(t.action));
    assert!(weighted.dag_critical_path <= weighted.staged_critical_path);
    // Critical path is at least the busiest node's total work.
    let node_1000: u64 = dag
        .tasks()
        .iter()
        .filter(|t| t.node == 1000)
        .map(|t| costs.of(t.action))
        .sum();
    assert!(weighted.dag_critical_path >= node_1000);
}

fn coopr_catalog() -> crate::catalog::Catalog {
    let root = std::env::var_os("COOPR_CATALOG")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/coopr-catalog").into()
        });
    let mut files = Vec::new();
    for kind in ["services", "clustertemplates"] {
        for entry in std::fs::read_dir(root.join(kind)).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            files.push((format!("{kind}/{file}"), text));
        }
    }
    crate::catalog::coopr::import_files(&files).unwrap()
}

#[test]
fn the_service_graph_reads_catalog_services() {
    let catalog = coopr_catalog();
    let graph = ServiceGraph::from_catalog(&catalog);
    let hbase = graph.get("hbase-master").unwrap();
    assert_eq!(hbase.provides, names(&["hbase-client"]));
    assert_eq!(hbase.install.requires, names(&["base", "zookeeper-server"]));
    assert_eq!(hbase.install.uses, names(&["kerberos-client"]));
    assert_eq!(
        hbase.runtime.requires,
        names(&[
            "hadoop-hdfs-namenode",
            "hadoop-hdfs-datanode",
            "zookeeper-server"
        ])
    );
    assert_eq!(
        hbase.actions,
        [Install, Configure, Initialize, Start, Stop].into()
    );
    assert!(graph.get("base").unwrap().actions == [Install, Configure].into());
}

#[test]
fn coopr_hadoop_cluster_plans_with_namenode_before_its_dependents() {
    let graph = ServiceGraph::from_catalog(&coopr_catalog());
    let masters: &[&str] = &[
        "base",
        "hadoop-hdfs-namenode",
        "hadoop-yarn-resourcemanager",
        "zookeeper-server",
        "hbase-master",
    ];
    let workers: &[&str] = &[
        "base",
        "hadoop-hdfs-datanode",
        "hadoop-yarn-nodemanager",
        "hbase-regionserver",
    ];
    let l = layout(&[(1000, masters), (1001, workers), (1002, workers)]);
    let dag = plan(&empty(), &l, &PlanOperation::Create, &graph).unwrap();
    assert_nodes_serial(&dag);
    let namenode = id(&dag, 1000, Some("hadoop-hdfs-namenode"), Action::Start);
    for node in [1001, 1002] {
        let datanode = id(&dag, node, Some("hadoop-hdfs-datanode"), Action::Start);
        assert!(precedes(&dag, namenode, datanode));
        // hbase-master needs the datanodes running before it initializes.
        let hbase_init = id(&dag, 1000, Some("hbase-master"), Action::Initialize);
        assert!(precedes(&dag, datanode, hbase_init));
        let regionserver = id(&dag, node, Some("hbase-regionserver"), Action::Start);
        assert!(precedes(
            &dag,
            id(&dag, 1000, Some("hbase-master"), Action::Start),
            regionserver
        ));
    }
    let schedules = dag.compare_schedules(unit_cost);
    assert!(schedules.dag_critical_path <= schedules.staged_critical_path);
}

#[test]
fn update_tears_a_traded_service_down_before_building_its_replacement() {
    let old = cluster();
    let mut new = cluster();
    new.nodes[1].services = names(&["base", "client"]);
    new.nodes
        .push(layout(&[(1003, &["base", "datanode"])]).nodes.remove(0));
    let err = plan(&old, &new, &PlanOperation::AddServices, &hadoop()).unwrap_err();
    assert!(matches!(err, PlanError::LayoutMismatch { .. }), "{err}");
    let dag = plan(&old, &new, &PlanOperation::Update, &hadoop()).unwrap();
    assert_nodes_serial(&dag);
    assert_eq!(
        actions_on(&dag, 1001),
        [
            "1001-stop-datanode",
            "1001-remove-datanode",
            "1001-bootstrap",
            "1001-install-client",
            "1001-configure-client"
        ]
    );
    assert_eq!(actions_on(&dag, 1003).len(), 9);
}

#[test]
fn a_plans_tasks_are_counted_by_step_in_plan_order() {
    let task = |id: u32, node: u32, action: &str, service: Option<&str>, after: &[u32]| {
        serde_json::json!({
            "id": id, "node": node, "service": service, "action": action,
            "after": after, "stage": id,
        })
    };
    let dag: TaskDag = serde_json::from_value(serde_json::json!({"tasks": [
        task(0, 1, "create", None, &[]),
        task(1, 2, "create", None, &[]),
        task(2, 1, "install", Some("web"), &[0]),
        task(3, 2, "install", Some("db"), &[1]),
        task(4, 2, "install", Some("web"), &[3]),
    ]}))
    .unwrap();
    assert_eq!(
        dag.step_counts(),
        [
            ("create".to_owned(), 2),
            ("install web".to_owned(), 2),
            ("install db".to_owned(), 1)
        ]
    );
    assert_eq!(TaskDag::default().step_counts(), []);
}

#[test]
fn replace_nodes_builds_the_new_node_then_reconfigures_then_tears_the_old_one_down() {
    let old = cluster();
    let mut new = layout(&[
        (1000, &["base", "namenode"]),
        (1002, &["base", "datanode", "client"]),
        (1003, &["base", "datanode"]),
    ]);
    new.nodes.sort_by_key(|node| node.number);
    let dag = plan(&old, &new, &PlanOperation::ReplaceNodes, &hadoop()).unwrap();
    assert_eq!(
        actions_on(&dag, 1003),
        [
            "1003-create",
            "1003-confirm",
            "1003-bootstrap",
            "1003-install-base",
            "1003-install-datanode",
            "1003-configure-base",
            "1003-configure-datanode",
            "1003-initialize-datanode",
            "1003-start-datanode",
            // Configured again with the cluster the old node has left.
            "1003-configure-base",
            "1003-configure-datanode",
        ]
    );
    assert_eq!(
        actions_on(&dag, 1001),
        [
            "1001-stop-datanode",
            "1001-remove-datanode",
            "1001-remove-base",
            "1001-delete"
        ]
    );
    assert_eq!(
        actions_on(&dag, 1002),
        [
            "1002-configure-base",
            "1002-configure-client",
            "1002-configure-datanode"
        ]
    );
    // The new node serves before anything is reconfigured, and everything is
    // reconfigured before the old node stops.
    let started = id(&dag, 1003, Some("datanode"), Action::Start);
    let stop = id(&dag, 1001, Some("datanode"), Action::Stop);
    for task in dag
        .tasks()
        .iter()
        .filter(|task| task.action == Action::Configure)
    {
        if task.node != 1003 || task.id > started {
            assert!(precedes(&dag, started, task.id), "{}", task.label());
            assert!(precedes(&dag, task.id, stop), "{}", task.label());
        }
    }
    assert_stages_well_formed(&dag);
    assert_nodes_serial(&dag);
}

#[test]
fn replace_nodes_refuses_layouts_that_are_not_a_replacement() {
    let old = cluster();
    let cases: [(&str, Layout); 3] = [
        ("no node would be replaced", cluster()),
        (
            "1 nodes would go and 2 come",
            layout(&[
                (1000, &["base", "namenode"]),
                (1002, &["base", "datanode", "client"]),
                (1003, &["base", "datanode"]),
                (1004, &["base", "datanode"]),
            ]),
        ),
        (
            "node 1002 would change",
            layout(&[
                (1000, &["base", "namenode"]),
                (1002, &["base", "datanode"]),
                (1003, &["base", "datanode"]),
            ]),
        ),
    ];
    for (expected, new) in cases {
        let err = plan(&old, &new, &PlanOperation::ReplaceNodes, &hadoop()).unwrap_err();
        assert!(err.to_string().contains(expected), "{expected}: {err}");
    }
}

#[test]
fn machine_steps_follow_a_stop_and_come_before_a_start() {
    let c = cluster();
    let all = || c.nodes.iter().map(|node| node.number).collect::<Vec<_>>();
    // Suspend after the services stopped: each machine after every stop of any node.
    let mut stop = plan(&c, &c, &PlanOperation::Stop { services: None }, &hadoop()).unwrap();
    let stops = stop.len();
    stop.append(TaskDag::node_steps(all(), Action::Suspend));
    assert_eq!(stop.len(), stops + 3);
    for suspend in stop.tasks().iter().filter(|t| t.action == Action::Suspend) {
        assert_eq!(suspend.service, None);
        for other in stop.tasks().iter().filter(|t| t.action == Action::Stop) {
            assert!(precedes(&stop, other.id, suspend.id), "{}", suspend.label());
        }
    }
    // Resume before the services start: every start after every machine is back.
    let mut resume = TaskDag::node_steps(all(), Action::Resume);
    resume.append(plan(&c, &c, &PlanOperation::Start { services: None }, &hadoop()).unwrap());
    let labels: Vec<String> = resume.tasks()[..3].iter().map(Task::label).collect();
    assert_eq!(labels, ["1000-resume", "1001-resume", "1002-resume"]);
    for start in resume.tasks().iter().filter(|t| t.action == Action::Start) {
        for machine in 0..3 {
            assert!(
                precedes(&resume, TaskId(machine), start.id),
                "{}",
                start.label()
            );
        }
    }
    // The plan stays well formed once stored and read back.
    let json = serde_json::to_string(&resume).unwrap();
    assert_eq!(serde_json::from_str::<TaskDag>(&json).unwrap(), resume);
}
