//! The offline `corral catalog` commands, run as the real binary on Coopr's
//! published catalog (testdata/coopr-catalog): exit codes, output shapes, and the
//! problems named for the catalog's three known-defective templates.

use std::collections::{BTreeSet, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::coopr_catalog::{copy_catalog, path_str, BROKEN, CATALOG};
use crate::support::test_server::{corral_alone, CORRAL};

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

fn code(output: &Output) -> i32 {
    output.status.code().unwrap()
}

fn json_count(dir: &Path, kind: &str) -> usize {
    fs::read_dir(dir.join(kind))
        .map(|entries| entries.count())
        .unwrap_or(0)
}

#[test]
fn validate_names_the_problems_of_the_three_defective_templates() {
    let output = corral_alone(&["catalog", "validate", CATALOG]);
    assert_eq!(code(&output), 1, "{}", stderr(&output));
    let out = stdout(&output);
    for line in [
        "error: clustertemplates.cdap-singlenode.compatibility.services[2]: unknown service \"hadoop-hdfs-secondarynamenode\"",
        "error: clustertemplates.coopr-standalone-docker.compatibility.services[0]: unknown service \"coopr-standalone\"",
        "error: clustertemplates.coopr-standalone-docker.defaults.services[0]: unknown service \"coopr-standalone\"",
        "warning: clustertemplates.coopr-standalone-docker.links[0].url: macro names service \"coopr\", which does not exist",
        "error: clustertemplates.docker-base.compatibility.imagetypes[2]: unknown image type \"ubuntu16\"",
        "error: clustertemplates.docker-base.defaults.imagetype: default image type \"centos6\" is not in compatibility.imagetypes",
        "clustertemplates: 15, 3 with errors, 3 warnings",
    ] {
        assert!(out.lines().any(|l| l == line), "missing {line:?} in:\n{out}");
    }
    let error_templates: BTreeSet<&str> = out
        .lines()
        .filter_map(|line| line.strip_prefix("error: clustertemplates."))
        .map(|rest| rest.split('.').next().unwrap())
        .collect();
    assert_eq!(error_templates, BTreeSet::from(BROKEN));
    assert!(stderr(&output).contains("is not a valid catalog: 5 errors"));
}

#[test]
fn validate_of_the_catalog_without_its_defective_templates_passes_with_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    copy_catalog(dir.path(), &BROKEN);
    let output = corral_alone(&["catalog", "validate", path_str(dir.path())]);
    assert_eq!(code(&output), 0, "{}{}", stdout(&output), stderr(&output));
    let out = stdout(&output);
    let services = json_count(dir.path(), "services");
    let providers = json_count(dir.path(), "providers");
    // The published templates carry two warnings (a duplicate, a 3-way cantcoexist).
    let template_warnings = out
        .lines()
        .filter(|l| l.starts_with("warning: clustertemplates."))
        .count();
    assert_eq!(template_warnings, 2, "{out}");
    let expected = [
        format!("providers: {providers} ok, {providers} warnings"),
        format!(
            "hardwaretypes: {} ok",
            json_count(dir.path(), "hardwaretypes")
        ),
        format!("imagetypes: {} ok", json_count(dir.path(), "imagetypes")),
        // Every published service runs chef-solo or docker: one warning each.
        format!("services: {services} ok, {services} warnings"),
        format!("clustertemplates: 12 ok, {template_warnings} warnings"),
    ];
    let summary: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with("warning: "))
        .collect();
    assert_eq!(summary, expected, "{out}");
    // Warnings (providers Corral cannot drive) are listed, one per provider.
    let warnings = out
        .lines()
        .filter(|l| l.starts_with("warning: providers."))
        .count();
    assert_eq!(warnings, providers);
    assert!(!out.contains("error"), "{out}");
}

#[test]
fn convert_round_trip_validates_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let corral_dir = dir.path().join("corral");
    let coopr_dir = dir.path().join("coopr");
    let to_corral = corral_alone(&[
        "catalog",
        "convert",
        CATALOG,
        "--to",
        "corral",
        "--out",
        path_str(&corral_dir),
    ]);
    assert_eq!(code(&to_corral), 0, "{}", stderr(&to_corral));
    let back = corral_alone(&[
        "catalog",
        "convert",
        path_str(&corral_dir),
        "--to",
        "coopr",
        "--out",
        path_str(&coopr_dir),
    ]);
    assert_eq!(code(&back), 0, "{}", stderr(&back));
    for kind in [
        "providers",
        "hardwaretypes",
        "imagetypes",
        "services",
        "clustertemplates",
    ] {
        let original = json_count(Path::new(CATALOG), kind);
        assert_eq!(json_count(&corral_dir, kind), original, "{kind}");
        assert_eq!(json_count(&coopr_dir, kind), original, "{kind}");
    }
    // Corral's form writes leases as text, Coopr's as milliseconds.
    let lease = |dir: &Path| -> Value {
        let text = fs::read_to_string(dir.join("clustertemplates/lamp.json")).unwrap();
        serde_json::from_str::<Value>(&text).unwrap()["administration"]["leaseduration"].clone()
    };
    let corral_lease = lease(&corral_dir);
    let coopr_lease = lease(&coopr_dir);
    assert!(corral_lease["initial"].is_string(), "{corral_lease}");
    assert!(coopr_lease["initial"].is_number(), "{coopr_lease}");

    let report = |path: &Path| {
        let output = corral_alone(&["catalog", "validate", path_str(path)]);
        (code(&output), stdout(&output))
    };
    let original = report(Path::new(CATALOG));
    assert_eq!(original.0, 1);
    assert_eq!(report(&corral_dir), original);
    assert_eq!(report(&coopr_dir), original);
}

#[test]
fn convert_keeps_a_bundle_a_bundle() {
    let dir = tempfile::tempdir().unwrap();
    let bundle_path = dir.path().join("bundle.json");
    fs::write(&bundle_path, bundle_of_catalog().to_string()).unwrap();
    let out = dir.path().join("out");
    let output = corral_alone(&[
        "catalog",
        "convert",
        path_str(&bundle_path),
        "--to",
        "corral",
        "--out",
        path_str(&out),
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let entries: Vec<_> = fs::read_dir(&out).unwrap().collect();
    assert_eq!(entries.len(), 1);
    let written: Value =
        serde_json::from_str(&fs::read_to_string(out.join("bundle.json")).unwrap()).unwrap();
    assert_eq!(
        written["services"].as_array().unwrap().len(),
        json_count(Path::new(CATALOG), "services")
    );
}

/// The catalog as one bundle: `{"providers": [...], ...}`.
fn bundle_of_catalog() -> Value {
    let mut bundle = serde_json::Map::new();
    for kind in [
        "providers",
        "hardwaretypes",
        "imagetypes",
        "services",
        "clustertemplates",
    ] {
        let mut paths: Vec<PathBuf> = fs::read_dir(Path::new(CATALOG).join(kind))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        paths.sort();
        let entities: Vec<Value> = paths
            .iter()
            .map(|path| serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap())
            .collect();
        bundle.insert(kind.to_owned(), Value::Array(entities));
    }
    Value::Object(bundle)
}

#[test]
fn validate_reads_a_bundle_the_same_as_the_folders() {
    let dir = tempfile::tempdir().unwrap();
    let bundle_path = dir.path().join("catalog.json");
    fs::write(&bundle_path, bundle_of_catalog().to_string()).unwrap();
    let from_bundle = corral_alone(&["catalog", "validate", path_str(&bundle_path)]);
    let from_folders = corral_alone(&["catalog", "validate", CATALOG]);
    assert_eq!(code(&from_bundle), 1);
    let lines = |output: &Output| -> BTreeSet<String> {
        stdout(output).lines().map(str::to_owned).collect()
    };
    assert_eq!(lines(&from_bundle), lines(&from_folders));
}

#[test]
fn validate_reads_a_single_entity_file() {
    let provider = format!("{CATALOG}/providers/joyent.json");
    let output = corral_alone(&["catalog", "validate", &provider]);
    assert_eq!(code(&output), 0, "{}{}", stdout(&output), stderr(&output));
    assert_eq!(
        stdout(&output).lines().last(),
        Some("providers: 1 ok, 1 warning")
    );
    // A lone entity is checked as a catalog of one: its references must resolve.
    let service = format!("{CATALOG}/services/hadoop-hdfs-namenode.json");
    let output = corral_alone(&["catalog", "validate", &service]);
    assert_eq!(code(&output), 1);
    let out = stdout(&output);
    assert!(out.contains("unknown service or alias \"base\""), "{out}");
    // Its chef-solo actions are a warning: Corral does not run that automator.
    assert!(out.contains("automator \"chef-solo\""), "{out}");
    assert_eq!(
        out.lines().last(),
        Some("services: 1, 1 with errors, 1 warning")
    );
    // Outside a kind folder the kind comes from the entity's own keys.
    let dir = tempfile::tempdir().unwrap();
    let loose = dir.path().join("loose.json");
    fs::copy(
        format!("{CATALOG}/hardwaretypes/standard-large.json"),
        &loose,
    )
    .unwrap();
    let output = corral_alone(&["catalog", "validate", path_str(&loose)]);
    let out = stdout(&output);
    assert!(
        out.lines().last().unwrap().starts_with("hardwaretypes: 1"),
        "{out}{}",
        stderr(&output)
    );
}

fn solve(size: u32) -> Output {
    corral_alone(&[
        "catalog",
        "solve",
        CATALOG,
        "--template",
        "hadoop-distributed",
        "--size",
        &size.to_string(),
    ])
}

#[test]
fn solve_lays_out_hadoop_distributed_within_its_constraints() {
    for size in [3_u32, 4, 7, 25] {
        let output = solve(size);
        assert_eq!(code(&output), 0, "size {size}: {}", stderr(&output));
        let layout: Value = serde_json::from_str(&stdout(&output)).unwrap();
        assert_eq!(layout["template"], "hadoop-distributed");
        assert_eq!(layout["size"], size);
        let nodes = layout["nodes"].as_array().unwrap();
        assert_eq!(nodes.len(), size as usize);
        let services_of = |node: &Value| -> HashSet<String> {
            node["services"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_owned())
                .collect()
        };
        let on = |service: &str| {
            nodes
                .iter()
                .filter(|n| services_of(n).contains(service))
                .count()
        };
        // quantities: exactly one namenode, resourcemanager, hbase master, zookeeper.
        for single in [
            "hadoop-hdfs-namenode",
            "hadoop-yarn-resourcemanager",
            "hbase-master",
            "zookeeper-server",
        ] {
            assert_eq!(on(single), 1, "{single} at size {size}");
        }
        assert!(on("hadoop-hdfs-datanode") >= 2);
        for node in nodes {
            let services = services_of(node);
            // cantcoexist
            assert!(
                !(services.contains("hadoop-hdfs-namenode")
                    && services.contains("hadoop-hdfs-datanode"))
            );
            assert!(
                !(services.contains("hbase-master") && services.contains("hbase-regionserver"))
            );
            // mustcoexist
            let workers = [
                "hadoop-hdfs-datanode",
                "hadoop-yarn-nodemanager",
                "hbase-regionserver",
            ];
            let present = workers.iter().filter(|s| services.contains(**s)).count();
            assert!(present == 0 || present == workers.len(), "{services:?}");
            assert!(services.contains("base"));
            // defaults are the preferred types.
            assert_eq!(node["hardwaretype"], "standard-large");
            assert_eq!(node["imagetype"], "ubuntu12");
        }
    }
}

#[test]
fn solve_takes_a_service_list() {
    let output = corral_alone(&[
        "catalog",
        "solve",
        CATALOG,
        "--template",
        "hadoop-distributed",
        "--size",
        "3",
        "--services",
        "base,hadoop-hdfs-namenode,hadoop-hdfs-datanode",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let layout: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let all: BTreeSet<&str> = layout["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|n| {
            n["services"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap())
        })
        .collect();
    assert_eq!(
        all,
        BTreeSet::from(["base", "hadoop-hdfs-datanode", "hadoop-hdfs-namenode"])
    );
}

#[test]
fn unsatisfiable_size_names_the_constraint_and_the_nearest_size() {
    let output = solve(2);
    assert_eq!(code(&output), 1);
    assert!(stdout(&output).is_empty());
    let err = stderr(&output);
    assert!(
        err.contains("size 2 is outside the template's bounds"),
        "{err}"
    );
    assert!(err.contains("nearest size that works: 3"), "{err}");

    // A service the template does not allow.
    let output = corral_alone(&[
        "catalog",
        "solve",
        CATALOG,
        "--template",
        "hadoop-distributed",
        "--size",
        "3",
        "--services",
        "base,nginx",
    ]);
    assert_eq!(code(&output), 1);
    assert!(stderr(&output).contains("nginx"), "{}", stderr(&output));
}

#[test]
fn plan_prints_a_dag_whose_after_ids_all_exist() {
    let output = corral_alone(&[
        "catalog",
        "plan",
        CATALOG,
        "--template",
        "hadoop-distributed",
        "--size",
        "4",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let plan: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let tasks = plan["tasks"].as_array().unwrap();
    let ids: HashSet<u64> = tasks.iter().map(|t| t["id"].as_u64().unwrap()).collect();
    assert_eq!(ids.len(), tasks.len());
    for task in tasks {
        for after in task["after"].as_array().unwrap() {
            assert!(ids.contains(&after.as_u64().unwrap()), "{task}");
        }
    }
    let nodes: BTreeSet<u64> = tasks.iter().map(|t| t["node"].as_u64().unwrap()).collect();
    assert_eq!(nodes.len(), 4);
    for node in &nodes {
        let create = tasks
            .iter()
            .find(|t| t["node"].as_u64() == Some(*node) && t["action"] == "create")
            .unwrap();
        assert!(create["service"].is_null());
    }
    let namenode_start = tasks
        .iter()
        .filter(|t| t["service"] == "hadoop-hdfs-namenode" && t["action"] == "start")
        .count();
    assert_eq!(namenode_start, 1);
}

#[test]
fn missing_path_and_malformed_json_give_one_line_errors_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let output = corral_alone(&["catalog", "validate", path_str(&missing)]);
    assert_eq!(code(&output), 1);
    let err = stderr(&output);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(path_str(&missing)), "{err}");

    let bad = dir.path().join("bad.json");
    fs::write(&bad, "{\"name\": \"x\",").unwrap();
    let output = corral_alone(&["catalog", "validate", path_str(&bad)]);
    assert_eq!(code(&output), 1);
    let err = stderr(&output);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(path_str(&bad)) && err.contains("not valid JSON"),
        "{err}"
    );

    // Inside a folder-per-kind directory the file is named too.
    let catalog = dir.path().join("catalog");
    copy_catalog(&catalog, &[]);
    let broken = catalog.join("services/broken.json");
    fs::write(&broken, "[1, 2").unwrap();
    let output = corral_alone(&[
        "catalog",
        "solve",
        path_str(&catalog),
        "--template",
        "lamp",
        "--size",
        "1",
    ]);
    assert_eq!(code(&output), 1);
    let err = stderr(&output);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(path_str(&broken)), "{err}");
}

#[test]
fn field_errors_name_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let services = dir.path().join("services");
    fs::create_dir_all(&services).unwrap();
    let file = services.join("web.json");
    fs::write(
        &file,
        r#"{"name": "web", "dependencies": {"provides": [7]}}"#,
    )
    .unwrap();
    let output = corral_alone(&["catalog", "validate", path_str(dir.path())]);
    assert_eq!(code(&output), 1);
    let err = stderr(&output);
    assert!(err.contains(path_str(&file)), "{err}");
    assert!(
        err.contains("services.web.dependencies.provides[0]"),
        "{err}"
    );
}

#[test]
fn usage_errors_exit_2() {
    let output = corral_alone(&["catalog", "solve", CATALOG, "--template", "lamp"]);
    assert_eq!(code(&output), 2);
    let output = corral_alone(&[
        "catalog", "convert", CATALOG, "--to", "yaml", "--out", "/tmp/x",
    ]);
    assert_eq!(code(&output), 2);
}

#[test]
fn unknown_template_exits_1_naming_it() {
    let output = corral_alone(&[
        "catalog",
        "plan",
        CATALOG,
        "--template",
        "nosuch",
        "--size",
        "3",
    ]);
    assert_eq!(code(&output), 1);
    assert!(
        stderr(&output).contains("unknown cluster template \"nosuch\""),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_closed_pipe_ends_the_output_without_a_panic() {
    use std::process::Stdio;
    // Large enough to overflow the pipe buffer, so the write must meet the closed end.
    let mut child = Command::new(CORRAL)
        .args([
            "catalog",
            "plan",
            CATALOG,
            "--template",
            "hadoop-distributed",
            "--size",
            "300",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let err = stderr(&output);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(code(&output), 0, "{err}");
}
