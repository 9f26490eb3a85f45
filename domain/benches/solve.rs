//! Solver speed on a realistic 30-service template at 10, 100 and 1,000 nodes.
//!
//! The template mixes what real catalogs use: unconstrained agents on every node,
//! a master group with single-instance services, a worker group, quorum services
//! with min/max, services kept apart by `cantcoexist`, and hardware/image
//! whitelists that force some services off the default types.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, BenchmarkId, Criterion};
use domain::names::{HardwareTypeName, ImageTypeName, ServiceName, TemplateName};
use domain::solver::{
    solve, LayoutGroups, LayoutProblem, ServiceConstraint, SizeBounds, TypeCandidates,
};

fn names(list: &[&str]) -> Vec<ServiceName> {
    list.iter()
        .map(|name| ServiceName::parse(*name).expect("valid name"))
        .collect()
}

fn constraint(min: u32, max: Option<u32>) -> ServiceConstraint {
    ServiceConstraint {
        min,
        max,
        ..Default::default()
    }
}

/// Unconstrained agents: on every node.
const AGENTS: [&str; 4] = ["base", "ntp", "monitoring-agent", "log-shipper"];
/// Masters, one instance each.
const MASTERS: [&str; 9] = [
    "namenode",
    "resourcemanager",
    "historyserver",
    "hbase-master",
    "hive-metastore",
    "hive-server2",
    "mysql",
    "spark-master",
    "oozie",
];
/// Workers, kept together on the data nodes.
const WORKERS: [&str; 4] = ["datanode", "nodemanager", "regionserver", "spark-worker"];
/// Quorums and stores, each with its own min/max.
const QUORUMS_AND_STORES: [&str; 5] = [
    "zookeeper",
    "kafka-broker",
    "elasticsearch",
    "cassandra",
    "redis",
];
/// Edge services.
const EDGE: [&str; 8] = [
    "kibana",
    "nginx",
    "haproxy",
    "hue",
    "gateway",
    "ldap",
    "kerberos-kdc",
    "prometheus",
];
/// The edge services that, like the masters, run once.
const SINGLE_EDGE: [&str; 5] = ["kibana", "hue", "ldap", "kerberos-kdc", "prometheus"];

fn template(size: u32) -> LayoutProblem {
    let services = names(&[&AGENTS[..], &MASTERS, &WORKERS, &QUORUMS_AND_STORES, &EDGE].concat());
    assert_eq!(services.len(), 30);
    let service = |name: &str| ServiceName::parse(name).expect("valid name");
    let hw = |name: &str| HardwareTypeName::parse(name).expect("valid name");
    let img = |name: &str| ImageTypeName::parse(name).expect("valid name");
    let mut constraints = BTreeMap::new();
    for single in MASTERS.iter().chain(&SINGLE_EDGE) {
        constraints.insert(service(single), constraint(1, Some(1)));
    }
    for (name, min, max) in [
        ("datanode", 3, None),
        ("zookeeper", 3, Some(5)),
        ("kafka-broker", 2, Some(9)),
        ("redis", 1, Some(3)),
        ("nginx", 1, Some(2)),
        ("haproxy", 1, Some(2)),
        ("gateway", 1, Some(4)),
    ] {
        constraints.insert(service(name), constraint(min, max));
    }
    constraints.insert(
        service("elasticsearch"),
        ServiceConstraint {
            min: 3,
            max: Some(12),
            hardware: vec![hw("large"), hw("xlarge")],
            images: Vec::new(),
        },
    );
    constraints.insert(
        service("cassandra"),
        ServiceConstraint {
            min: 3,
            max: None,
            hardware: Vec::new(),
            images: vec![img("centos7")],
        },
    );
    LayoutProblem {
        template: TemplateName::parse("big-data").expect("valid name"),
        size,
        size_bounds: SizeBounds {
            min: 5,
            ..SizeBounds::default()
        },
        services,
        hardware: TypeCandidates {
            candidates: vec![hw("medium"), hw("large"), hw("xlarge")],
            preferred: Some(hw("medium")),
            unusable: Vec::new(),
        },
        images: TypeCandidates {
            candidates: vec![img("ubuntu14"), img("centos7")],
            preferred: Some(img("ubuntu14")),
            unusable: Vec::new(),
        },
        layout: LayoutGroups {
            must_coexist: vec![
                names(&["namenode", "resourcemanager", "historyserver"]),
                names(&["hbase-master", "hive-metastore", "hive-server2", "mysql"]),
                names(&WORKERS),
                names(&["kibana", "prometheus"]),
            ],
            cant_coexist: vec![
                names(&["namenode", "datanode"]),
                names(&["hbase-master", "regionserver"]),
                names(&["zookeeper", "datanode"]),
                names(&["kafka-broker", "namenode"]),
                names(&["kafka-broker", "zookeeper"]),
                names(&["nginx", "haproxy"]),
                names(&["cassandra", "datanode"]),
                names(&["cassandra", "elasticsearch"]),
                names(&["ldap", "kerberos-kdc", "gateway"]),
            ],
        },
        service_constraints: constraints,
    }
}

const SIZES: [u32; 3] = [10, 100, 1000];

/// A deterministic xorshift step, so the random templates are the same every run.
fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// A random template: `services` services, each pair kept apart with probability
/// `density`%, two random must groups, random quantities and whitelists.
fn random_template(seed: &mut u64, services: usize, density: u64, size: u32) -> LayoutProblem {
    let names: Vec<ServiceName> = (0..services)
        .map(|index| ServiceName::parse(format!("s{index:02}")).expect("valid name"))
        .collect();
    let mut cant = Vec::new();
    for a in 0..services {
        for b in a + 1..services {
            if next(seed) % 100 < density {
                cant.push(vec![names[a].clone(), names[b].clone()]);
            }
        }
    }
    let mut must = Vec::new();
    for _ in 0..2 {
        let a = (next(seed) % services as u64) as usize;
        let b = (next(seed) % services as u64) as usize;
        if a != b {
            must.push(vec![names[a].clone(), names[b].clone()]);
        }
    }
    let hardware = ["medium", "large", "xlarge"];
    let mut constraints = BTreeMap::new();
    for name in &names {
        if next(seed).is_multiple_of(3) {
            continue;
        }
        let min = (next(seed) % 4) as u32;
        let max = next(seed)
            .is_multiple_of(2)
            .then(|| min.max(1) + (next(seed) % 5) as u32);
        let whitelist = if next(seed).is_multiple_of(5) {
            vec![HardwareTypeName::parse(hardware[(next(seed) % 3) as usize]).expect("valid")]
        } else {
            Vec::new()
        };
        constraints.insert(
            name.clone(),
            ServiceConstraint {
                min,
                max,
                hardware: whitelist,
                images: Vec::new(),
            },
        );
    }
    LayoutProblem {
        template: TemplateName::parse("random").expect("valid name"),
        size,
        size_bounds: SizeBounds::default(),
        services: names,
        hardware: TypeCandidates {
            candidates: hardware
                .iter()
                .map(|h| HardwareTypeName::parse(*h).expect("valid"))
                .collect(),
            preferred: Some(HardwareTypeName::parse("medium").expect("valid")),
            unusable: Vec::new(),
        },
        images: TypeCandidates::any_of(vec![ImageTypeName::parse("ubuntu14").expect("valid")]),
        layout: LayoutGroups {
            must_coexist: must,
            cant_coexist: cant,
        },
        service_constraints: constraints,
    }
}

/// Solve times over many random templates: (median ms, worst ms, failures, limit hits).
fn random_run(density: (u64, u64), sizes: &[u32], cases: usize) -> (f64, f64, usize, usize) {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut times = Vec::with_capacity(cases);
    let (mut failures, mut limits) = (0, 0);
    for _ in 0..cases {
        let services = 10 + (next(&mut seed) % 21) as usize;
        let density = density.0 + next(&mut seed) % (density.1 - density.0);
        let size = sizes[(next(&mut seed) % sizes.len() as u64) as usize];
        let problem = random_template(&mut seed, services, density, size);
        let start = Instant::now();
        let result = solve(&problem);
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        if let Err(err) = result {
            failures += 1;
            if err.to_string().contains("search steps") {
                limits += 1;
            }
        }
    }
    times.sort_by(f64::total_cmp);
    (
        times[times.len() / 2],
        times[times.len() - 1],
        failures,
        limits,
    )
}

fn bench_solve(c: &mut Criterion) {
    let mut group = c.benchmark_group("solve");
    for size in SIZES {
        let problem = template(size);
        group.bench_with_input(BenchmarkId::from_parameter(size), &problem, |b, problem| {
            b.iter(|| solve(black_box(problem)).expect("solvable"))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_solve);

fn main() {
    for size in SIZES {
        let problem = template(size);
        let layout = solve(&problem).expect("solvable");
        assert_eq!(layout.nodes.len(), size as usize);
        let runs = 20u32;
        let start = Instant::now();
        for _ in 0..runs {
            black_box(solve(black_box(&problem)).expect("solvable"));
        }
        let ms = start.elapsed().as_secs_f64() * 1000.0 / f64::from(runs);
        let distinct: std::collections::BTreeSet<_> = layout
            .nodes
            .iter()
            .map(|node| (&node.hardwaretype, &node.imagetype, &node.services))
            .collect();
        println!(
            "solve nodes={size} services=30 ms={ms:.3} layouts={}",
            distinct.len()
        );
    }
    for (label, density, sizes) in [
        ("sparse", (0, 25), &[10u32, 100, 1000][..]),
        ("dense", (20, 80), &[3u32, 5, 8, 10, 12, 15][..]),
    ] {
        let cases = 500;
        let (median, worst, failures, limits) = random_run(density, sizes, cases);
        println!(
            "solve random-{label} cases={cases} services=10..30 median_ms={median:.3} worst_ms={worst:.1} unsatisfiable={failures} search_limit={limits}"
        );
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
