//! The `docker` CLI as the tests' witness of what the `docker` provider left on this
//! machine's engine: a cluster's containers and networks, found by their
//! `corral.cluster` label, and a guard that removes them by that label when a test ends,
//! passing or failing.

use std::process::Command;

/// Runs `docker ARGS` and returns its stdout; a failing `docker` fails the test.
pub fn docker(args: &[&str]) -> String {
    let output = Command::new("docker")
        .args(args)
        .output()
        .unwrap_or_else(|error| panic!("docker {}: {error}", args.join(" ")));
    assert!(
        output.status.success(),
        "docker {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn label(cluster: &str) -> String {
    format!("label=corral.cluster={cluster}")
}

/// A container: its full id, name and state (`running`, `exited`, ...).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Container {
    pub id: String,
    pub name: String,
    pub state: String,
}

/// The cluster's containers, running or not (`docker ps -a`), sorted by name.
pub fn containers(cluster: &str) -> Vec<Container> {
    let listed = docker(&[
        "ps",
        "-a",
        "--no-trunc",
        "--filter",
        &label(cluster),
        "--format",
        "{{.ID}} {{.Names}} {{.State}}",
    ]);
    let mut containers: Vec<Container> = listed
        .lines()
        .map(|line| {
            let mut fields = line.split_whitespace();
            let mut next = || fields.next().unwrap_or_default().to_owned();
            Container {
                id: next(),
                name: next(),
                state: next(),
            }
        })
        .collect();
    containers.sort_by(|a, b| a.name.cmp(&b.name));
    containers
}

/// The names of the cluster's networks.
pub fn networks(cluster: &str) -> Vec<String> {
    docker(&[
        "network",
        "ls",
        "--filter",
        &label(cluster),
        "--format",
        "{{.Name}}",
    ])
    .lines()
    .map(str::to_owned)
    .collect()
}

/// The container's memory limit in bytes (0: none).
pub fn memory_limit(container: &str) -> i64 {
    let memory = docker(&["inspect", "--format", "{{.HostConfig.Memory}}", container]);
    memory
        .trim()
        .parse()
        .unwrap_or_else(|error| panic!("{container}: memory {memory:?}: {error}"))
}

/// The demo catalog's memory limit in bytes for `hardware` on the `docker` provider.
pub fn demo_memory_bytes(hardware: &str) -> i64 {
    let catalog: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../demo/catalog.json"))
            .unwrap(),
    )
    .unwrap();
    let hardware = catalog["hardwaretypes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|entity| entity["name"] == hardware)
        .unwrap_or_else(|| panic!("no hardware type {hardware} in demo/catalog.json"));
    hardware["providermap"]["docker"]["memory_mb"]
        .as_i64()
        .unwrap()
        * 1024
        * 1024
}

/// Removes the containers and networks labelled with its clusters when dropped, so a
/// failing test leaves nothing on the engine. Declare it before the server it watches:
/// locals drop in reverse order, so the server is gone before the clean-up runs.
#[derive(Default)]
pub struct Cleanup {
    clusters: Vec<String>,
}

impl Cleanup {
    pub fn watch(&mut self, cluster: &str) {
        self.clusters.push(cluster.to_owned());
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for cluster in &self.clusters {
            let Ok(listed) = Command::new("docker")
                .args(["ps", "-aq", "--filter", &label(cluster)])
                .output()
            else {
                continue;
            };
            let ids: Vec<String> = String::from_utf8_lossy(&listed.stdout)
                .split_whitespace()
                .map(str::to_owned)
                .collect();
            if !ids.is_empty() {
                let _ = Command::new("docker")
                    .args(["rm", "-f"])
                    .args(&ids)
                    .output();
            }
            let Ok(listed) = Command::new("docker")
                .args(["network", "ls", "-q", "--filter", &label(cluster)])
                .output()
            else {
                continue;
            };
            for id in String::from_utf8_lossy(&listed.stdout).split_whitespace() {
                let _ = Command::new("docker").args(["network", "rm", id]).output();
            }
        }
    }
}
