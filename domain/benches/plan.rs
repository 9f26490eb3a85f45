//! Planner speed: `create` for 10, 100 and 1,000 nodes with 30 services.
//!
//! The services and their dependencies are those of Coopr's published Hadoop
//! catalog (install/runtime requires and uses, which actions each defines): five on
//! every node, five on every worker, twenty on one to three master nodes. Besides
//! criterion's timings, one line per size prints the plan's shape, a direct timing
//! and both schedule lengths (unit cost per task).

use std::collections::BTreeSet;
use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, BenchmarkId, Criterion};
use domain::layout::{Layout, NodeLayout, FIRST_NODE_NUMBER};
use domain::macros::{expand_json, MacroContext, MacroNode};
use domain::names::{HardwareTypeName, ImageTypeName, ServiceName, TemplateName};
use domain::plan::{
    plan, unit_cost, ActionCosts, DependencyLists, PlanOperation, ServiceAction, ServiceGraph,
    ServiceNode, Task,
};

use ServiceAction::{Configure, Initialize, Install, Start, Stop};

fn name(raw: &str) -> ServiceName {
    ServiceName::parse(raw).expect("valid name")
}

fn set(raw: &[&str]) -> BTreeSet<ServiceName> {
    raw.iter().map(|n| name(n)).collect()
}

/// (name, provides, install deps, runtime deps, actions), from Coopr's catalog.
type Spec = (
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
    &'static [ServiceAction],
);

const KC: &[&str] = &["base", "kerberos-client"];
const FULL: &[ServiceAction] = &[Install, Configure, Initialize, Start, Stop];
const DAEMON: &[ServiceAction] = &[Install, Configure, Start, Stop];
const CLIENT: &[ServiceAction] = &[Install, Configure];

const EVERY_NODE: &[Spec] = &[
    ("base", &[], &[], &[], CLIENT),
    (
        "kerberos-client",
        &[],
        &["base"],
        &["kerberos-master"],
        CLIENT,
    ),
    ("fail2ban", &[], &["base"], &[], DAEMON),
    ("hive-client", &[], KC, &["kerberos-master"], CLIENT),
    (
        "impala-shell",
        &[],
        KC,
        &[
            "kerberos-master",
            "impala-catalog",
            "impala-server",
            "impala-state-store",
        ],
        CLIENT,
    ),
];

const WORKERS: &[Spec] = &[
    (
        "hadoop-hdfs-datanode",
        &["hadoop-client"],
        KC,
        &["hadoop-hdfs-namenode", "kerberos-master"],
        DAEMON,
    ),
    (
        "hadoop-yarn-nodemanager",
        &["hadoop-client"],
        KC,
        &["hadoop-yarn-resourcemanager", "kerberos-master"],
        DAEMON,
    ),
    (
        "hbase-regionserver",
        &["hbase-client"],
        &["base", "zookeeper-server", "kerberos-client"],
        &["hbase-master", "zookeeper-server", "kerberos-master"],
        DAEMON,
    ),
    (
        "impala-server",
        &[],
        KC,
        &[
            "hadoop-hdfs-namenode",
            "hadoop-hdfs-datanode",
            "impala-catalog",
            "kerberos-master",
        ],
        DAEMON,
    ),
    ("spark-worker", &[], &["base"], &["spark-master"], DAEMON),
];

const MASTERS: &[Spec] = &[
    ("kerberos-master", &[], KC, &[], FULL),
    (
        "hadoop-hdfs-namenode",
        &["hadoop-client"],
        KC,
        &["kerberos-master"],
        FULL,
    ),
    (
        "hadoop-yarn-resourcemanager",
        &["hadoop-client"],
        KC,
        &[
            "hadoop-hdfs-namenode",
            "hadoop-hdfs-datanode",
            "kerberos-master",
        ],
        FULL,
    ),
    (
        "hadoop-mapreduce-historyserver",
        &[],
        &["base", "kerberos-client", "hadoop-yarn-resourcemanager"],
        &["kerberos-master", "hadoop-yarn-resourcemanager"],
        FULL,
    ),
    ("zookeeper-server", &[], KC, &["kerberos-master"], DAEMON),
    (
        "hbase-master",
        &["hbase-client"],
        &["base", "zookeeper-server", "kerberos-client"],
        &[
            "hadoop-hdfs-namenode",
            "hadoop-hdfs-datanode",
            "zookeeper-server",
            "kerberos-master",
        ],
        FULL,
    ),
    (
        "mysql-server",
        &["mysql", "database"],
        &["base"],
        &[],
        DAEMON,
    ),
    (
        "hive-metastore-database",
        &[],
        &[],
        &["mysql-server"],
        &[Initialize],
    ),
    (
        "hive-metastore",
        &["hive-client"],
        &["base"],
        &[
            "hadoop-hdfs-namenode",
            "hadoop-hdfs-datanode",
            "hadoop-yarn-resourcemanager",
            "hadoop-yarn-nodemanager",
            "mysql-server",
            "hive-metastore-database",
        ],
        FULL,
    ),
    (
        "hive-server2",
        &[],
        KC,
        &[
            "hadoop-hdfs-namenode",
            "hadoop-hdfs-datanode",
            "hadoop-yarn-resourcemanager",
            "hadoop-yarn-nodemanager",
            "zookeeper-server",
            "hive-metastore",
            "kerberos-master",
        ],
        DAEMON,
    ),
    (
        "spark-historyserver",
        &["spark-client"],
        KC,
        &[
            "kerberos-master",
            "hadoop-hdfs-namenode",
            "hadoop-yarn-resourcemanager",
        ],
        FULL,
    ),
    ("spark-master", &[], &["base"], &[], DAEMON),
    (
        "impala-catalog",
        &[],
        KC,
        &[
            "hadoop-hdfs-namenode",
            "hadoop-hdfs-datanode",
            "hive-metastore",
            "zookeeper-server",
            "kerberos-master",
            "impala-state-store",
        ],
        DAEMON,
    ),
    (
        "impala-state-store",
        &[],
        KC,
        &[
            "hadoop-hdfs-namenode",
            "hadoop-hdfs-datanode",
            "kerberos-master",
        ],
        DAEMON,
    ),
    (
        "cdap",
        &[],
        &[
            "base",
            "hadoop-hdfs-namenode",
            "hbase-master",
            "zookeeper-server",
            "hadoop-client",
            "hbase-client",
            "hive-client",
            "spark-client",
        ],
        &[
            "hadoop-hdfs-namenode",
            "hadoop-hdfs-datanode",
            "hadoop-yarn-resourcemanager",
            "hadoop-yarn-nodemanager",
            "hbase-master",
            "hbase-regionserver",
            "zookeeper-server",
            "hive-metastore",
            "hive-server2",
            "spark-historyserver",
            "cdap-security",
        ],
        FULL,
    ),
    (
        "cdap-security",
        &[],
        &["base", "cdap"],
        &["zookeeper-server"],
        FULL,
    ),
    ("memcached", &[], &["base"], &[], DAEMON),
    ("haproxy", &[], &["base"], &[], DAEMON),
    ("nginx", &["web-server"], &["base"], &[], DAEMON),
    ("maven", &[], &["base"], &[], CLIENT),
];

fn graph() -> ServiceGraph {
    EVERY_NODE
        .iter()
        .chain(WORKERS)
        .chain(MASTERS)
        .map(|(service, provides, install, runtime, actions)| {
            (
                name(service),
                ServiceNode {
                    provides: set(provides),
                    install: DependencyLists {
                        requires: set(install),
                        uses: BTreeSet::new(),
                    },
                    runtime: DependencyLists {
                        requires: set(runtime),
                        uses: BTreeSet::new(),
                    },
                    actions: actions.iter().copied().collect(),
                },
            )
        })
        .collect()
}

/// Three master nodes (masters round-robin, zookeeper on all three), the rest
/// workers; every node carries the five everywhere-services.
fn layout(size: u32) -> Layout {
    let masters = size.min(3);
    let nodes = (0..size)
        .map(|i| {
            let mut services: BTreeSet<ServiceName> =
                EVERY_NODE.iter().map(|spec| name(spec.0)).collect();
            if i < masters {
                for (position, spec) in MASTERS.iter().enumerate() {
                    if spec.0 == "zookeeper-server" || position as u32 % masters == i {
                        services.insert(name(spec.0));
                    }
                }
            }
            if i >= masters || size <= masters {
                services.extend(WORKERS.iter().map(|spec| name(spec.0)));
            }
            NodeLayout {
                number: FIRST_NODE_NUMBER + i,
                hardwaretype: HardwareTypeName::parse("standard-large").expect("valid"),
                imagetype: ImageTypeName::parse("centos7").expect("valid"),
                services,
            }
        })
        .collect();
    Layout {
        template: TemplateName::parse("hadoop-distributed").expect("valid"),
        nodes,
    }
}

fn empty() -> Layout {
    Layout {
        template: TemplateName::parse("hadoop-distributed").expect("valid"),
        nodes: Vec::new(),
    }
}

/// Rough seconds per action on a cloud VM, for the weighted schedule lengths.
const SECONDS: ActionCosts = ActionCosts {
    create: 90,
    confirm: 30,
    bootstrap: 60,
    install: 120,
    configure: 20,
    initialize: 30,
    start: 15,
    stop: 10,
    remove: 30,
    delete: 30,
};

fn report(graph: &ServiceGraph) {
    for size in [10, 100, 1_000] {
        let new = layout(size);
        let old = empty();
        let rounds = if size >= 1_000 { 5 } else { 20 };
        let mut best = f64::INFINITY;
        let mut dag = None;
        for _ in 0..rounds {
            let started = Instant::now();
            let planned = plan(&old, &new, &PlanOperation::Create, graph).expect("plannable");
            best = best.min(started.elapsed().as_secs_f64() * 1e3);
            dag = Some(planned);
        }
        let dag = dag.expect("at least one round");
        let schedules = dag.compare_schedules(unit_cost);
        let weighted = dag.compare_schedules(|task: &Task| SECONDS.of(task.action));
        let mut per_node = std::collections::BTreeMap::<u32, usize>::new();
        for task in dag.tasks() {
            *per_node.entry(task.node).or_default() += 1;
        }
        let busiest = per_node.values().max().copied().unwrap_or(0);
        println!(
            "plan nodes={size} services=30 tasks={} edges={} ms={best:.2} dag_critical_path={} staged_critical_path={} stages={} busiest_node_tasks={busiest} weighted_dag_s={} weighted_staged_s={}",
            dag.len(),
            dag.edge_count(),
            schedules.dag_critical_path,
            schedules.staged_critical_path,
            schedules.stages,
            weighted.dag_critical_path,
            weighted.staged_critical_path,
        );
    }
}

/// Part of Coopr's cdap-distributed template config, plus a list over every worker.
fn template_config() -> serde_json::Value {
    serde_json::json!({
        "hadoop": {
            "core_site": {"fs.defaultFS": "hdfs://%host.service.hadoop-hdfs-namenode%"},
            "hdfs_site": {
                "dfs.namenode.rpc-bind-host": "%ip.bind_v4.self%",
                "dfs.replication": "2",
                "dfs.datanodes": "%join(map(host.service.hadoop-hdfs-datanode,'$:50010'),',')%"
            },
            "mapred_site": {"mapreduce.jobhistory.address": "%ip.bind_v4.service.hadoop-mapreduce-historyserver%:10020"},
            "yarn_site": {
                "yarn.resourcemanager.hostname": "%host.service.hadoop-yarn-resourcemanager%",
                "yarn.resourcemanager.scheduler.address": "%host.service.hadoop-yarn-resourcemanager%:8030",
                "yarn.resourcemanager.address": "%host.service.hadoop-yarn-resourcemanager%:8032"
            }
        },
        "hbase": {"hbase_site": {
            "hbase.rootdir": "hdfs://%host.service.hadoop-hdfs-namenode%/hbase",
            "hbase.zookeeper.quorum": "%join(map(host.service.zookeeper-server,'$:2181'),',')%"
        }},
        "hive": {"hive_site": {
            "javax.jdo.option.ConnectionURL": "jdbc:mysql://%ip.bind_v4.service.mysql-server%:3306/hive",
            "hive.metastore.uris": "%join(map(ip.bind_v4.service.hive-metastore,'thrift://$:9083'),',')%"
        }},
        "node": {"instance": "%instance.self.service.hadoop-hdfs-datanode%", "workers": "%num.service.hadoop-hdfs-datanode%"}
    })
}

fn macro_context(layout: &Layout) -> MacroContext {
    MacroContext {
        owner: "alice".to_owned(),
        nodes: layout
            .nodes
            .iter()
            .map(|node| MacroNode {
                number: node.number,
                host: format!("hadoop-7-{}.corral.test", node.number),
                ips: [
                    (
                        "bind_v4".to_owned(),
                        format!("10.0.{}.{}", node.number / 256, node.number % 256),
                    ),
                    (
                        "access_v4".to_owned(),
                        format!("192.0.2.{}", node.number % 256),
                    ),
                ]
                .into(),
                services: node.services.clone(),
            })
            .collect(),
        this_node: layout.nodes.last().map(|node| node.number),
        parameters: Default::default(),
    }
}

fn report_macros() {
    let config = template_config();
    for size in [10, 1_000] {
        let context = macro_context(&layout(size));
        let rounds = 200;
        let started = Instant::now();
        for _ in 0..rounds {
            black_box(expand_json(black_box(&config), &context, "config").expect("expands"));
        }
        let micros = started.elapsed().as_secs_f64() * 1e6 / f64::from(rounds);
        println!("macros nodes={size} config_strings=14 us_per_config_expansion={micros:.1}");
    }
}

fn bench_plan(c: &mut Criterion) {
    let graph = graph();
    report(&graph);
    report_macros();
    let mut group = c.benchmark_group("plan_create");
    group.sample_size(10);
    for size in [10u32, 100, 1_000] {
        let new = layout(size);
        let old = empty();
        group.bench_with_input(BenchmarkId::from_parameter(size), &new, |b, new| {
            b.iter(|| {
                plan(
                    black_box(&old),
                    black_box(new),
                    &PlanOperation::Create,
                    &graph,
                )
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_plan);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
