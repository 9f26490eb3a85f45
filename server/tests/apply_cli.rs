//! `corral apply` and `corral plan` against a real `corral serve` on a fresh data dir
//! (so with the demo catalog a first start loads) and real local nodes: create from
//! `examples/web-stack.yaml`, a second apply that does nothing, an amend that adds a
//! node the load balancer then uses, a delete by removal from the file, and invalid
//! files refused with their line before anything happens.

#![allow(clippy::unwrap_used)] // Tests fail loudly by design.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use engine::provider::LocalProvider;

#[path = "support/served.rs"]
mod served;

use served::{corral, text, Served, CORRAL};

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/web-stack.yaml");

/// The server with the demo catalog its first start loads.
fn start(data: &Path) -> Served {
    let server = served::serve(data, 4, &[]);
    assert!(
        server
            .announced
            .iter()
            .any(|line| line.starts_with("Loaded the demo catalog")),
        "a first start loads the demo catalog"
    );
    server
}

fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "stdout: {}\nstderr: {}",
        text(&output.stdout),
        text(&output.stderr)
    );
    text(&output.stdout)
}

fn show(config: &Path, name: &str) -> serde_json::Value {
    let output = corral(config, &["cluster", "show", name, "--json"], "");
    serde_json::from_str(&ok(&output)).unwrap()
}

/// GETs the page a few times and returns the app backends that answered.
async fn backends(url: &str, tries: usize) -> BTreeSet<String> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let mut seen = BTreeSet::new();
    for _ in 0..tries {
        let response = client.get(url).send().await.unwrap();
        assert_eq!(response.status(), 200);
        seen.insert(
            response.headers()["x-corral-backend"]
                .to_str()
                .unwrap()
                .to_owned(),
        );
        assert!(response.text().await.unwrap().contains("visits: "));
    }
    seen
}

#[tokio::test(flavor = "multi_thread")]
async fn apply_creates_does_nothing_twice_amends_and_deletes() {
    let data = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let server = start(data.path());
    let cfg = config.path();
    ok(&corral(
        cfg,
        &[
            "login",
            "--server",
            &server.url,
            "--username",
            "admin",
            "--password-stdin",
        ],
        &format!("{}\n", server.password),
    ));

    let plan = ok(&corral(cfg, &["plan", EXAMPLE], ""));
    assert!(
        plan.contains("1 to create, 0 to amend, 0 to delete")
            && plan.contains("+ create shop: template web-stack, 3 node(s)"),
        "{plan}"
    );

    // Declining changes nothing.
    let declined = corral(cfg, &["apply", EXAMPLE], "n\n");
    assert!(!declined.status.success());
    assert!(text(&declined.stdout).contains("nothing changed"));
    let listed = ok(&corral(cfg, &["cluster", "list", "--json"], ""));
    assert!(listed.contains("\"total\": 0"), "{listed}");

    let started = Instant::now();
    let applied = ok(&corral(cfg, &["apply", EXAMPLE], "y\n"));
    eprintln!("web-stack of 3 nodes applied in {:?}", started.elapsed());
    assert!(applied.contains("environment demo applied"), "{applied}");
    let shop = show(cfg, "shop");
    assert_eq!(shop["state"], "active");
    let site = shop["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|link| link["label"] == "web site")
        .unwrap()["url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(applied.contains(&format!("web site: {site}")), "{applied}");
    assert_eq!(backends(&site, 2).await.len(), 1);

    let again = ok(&corral(cfg, &["apply", EXAMPLE, "--yes"], ""));
    assert!(
        again.contains("0 to create, 0 to amend, 0 to delete, 1 unchanged")
            && again.contains("nothing to do"),
        "{again}"
    );
    assert_eq!(show(cfg, "shop")["jobs"].as_array().unwrap().len(), 1);

    // Amend: one more node is one more app behind the same load balancer, and new
    // config reaches the services (a reconfigure with restart).
    let grown = data.path().join("grown.yaml");
    let text = std::fs::read_to_string(EXAMPLE).unwrap();
    let text = text.replace("size: 3 ", "size: 4 ") + "    config:\n      app: {greeting: hello}\n";
    std::fs::write(&grown, text).unwrap();
    let grown = grown.to_str().unwrap();
    let plan = ok(&corral(cfg, &["plan", grown], ""));
    assert!(
        plan.contains("~ amend shop: add 1 node(s) (3 -> 4); reconfigure app"),
        "{plan}"
    );
    ok(&corral(cfg, &["apply", grown, "--yes"], ""));
    let shop = show(cfg, "shop");
    assert_eq!(shop["size"], 4);
    assert_eq!(shop["config"]["app"]["greeting"], "hello");
    let again = ok(&corral(cfg, &["plan", grown], ""));
    assert!(again.contains("1 unchanged"), "{again}");
    assert_eq!(backends(&site, 4).await.len(), 2, "the lb uses the new app");

    // Delete by leaving the cluster out.
    let empty = data.path().join("empty.yaml");
    std::fs::write(&empty, "environment: demo\nclusters: []\n").unwrap();
    let deleted = ok(&corral(
        cfg,
        &["apply", empty.to_str().unwrap(), "--yes"],
        "",
    ));
    assert!(deleted.contains("- delete shop"), "{deleted}");
    let listed = ok(&corral(cfg, &["cluster", "list", "--json"], ""));
    assert!(listed.contains("\"total\": 0"), "{listed}");
    assert_eq!(
        LocalProvider::processes_under(&server.nodes),
        Vec::<i32>::new(),
        "no process is left"
    );
}

#[test]
fn invalid_files_are_refused_with_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config");
    let cases = [
        (
            "environment: demo\nclusters:\n  - name: shop\n    template: web-stack\n    sise: 3\n",
            "bad.yaml:5:5: clusters[0]: unknown field `sise`",
        ),
        (
            "environment: demo\nclusters:\n  - name: shop\n    template: web-stack\n    size: three\n",
            "bad.yaml:5:11: ",
        ),
        (
            "environment: demo\nclusters:\n  - name: shop\n    template: web-stack\n    size: 0\n",
            "bad.yaml:3:5: clusters[0]: size must be at least 1",
        ),
        (
            "environment: demo\nclusters:\n  - {name: a, template: t, size: 1}\n  - name: a\n    template: t\n    size: 1\n",
            "bad.yaml:4: cluster a is listed twice",
        ),
        ("environment: [demo\n", "bad.yaml:"),
    ];
    for (yaml, expected) in cases {
        let path = dir.path().join("bad.yaml");
        std::fs::write(&path, yaml).unwrap();
        for command in ["plan", "apply"] {
            // No server and no login: the file is checked first.
            let output = Command::new(CORRAL)
                .current_dir(dir.path())
                .args(
                    [command, "bad.yaml", "--yes"]
                        .split_at(if command == "plan" { 2 } else { 3 })
                        .0,
                )
                .env("CORRAL_CONFIG_DIR", &config)
                .output()
                .unwrap();
            assert!(!output.status.success());
            let stderr = text(&output.stderr);
            assert!(stderr.contains(expected), "{yaml}\n{stderr}");
            assert!(!stderr.contains("corral login"), "{stderr}");
        }
    }
}
