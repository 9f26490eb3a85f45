//! Drift, the per-service decision, and the rolling plan, by tables.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::*;
use crate::catalog::coopr::import_bundle_value;
use crate::layout::{Layout, NodeLayout};
use crate::names::{HardwareTypeName, ImageTypeName, TemplateName};
use crate::plan::{plan, Action, PlanOperation, Task, TaskDag, Upgrade};

fn shell(run: &str) -> Value {
    json!({"type": "shell", "fields": {"run": run}})
}

/// A web stack's services: `app` with every action, `lb` (configure, start, stop)
/// needing `app` at run time, `kv` needed by `app`. `edit` changes the JSON first.
fn catalog(edit: impl FnOnce(&mut Value)) -> Catalog {
    let mut bundle = json!({
        "services": [
            {"name": "kv", "provisioner": {"actions": {
                "install": shell("kv install"), "start": shell("kv start"),
                "stop": shell("kv stop")}}},
            {"name": "app", "description": "the app",
             "dependencies": {"runtime": {"requires": ["kv"]}},
             "provisioner": {"actions": {
                "install": shell("app install v1"), "configure": shell("app configure"),
                "initialize": shell("app init"), "start": shell("app start"),
                "stop": shell("app stop"), "remove": shell("app remove")}}},
            {"name": "lb", "dependencies": {"runtime": {"requires": ["app"]}},
             "provisioner": {"actions": {
                "configure": shell("lb configure"), "start": shell("lb start"),
                "stop": shell("lb stop")}}}
        ],
        "clustertemplates": [
            {"name": "web", "compatibility": {"services": ["kv", "app", "lb"]}}
        ]
    });
    edit(&mut bundle);
    import_bundle_value(bundle).expect("test catalog imports")
}

fn set_action(bundle: &mut Value, service: usize, action: &str, run: &str) {
    bundle["services"][service]["provisioner"]["actions"][action] = shell(run);
}

fn on_cluster() -> BTreeSet<ServiceName> {
    ["kv", "app", "lb"]
        .into_iter()
        .map(|name| ServiceName::parse(name).expect("name"))
        .collect()
}

fn upgrade_of(changed: &[(&str, ServiceUpgrade)], reconfigure: &[&str]) -> UpgradeSteps {
    UpgradeSteps {
        services: changed
            .iter()
            .map(|(name, upgrade)| (ServiceName::parse(*name).expect("name"), *upgrade))
            .collect(),
        reconfigure: reconfigure
            .iter()
            .map(|name| ServiceName::parse(*name).expect("name"))
            .collect(),
    }
}

/// A change an admin makes to the test catalog's JSON.
type Edit = Box<dyn Fn(&mut Value)>;

#[test]
fn each_changed_action_decides_what_the_service_runs() {
    let app = 1;
    let lb = 2;
    let cases: Vec<(&str, Edit, UpgradeSteps)> = vec![
        ("nothing changed", Box::new(|_| {}), UpgradeSteps::default()),
        (
            "a description changed",
            Box::new(move |b| b["services"][app]["description"] = json!("new words")),
            UpgradeSteps::default(),
        ),
        (
            "install changed",
            Box::new(move |b| set_action(b, app, "install", "app install v2")),
            upgrade_of(&[("app", ServiceUpgrade::Reinstall)], &["lb"]),
        ),
        (
            "configure changed",
            Box::new(move |b| set_action(b, app, "configure", "app configure --fast")),
            upgrade_of(&[("app", ServiceUpgrade::Reconfigure)], &["lb"]),
        ),
        (
            "start changed",
            Box::new(move |b| set_action(b, app, "start", "app start --port 81")),
            upgrade_of(&[("app", ServiceUpgrade::Restart)], &["lb"]),
        ),
        (
            "stop removed",
            Box::new(move |b| {
                b["services"][app]["provisioner"]["actions"]
                    .as_object_mut()
                    .expect("actions")
                    .remove("stop");
            }),
            upgrade_of(&[("app", ServiceUpgrade::Restart)], &["lb"]),
        ),
        (
            "install and start changed: the larger wins",
            Box::new(move |b| {
                set_action(b, app, "install", "app install v2");
                set_action(b, app, "start", "app start --port 81");
            }),
            upgrade_of(&[("app", ServiceUpgrade::Reinstall)], &["lb"]),
        ),
        (
            "initialize and remove run later, not now",
            Box::new(move |b| {
                set_action(b, app, "initialize", "app init v2");
                set_action(b, app, "remove", "app remove v2");
            }),
            UpgradeSteps::default(),
        ),
        (
            "a restarted dependant is not configured again as well",
            Box::new(move |b| {
                set_action(b, app, "start", "app start --port 81");
                set_action(b, lb, "start", "lb start --port 81");
            }),
            upgrade_of(
                &[
                    ("app", ServiceUpgrade::Restart),
                    ("lb", ServiceUpgrade::Restart),
                ],
                &[],
            ),
        ),
        (
            "kv restarted: app depends on it and is configured again",
            Box::new(|b| set_action(b, 0, "start", "kv start --sync")),
            upgrade_of(&[("kv", ServiceUpgrade::Restart)], &["app"]),
        ),
    ];
    let old = catalog(|_| {});
    for (case, edit, expected) in cases {
        let new = catalog(edit);
        assert_eq!(
            service_upgrades(&old, &new, &on_cluster()),
            expected,
            "{case}"
        );
    }
}

#[test]
fn a_service_not_on_the_cluster_runs_nothing() {
    let old = catalog(|_| {});
    let new = catalog(|b| set_action(b, 1, "install", "app install v2"));
    let only_kv: BTreeSet<ServiceName> = [ServiceName::parse("kv").expect("name")].into();
    assert!(service_upgrades(&old, &new, &only_kv).is_empty());
}

#[test]
fn drift_names_changed_and_removed_entities() {
    let old = catalog(|_| {});
    let template = |catalog: &Catalog| catalog.clustertemplate("web").cloned();
    let kind_name = |drift: &[EntityDrift]| -> Vec<(EntityKind, String, DriftKind)> {
        drift
            .iter()
            .map(|entity| (entity.kind, entity.name.clone(), entity.drift))
            .collect()
    };
    assert!(drift(&old, &old, template(&old).as_ref()).is_empty());

    let new = catalog(|b| set_action(b, 1, "install", "app install v2"));
    let found = drift(&old, &new, template(&new).as_ref());
    assert_eq!(
        kind_name(&found),
        [(EntityKind::Service, "app".to_owned(), DriftKind::Changed)]
    );
    assert_eq!(
        found[0]
            .after
            .as_ref()
            .map(|after| after["provisioner"]["actions"]["install"]["fields"]["run"].clone()),
        Some(json!("app install v2"))
    );

    let new = catalog(|b| {
        b["services"].as_array_mut().expect("services").remove(2);
        b["clustertemplates"][0]["compatibility"]["services"] = json!(["kv", "app"]);
    });
    assert_eq!(
        kind_name(&drift(&old, &new, template(&new).as_ref())),
        [
            (EntityKind::Service, "lb".to_owned(), DriftKind::Removed),
            (
                EntityKind::ClusterTemplate,
                "web".to_owned(),
                DriftKind::Changed
            ),
        ]
    );
    assert_eq!(
        kind_name(&drift(&old, &old, None)),
        [(
            EntityKind::ClusterTemplate,
            "web".to_owned(),
            DriftKind::Removed
        )]
    );
}

/// kv on 1000, lb on 1001, app on 1002..=1005.
fn web_layout() -> Layout {
    let node = |number: u32, service: &str| NodeLayout {
        number,
        hardwaretype: HardwareTypeName::parse("small").expect("name"),
        imagetype: ImageTypeName::parse("debian").expect("name"),
        services: [ServiceName::parse(service).expect("name")].into(),
    };
    Layout {
        template: TemplateName::parse("web").expect("name"),
        nodes: vec![
            node(1000, "kv"),
            node(1001, "lb"),
            node(1002, "app"),
            node(1003, "app"),
            node(1004, "app"),
            node(1005, "app"),
        ],
    }
}

fn app_reinstall(max_unavailable: u32, nodes: Option<&[u32]>) -> Upgrade {
    Upgrade {
        steps: upgrade_of(&[("app", ServiceUpgrade::Reinstall)], &["lb"]),
        nodes: nodes.map(|nodes| nodes.iter().copied().collect()),
        max_unavailable,
    }
}

#[test]
fn batches_keep_all_but_max_unavailable_nodes_of_a_service_up() {
    let layout = web_layout();
    let numbers =
        |upgrade: &Upgrade| -> Vec<Vec<u32>> { crate::plan::upgrade_batches(&layout, upgrade) };
    assert_eq!(
        numbers(&app_reinstall(1, None)),
        [vec![1002], vec![1003], vec![1004], vec![1005]]
    );
    assert_eq!(
        numbers(&app_reinstall(0, None)),
        numbers(&app_reinstall(1, None))
    );
    assert_eq!(
        numbers(&app_reinstall(2, None)),
        [vec![1002, 1003], vec![1004, 1005]]
    );
    assert_eq!(
        numbers(&app_reinstall(3, None)),
        [vec![1002, 1003, 1004], vec![1005]]
    );
    assert_eq!(
        numbers(&app_reinstall(1, Some(&[1003, 1005]))),
        [vec![1003], vec![1005]]
    );
    // Different services share a batch: kv's one node and lb's go with the first app.
    let mixed = Upgrade {
        steps: upgrade_of(
            &[
                ("kv", ServiceUpgrade::Restart),
                ("lb", ServiceUpgrade::Restart),
                ("app", ServiceUpgrade::Restart),
            ],
            &[],
        ),
        nodes: None,
        max_unavailable: 1,
    };
    assert_eq!(
        numbers(&mixed),
        [vec![1000, 1001, 1002], vec![1003], vec![1004], vec![1005]]
    );
}

fn graph() -> crate::plan::ServiceGraph {
    upgrade_graph(&catalog(|_| {}), &catalog(|_| {}))
}

fn steps_on(dag: &TaskDag, node: u32) -> Vec<String> {
    dag.tasks()
        .iter()
        .filter(|task| task.node == node)
        .map(Task::label)
        .collect()
}

/// Whether `later` waits (directly or not) for `earlier`.
fn waits_for(dag: &TaskDag, later: &Task, earlier: &Task) -> bool {
    let mut stack = later.after.clone();
    let mut seen = BTreeSet::new();
    while let Some(id) = stack.pop() {
        if id == earlier.id {
            return true;
        }
        if seen.insert(id) {
            stack.extend(dag.tasks()[id.index()].after.iter().copied());
        }
    }
    false
}

#[test]
fn the_plan_runs_only_changed_services_one_batch_after_another() {
    let layout = web_layout();
    let upgrade = PlanOperation::Upgrade(app_reinstall(1, None));
    let dag = plan(&layout, &layout, &upgrade, &graph()).expect("plans");
    assert!(steps_on(&dag, 1000).is_empty(), "kv is not touched");
    assert_eq!(steps_on(&dag, 1001), ["1001-configure-lb"]);
    for node in 1002..=1005 {
        assert_eq!(
            steps_on(&dag, node),
            [
                format!("{node}-stop-app"),
                format!("{node}-install-app"),
                format!("{node}-configure-app"),
                format!("{node}-start-app"),
            ]
        );
    }
    let at = |node: u32, action: Action| find(&dag, node, action);
    for (earlier, later) in [(1002, 1003), (1003, 1004), (1004, 1005)] {
        assert!(
            waits_for(&dag, at(later, Action::Stop), at(earlier, Action::Start)),
            "{later} goes down only once {earlier} is back"
        );
    }
    let lb = at(1001, Action::Configure);
    for node in 1002..=1005 {
        assert!(waits_for(&dag, lb, at(node, Action::Start)));
    }
    // The concatenated plan is still a valid plan (ids are positions, edges backward).
    let json = serde_json::to_string(&dag).expect("serialises");
    assert_eq!(serde_json::from_str::<TaskDag>(&json).expect("valid"), dag);

    let two_at_once = plan(
        &layout,
        &layout,
        &PlanOperation::Upgrade(app_reinstall(2, None)),
        &graph(),
    )
    .expect("plans");
    let stop_1003 = find(&two_at_once, 1003, Action::Stop);
    assert!(!waits_for(
        &two_at_once,
        stop_1003,
        find(&two_at_once, 1002, Action::Start)
    ));
    let stop_1004 = find(&two_at_once, 1004, Action::Stop);
    assert!(waits_for(
        &two_at_once,
        stop_1004,
        find(&two_at_once, 1003, Action::Start)
    ));
}

fn find(dag: &TaskDag, node: u32, action: Action) -> &Task {
    dag.tasks()
        .iter()
        .find(|task| task.node == node && task.action == action)
        .expect("planned")
}

#[test]
fn a_stop_only_the_old_definition_has_is_kept() {
    let old = catalog(|_| {});
    let new = catalog(|b| {
        b["services"][1]["provisioner"]["actions"]
            .as_object_mut()
            .expect("actions")
            .remove("stop");
    });
    let graph = upgrade_graph(&old, &new);
    let layout = web_layout();
    let steps = service_upgrades(&old, &new, &on_cluster());
    let upgrade = PlanOperation::Upgrade(Upgrade {
        steps,
        nodes: Some([1002].into()),
        max_unavailable: 1,
    });
    let dag = plan(&layout, &layout, &upgrade, &graph).expect("plans");
    assert_eq!(steps_on(&dag, 1002), ["1002-stop-app", "1002-start-app"]);
}
