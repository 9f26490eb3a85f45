//! `corral apply` and `corral plan` against a real `corral serve` on a fresh data dir
//! (so with the demo catalog a first start loads) and real local nodes: create from
//! `examples/web-stack.yaml`, a second apply that does nothing, an amend that adds a
//! node the load balancer then uses, a delete by removal from the file, and invalid
//! files refused with their line before anything happens. The same on the demo's
//! `docker` provider (`examples/web-stack-docker.yaml`), checked with the `docker` CLI.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use engine::provider::LocalProvider;

use crate::support::docker;
use crate::support::test_server::{self, corral, login_as_admin, ok, text, Served, CORRAL};

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/web-stack.yaml");
const EXAMPLE_DOCKER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../examples/web-stack-docker.yaml"
);

/// The server with the demo catalog its first start loads.
fn start(data: &Path) -> Served {
    let server = test_server::serve(data, 4, &[]);
    assert!(
        server
            .announced
            .iter()
            .any(|line| line.starts_with("Loaded the demo catalog")),
        "a first start loads the demo catalog"
    );
    server
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
    login_as_admin(cfg, &server);

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

/// Every link of the cluster answers 200.
async fn links_answer(cluster: &serde_json::Value) {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let links = cluster["links"].as_array().unwrap();
    assert!(!links.is_empty(), "{cluster:#}");
    for link in links {
        let url = link["url"].as_str().unwrap();
        let response = client
            .get(url)
            .send()
            .await
            .unwrap_or_else(|error| panic!("{url}: {error}"));
        assert_eq!(response.status(), 200, "{url}");
    }
}

fn node_ids(cluster: &serde_json::Value) -> BTreeSet<String> {
    cluster["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|node| node["id"].as_str().unwrap().to_owned())
        .collect()
}

fn services_of(cluster: &serde_json::Value) -> BTreeSet<String> {
    cluster["layout"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|node| node["services"].as_array().unwrap().iter())
        .map(|service| service.as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn apply_shrinks_clusters_and_prunes_services_only_when_asked() {
    let data = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let server = start(data.path());
    let cfg = config.path();
    login_as_admin(cfg, &server);
    let file = |size: u32, services: &str| {
        let path = data
            .path()
            .join(format!("shop-{size}-{}.yaml", services.len()));
        std::fs::write(
            &path,
            format!(
                "environment: demo\nclusters:\n  - name: shop\n    template: web-stack\n    \
                 size: {size}\n    services: [{services}]\n"
            ),
        )
        .unwrap();
        path.to_str().unwrap().to_owned()
    };
    let five = file(5, "base, kv, app, lb, memcached");
    ok(&corral(cfg, &["apply", &five, "--yes"], ""));
    let shop = show(cfg, "shop");
    assert_eq!(shop["size"], 5);
    let site = shop["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|link| link["label"] == "web site")
        .unwrap()["url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        backends(&site, 12).await.len(),
        3,
        "three apps behind the lb"
    );
    let before = node_ids(&shop);

    // Back to 3 nodes, memcached no longer listed: the nodes go, memcached stays (and
    // the plan says so) until pruning is asked for.
    let three = file(3, "base, kv, app, lb");
    let plan = ok(&corral(cfg, &["plan", &three], ""));
    assert!(
        plan.contains("~ amend shop: remove 2 node(s) (5 -> 3)")
            && plan.contains("runs memcached, which the file does not list: kept"),
        "{plan}"
    );
    let started = Instant::now();
    ok(&corral(cfg, &["apply", &three, "--yes"], ""));
    eprintln!("web-stack 5 -> 3 nodes applied in {:?}", started.elapsed());
    let shop = show(cfg, "shop");
    assert_eq!(shop["size"], 3);
    assert_eq!(shop["state"], "active");
    let after = node_ids(&shop);
    let removed: Vec<&String> = before.difference(&after).collect();
    assert_eq!(removed.len(), 2, "{before:?} -> {after:?}");
    for id in &removed {
        assert_eq!(
            LocalProvider::processes_of_node(&server.nodes, id),
            Vec::<i32>::new(),
            "node {id} was removed: none of its processes is left"
        );
    }
    links_answer(&shop).await;
    // The lb was reconfigured: every request goes to the one app left.
    assert_eq!(backends(&site, 12).await.len(), 1);
    assert!(services_of(&shop).contains("memcached"));

    // Pruning removes memcached; removing kv is refused naming the app that needs it.
    let pruned = ok(&corral(
        cfg,
        &["apply", &three, "--yes", "--prune-services"],
        "",
    ));
    assert!(pruned.contains("remove services memcached"), "{pruned}");
    let shop = show(cfg, "shop");
    assert!(!services_of(&shop).contains("memcached"), "{shop:#}");
    links_answer(&shop).await;
    let refused = corral(
        cfg,
        &[
            "cluster",
            "change",
            "shop",
            "remove-services",
            "--services",
            "kv",
        ],
        "",
    );
    assert!(!refused.status.success());
    let message = text(&refused.stderr);
    assert!(
        message.contains("cannot remove kv: app needs kv to run"),
        "{message}"
    );
    let too_small = corral(
        cfg,
        &["cluster", "change", "shop", "remove-nodes", "--count", "1"],
        "",
    );
    assert!(
        text(&too_small.stderr).contains("size 2 is outside the template's bounds"),
        "{}",
        text(&too_small.stderr)
    );
    // create, remove nodes, remove services: the refusals stored no job.
    assert_eq!(show(cfg, "shop")["jobs"].as_array().unwrap().len(), 3);

    let empty = data.path().join("empty.yaml");
    std::fs::write(&empty, "environment: demo\nclusters: []\n").unwrap();
    ok(&corral(
        cfg,
        &["apply", empty.to_str().unwrap(), "--yes"],
        "",
    ));
    assert_eq!(
        LocalProvider::processes_under(&server.nodes),
        Vec::<i32>::new()
    );

    // The deleted cluster stays readable by its id, with every job it ran; its name is
    // free again, and it cannot change.
    let id = shop["id"].as_str().unwrap();
    let deleted = show(cfg, id);
    assert_eq!(deleted["state"], "deleted");
    let operations: Vec<&str> = deleted["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|job| job["operation"].as_str().unwrap())
        .collect();
    assert_eq!(
        operations,
        // The change requests' words (jobs showed "remove services" before).
        ["delete", "remove-services", "remove-nodes", "create"]
    );
    let by_name = corral(cfg, &["cluster", "show", "shop"], "");
    assert!(
        text(&by_name.stderr).contains("not found"),
        "{}",
        text(&by_name.stderr)
    );
    let change = corral(cfg, &["cluster", "change", id, "restart"], "");
    assert!(
        text(&change.stderr).contains("is deleted: its page and jobs stay readable"),
        "{}",
        text(&change.stderr)
    );
}

/// The address Docker gave the container on its cluster's network.
fn container_address(container: &str) -> String {
    docker::docker(&[
        "inspect",
        "--format",
        "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}",
        container,
    ])
    .trim()
    .to_owned()
}

/// `corral apply examples/web-stack-docker.yaml` on the demo's `docker` provider: three
/// running containers labelled with the cluster's id, each with the demo hardware
/// type's memory limit, whose links answer at the addresses Docker gave them; removing
/// the cluster from the file and applying again leaves no container and no network.
#[tokio::test(flavor = "multi_thread")]
async fn apply_on_docker_brings_up_containers_and_removal_leaves_none() {
    // Before the server: it is dropped after it, when the server no longer runs.
    let mut cleanup = docker::Cleanup::default();
    let data = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let server = start(data.path());
    let cfg = config.path();
    login_as_admin(cfg, &server);

    let plan = ok(&corral(cfg, &["plan", EXAMPLE_DOCKER], ""));
    assert!(
        plan.contains("+ create shop-docker: template web-stack, 3 node(s) on docker"),
        "{plan}"
    );
    let started = Instant::now();
    let applied = corral(cfg, &["apply", EXAMPLE_DOCKER, "--yes"], "");
    let applied_in = started.elapsed();
    // Whatever the apply did, its containers are removed at the end.
    let listed = ok(&corral(cfg, &["cluster", "list", "--json"], ""));
    let listed: serde_json::Value = serde_json::from_str(&listed).unwrap();
    let ids: Vec<String> = listed["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|item| item["id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    for id in &ids {
        cleanup.watch(id);
    }
    let applied = ok(&applied);
    assert!(
        applied.contains("environment demo-docker applied"),
        "{applied}"
    );
    let shop = show(cfg, "shop-docker");
    assert_eq!(shop["state"], "active", "{shop:#}");
    assert_eq!(shop["provider"], "docker", "{shop:#}");
    let id = shop["id"].as_str().unwrap().to_owned();
    assert!(ids.contains(&id), "cluster list {listed:#} lacks {id}");

    // Three running containers, one per node of the layout, each limited as the demo
    // catalog says for its hardware type on docker.
    let containers = docker::containers(&id);
    let nodes = shop["layout"]["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 3, "{shop:#}");
    let mut expected: Vec<String> = nodes
        .iter()
        .map(|node| format!("corral-node-{id}-{}", node["number"]))
        .collect();
    expected.sort();
    let names: Vec<String> = containers.iter().map(|c| c.name.clone()).collect();
    assert_eq!(
        names, expected,
        "docker ps --filter label=corral.cluster={id}"
    );
    let mut addresses = BTreeSet::new();
    for node in nodes {
        let name = format!("corral-node-{id}-{}", node["number"]);
        let container = containers.iter().find(|c| c.name == name).unwrap();
        assert_eq!(container.state, "running", "{container:?}");
        let hardware = node["hardwaretype"].as_str().unwrap();
        assert_eq!(
            docker::memory_limit(&container.id),
            docker::demo_memory_bytes(hardware),
            "{name} ({hardware})"
        );
        addresses.insert(container_address(&container.id));
    }
    assert_eq!(
        docker::memory_limit(&containers[0].id),
        512 * 1024 * 1024,
        "web-stack nodes are `small`: 512 MiB on docker"
    );
    assert_eq!(docker::networks(&id).len(), 1, "one network per cluster");

    // Every link answers, at an address of one of the cluster's containers; the site
    // is served by the lb from the app, with visits counted in kv.
    let links = shop["links"].as_array().unwrap();
    assert!(!links.is_empty(), "{shop:#}");
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    for link in links {
        let url = link["url"].as_str().unwrap();
        let host = reqwest::Url::parse(url)
            .unwrap()
            .host_str()
            .unwrap()
            .to_owned();
        assert!(
            addresses.contains(&host),
            "{url} is not at a container's address {addresses:?}"
        );
        let response = client
            .get(url)
            .send()
            .await
            .unwrap_or_else(|error| panic!("{url}: {error}"));
        assert_eq!(response.status(), 200, "{url}");
        assert!(
            applied.contains(&format!("{}: {url}", link["label"].as_str().unwrap())),
            "{applied}"
        );
    }
    let site = links
        .iter()
        .find(|link| link["label"] == "web site")
        .unwrap()["url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(backends(&site, 2).await.len(), 1);
    eprintln!(
        "web-stack of 3 on docker applied in {applied_in:?}, answering {:?} after the apply started",
        started.elapsed()
    );

    // Delete by leaving the cluster out of the file.
    let empty = data.path().join("empty-docker.yaml");
    std::fs::write(&empty, "environment: demo-docker\nclusters: []\n").unwrap();
    let started = Instant::now();
    let deleted = ok(&corral(
        cfg,
        &["apply", empty.to_str().unwrap(), "--yes"],
        "",
    ));
    eprintln!("deleted by apply in {:?}", started.elapsed());
    assert!(deleted.contains("- delete shop-docker"), "{deleted}");
    let listed = ok(&corral(cfg, &["cluster", "list", "--json"], ""));
    assert!(listed.contains("\"total\": 0"), "{listed}");
    assert_eq!(
        docker::containers(&id),
        Vec::new(),
        "docker ps -a --filter label=corral.cluster={id}"
    );
    assert_eq!(
        docker::networks(&id),
        Vec::<String>::new(),
        "docker network ls --filter label=corral.cluster={id}"
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

/// The job id `corral cluster change` printed ("...; job ID").
fn submitted_job(output: &str) -> String {
    output
        .trim()
        .rsplit("job ")
        .next()
        .unwrap()
        .trim()
        .to_owned()
}

/// Fetches `url` every 100 ms until `stop` turns true; returns how many fetches failed
/// (with the first few failures) and the releases that answered.
async fn fetch_every_100ms(
    url: String,
    stop: tokio::sync::watch::Receiver<bool>,
) -> (usize, Vec<String>, BTreeSet<String>) {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let mut failed = 0;
    let mut failures = Vec::new();
    let mut releases = BTreeSet::new();
    while !*stop.borrow() {
        match client.get(&url).send().await {
            Ok(response) if response.status() == 200 => {
                releases.insert(release_of(&response.text().await.unwrap_or_default()));
            }
            Ok(response) => {
                failed += 1;
                failures.push(format!(
                    "{}: {}",
                    response.status(),
                    response.text().await.unwrap_or_default()
                ));
            }
            Err(error) => {
                failed += 1;
                failures.push(error.to_string());
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    failures.truncate(5);
    (failed, failures, releases)
}

/// The release a demo app's page says it serves ("release 2, served by node ...").
fn release_of(page: &str) -> String {
    page.split("release ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .unwrap_or("none")
        .to_owned()
}

/// The releases the web site's app nodes serve, over enough fetches to meet each.
async fn releases_served(url: &str) -> BTreeSet<(String, String)> {
    let client = reqwest::Client::new();
    let mut seen = BTreeSet::new();
    for _ in 0..8 {
        let response = client.get(url).send().await.unwrap();
        let status = response.status();
        let backend = response
            .headers()
            .get("x-corral-backend")
            .map(|value| value.to_str().unwrap().to_owned());
        let page = response.text().await.unwrap();
        // Say who answered what: a 503 from an app whose key-value call timed out reads
        // differently from the balancer's 502 with no backend left.
        assert_eq!(status, 200, "{url} (backend {backend:?}) answered: {page}");
        seen.insert((backend.unwrap(), release_of(&page)));
    }
    seen
}

/// Creates the web-stack `shop` of 4 local nodes and waits for it: its view and the
/// address of its web site.
fn web_stack_of_four(cfg: &Path) -> (serde_json::Value, String) {
    ok(&corral(
        cfg,
        &[
            "cluster",
            "create",
            "shop",
            "--template",
            "web-stack",
            "--size",
            "4",
            "--wait",
        ],
        "",
    ));
    let shop = show(cfg, "shop");
    let site = shop["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|link| link["label"] == "web site")
        .unwrap()["url"]
        .as_str()
        .unwrap()
        .to_owned();
    (shop, site)
}

/// Issue 40's first acceptance: the admin changes `app`'s install; the cluster says it
/// is behind, the upgrade's plan touches only what changed, the upgrade runs under a
/// client fetching the site every 100 ms without one failure, every app node then
/// serves the new release, and rolling the job back brings the old one back.
#[tokio::test(flavor = "multi_thread")]
async fn an_upgrade_rolls_a_changed_service_out_without_downtime_and_back() {
    let data = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let server = start(data.path());
    let cfg = config.path();
    login_as_admin(cfg, &server);
    let (shop, site) = web_stack_of_four(cfg);
    assert_eq!(shop["catalog_behind"], serde_json::json!([]));
    let app_nodes: BTreeSet<u64> = shop["layout"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|node| node["services"].as_array().unwrap().contains(&"app".into()))
        .map(|node| node["number"].as_u64().unwrap())
        .collect();
    assert_eq!(app_nodes.len(), 2, "{shop}");
    let before = releases_served(&site).await;
    assert_eq!(
        before
            .iter()
            .map(|(_, release)| release.as_str())
            .collect::<BTreeSet<_>>(),
        BTreeSet::from(["1"])
    );

    // The admin's fix: app's install now lays down release 2.
    let bundle = data.path().join("catalog.json");
    ok(&corral(
        cfg,
        &["catalog", "export", "--out", bundle.to_str().unwrap()],
        "",
    ));
    let exported = std::fs::read_to_string(&bundle).unwrap();
    assert!(exported.contains("install app --release 1"));
    std::fs::write(
        &bundle,
        exported.replace("install app --release 1", "install app --release 2"),
    )
    .unwrap();
    ok(&corral(
        cfg,
        &["catalog", "import", bundle.to_str().unwrap()],
        "",
    ));

    let shop = show(cfg, "shop");
    assert_eq!(
        shop["catalog_behind"],
        serde_json::json!([{"kind": "services", "name": "app", "change": "changed"}])
    );
    // Each node's machine as its provider says, beside its health (the monitor asks
    // about a new cluster at its next heal round).
    let asked = Instant::now();
    while !show(cfg, "shop")["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|node| node["machine"]["presence"] == "present")
    {
        assert!(
            asked.elapsed() < Duration::from_secs(30),
            "machines not recorded present: {}",
            show(cfg, "shop")["nodes"]
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let shown = ok(&corral(cfg, &["cluster", "show", "shop"], ""));
    assert!(
        shown.contains("built from web-stack r1") && shown.contains("app changed"),
        "{shown}"
    );
    assert!(
        shown.contains("MACHINE") && shown.contains("present"),
        "{shown}"
    );
    let (browser, _) = test_server::sign_in(&server.url, "admin", &server.password).await;
    let page = browser
        .get(format!(
            "{}/clusters/{}",
            server.url,
            shop["id"].as_str().unwrap()
        ))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains("data-testid=\"catalog-behind\"") && page.contains("app changed"),
        "the cluster page says it is behind"
    );

    let plan = ok(&corral(cfg, &["cluster", "plan", "shop", "upgrade"], ""));
    assert!(
        plan.contains("services app changed (provisioner)"),
        "{plan}"
    );
    assert!(plan.contains("upgrade: app reinstall"), "{plan}");
    let steps: Vec<&str> = plan
        .lines()
        .filter_map(|line| line.strip_prefix("  "))
        .collect();
    for step in &steps {
        let (node, rest) = step.split_once('-').unwrap();
        let node: u64 = node.parse().unwrap();
        assert!(
            (app_nodes.contains(&node) && rest.ends_with("-app")) || rest == "configure-lb",
            "only app nodes' app steps and the balancer's configure: {plan}"
        );
    }
    // stop, install, start on each app node (the demo app has no configure), then
    // the balancer.
    assert_eq!(steps.len(), 3 * 2 + 1, "{plan}");

    let (stop, stopped) = tokio::sync::watch::channel(false);
    let fetching = tokio::spawn(fetch_every_100ms(site.clone(), stopped));
    let changed = ok(&corral(cfg, &["cluster", "change", "shop", "upgrade"], ""));
    let job = submitted_job(&changed);
    let watched = ok(&corral(cfg, &["job", "watch", &job], ""));
    assert!(watched.contains("succeeded"), "{watched}");
    stop.send(true).unwrap();
    let (failed, failures, releases) = fetching.await.unwrap();
    assert_eq!(failed, 0, "fetches failed during the upgrade: {failures:?}");
    assert!(
        releases.contains("1") && releases.contains("2"),
        "{releases:?}"
    );
    let after = releases_served(&site).await;
    assert_eq!(after.len(), 2, "both app nodes answer: {after:?}");
    assert!(after.iter().all(|(_, release)| release == "2"), "{after:?}");
    assert_eq!(show(cfg, "shop")["catalog_behind"], serde_json::json!([]));

    // Back to release 1: the upgrade's rollback runs the definitions it replaced.
    let rollback_plan = ok(&corral(
        cfg,
        &["cluster", "plan", "shop", "rollback", "--job", &job],
        "",
    ));
    assert!(
        rollback_plan.contains("upgrade: app reinstall"),
        "{rollback_plan}"
    );
    let rolled = ok(&corral(
        cfg,
        &["cluster", "change", "shop", "rollback", "--job", &job],
        "",
    ));
    ok(&corral(cfg, &["job", "watch", &submitted_job(&rolled)], ""));
    let back = releases_served(&site).await;
    assert!(back.iter().all(|(_, release)| release == "1"), "{back:?}");
    assert_eq!(
        show(cfg, "shop")["catalog_behind"],
        serde_json::json!([{"kind": "services", "name": "app", "change": "changed"}])
    );
}

/// A catalog of one template with parameters (issue 44): an integer with bounds, a
/// choice and a boolean, which its one service writes out through `%param.NAME%`.
const TUNED_CATALOG: &str = r#"{
  "providers": [{"name": "local", "providertype": "local", "provisioner": {}}],
  "hardwaretypes": [{"name": "small", "providermap": {"local": {"flavor": "local-small"}}}],
  "imagetypes": [{"name": "debian", "providermap": {"local": {"image": "host"}}}],
  "services": [{"name": "tuned", "dependencies": {}, "provisioner": {"actions": {
    "install": {"type": "shell", "fields": {"run": "echo %param.shards% %param.tier% %param.tls% > values"}}
  }}}],
  "clustertemplates": [{
    "name": "tuned",
    "compatibility": {"services": ["tuned"]},
    "defaults": {"services": ["tuned"], "provider": "local", "hardwaretype": "small",
                 "imagetype": "debian", "config": {}},
    "parameters": {
      "shards": {"type": "integer", "minimum": 1, "maximum": 5, "default": 1},
      "tier": {"type": "choice", "choices": ["small", "large"], "default": "small"},
      "tls": {"type": "boolean", "default": false}
    }
  }]
}"#;

/// `corral cluster create --param` and an environment file's `parameters:` give the
/// same cluster config (each value typed by the server), a bad `--param` is refused
/// naming the parameter with nothing made, and applying the file again does nothing.
#[test]
fn params_from_the_cli_and_from_an_environment_file_give_the_same_cluster() {
    let data = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let server = start(data.path());
    let cfg = config.path();
    login_as_admin(cfg, &server);
    let catalog = data.path().join("tuned.json");
    std::fs::write(&catalog, TUNED_CATALOG).unwrap();
    ok(&corral(
        cfg,
        &["catalog", "import", catalog.to_str().unwrap()],
        "",
    ));

    let create = |name: &str, params: &[&str]| {
        let mut args = vec![
            "cluster",
            "create",
            name,
            "--template",
            "tuned",
            "--size",
            "1",
        ];
        for param in params {
            args.extend(["--param", param]);
        }
        args.push("--wait");
        corral(cfg, &args, "")
    };
    let refused = create("bad", &["shards=9", "tier=large"]);
    assert!(!refused.status.success());
    let stderr = text(&refused.stderr);
    assert!(
        stderr.contains("parameters.shards: 9 is above the maximum 5"),
        "{stderr}"
    );
    let listed = ok(&corral(cfg, &["cluster", "list", "--json"], ""));
    assert!(listed.contains("\"total\": 0"), "{listed}");

    ok(&create("by-flag", &["shards=3", "tier=large", "tls=true"]));
    let file = data.path().join("tuned.yaml");
    std::fs::write(
        &file,
        "environment: tuned\nclusters:\n  - name: by-file\n    template: tuned\n    size: 1\n    \
         parameters: {shards: 3, tier: large, tls: true}\n",
    )
    .unwrap();
    let file = file.to_str().unwrap();
    ok(&corral(cfg, &["apply", file, "--yes"], ""));
    let expected = serde_json::json!({"shards": 3, "tier": "large", "tls": true});
    for name in ["by-flag", "by-file"] {
        let cluster = show(cfg, name);
        assert_eq!(cluster["state"], "active", "{cluster}");
        assert_eq!(
            cluster["config"]["parameters"], expected,
            "{name}: {cluster}"
        );
    }
    let again = ok(&corral(cfg, &["apply", file, "--yes"], ""));
    assert!(again.contains("nothing to do"), "{again}");
}

/// Issue 40's node replacement: an app node of a local web-stack is replaced while a
/// client fetches the site every 100 ms, without a failed fetch; the balancer then
/// sends to the successor (numbered after the cluster's last node) and no longer to
/// the old node, which is gone from the cluster. A node running the stateful `kv` is
/// refused without `--force` (naming the data), and its plan with `--force` warns.
#[tokio::test(flavor = "multi_thread")]
async fn a_replaced_node_hands_over_to_its_successor_without_downtime() {
    let data = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let server = start(data.path());
    let cfg = config.path();
    login_as_admin(cfg, &server);
    let (shop, site) = web_stack_of_four(cfg);
    let nodes = shop["layout"]["nodes"].as_array().unwrap().clone();
    let runs = |node: &serde_json::Value, service: &str| {
        node["services"]
            .as_array()
            .unwrap()
            .contains(&service.into())
    };
    let number = |node: &serde_json::Value| node["number"].as_u64().unwrap();
    let last = nodes.iter().map(number).max().unwrap();
    let replaced = nodes
        .iter()
        .find(|node| runs(node, "app") && !runs(node, "kv"))
        .map(number)
        .expect("an app node without kv");
    let keeping_data = nodes
        .iter()
        .find(|node| runs(node, "kv"))
        .map(number)
        .unwrap()
        .to_string();
    let before = backends(&site, 8).await;
    assert_eq!(before.len(), 2, "{before:?}");

    let refused = corral(
        cfg,
        &[
            "cluster",
            "change",
            "shop",
            "replace-nodes",
            "--nodes",
            &keeping_data,
        ],
        "",
    );
    assert!(!refused.status.success());
    let stderr = text(&refused.stderr);
    assert!(
        stderr.contains(&format!("node {keeping_data} runs kv"))
            && stderr.contains("keeps data")
            && stderr.contains("--force"),
        "{stderr}"
    );
    let forced_plan = ok(&corral(
        cfg,
        &[
            "cluster",
            "plan",
            "shop",
            "replace-nodes",
            "--nodes",
            &keeping_data,
            "--force",
        ],
        "",
    ));
    assert!(
        forced_plan.contains("warning: ") && forced_plan.contains("is lost"),
        "{forced_plan}"
    );
    let unknown = corral(
        cfg,
        &[
            "cluster",
            "plan",
            "shop",
            "replace-nodes",
            "--nodes",
            "1999",
        ],
        "",
    );
    assert!(
        text(&unknown.stderr).contains("has no node 1999"),
        "{}",
        text(&unknown.stderr)
    );

    let replaced_arg = replaced.to_string();
    let plan = ok(&corral(
        cfg,
        &[
            "cluster",
            "plan",
            "shop",
            "replace-nodes",
            "--nodes",
            &replaced_arg,
        ],
        "",
    ));
    let successor = last + 1;
    assert!(plan.contains(&format!("{successor}-create")), "{plan}");
    assert!(plan.contains(&format!("{replaced}-delete")), "{plan}");
    assert!(!plan.contains("warning:"), "{plan}");

    let (stop, stopped) = tokio::sync::watch::channel(false);
    let fetching = tokio::spawn(fetch_every_100ms(site.clone(), stopped));
    let changed = ok(&corral(
        cfg,
        &[
            "cluster",
            "change",
            "shop",
            "replace-nodes",
            "--nodes",
            &replaced_arg,
        ],
        "",
    ));
    let watched = ok(&corral(
        cfg,
        &["job", "watch", &submitted_job(&changed)],
        "",
    ));
    assert!(watched.contains("succeeded"), "{watched}");
    stop.send(true).unwrap();
    let (failed, failures, _) = fetching.await.unwrap();
    assert_eq!(
        failed, 0,
        "fetches failed during the replacement: {failures:?}"
    );

    let after = backends(&site, 8).await;
    assert_eq!(after.len(), 2, "{after:?}");
    assert_eq!(
        before.intersection(&after).count(),
        1,
        "one app node stays, the other is the successor: {before:?} then {after:?}"
    );
    let shop = show(cfg, "shop");
    let numbers: BTreeSet<u64> = shop["layout"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(number)
        .collect();
    assert!(
        numbers.contains(&successor) && !numbers.contains(&replaced),
        "{numbers:?}"
    );
    assert_eq!(numbers.len(), nodes.len());
}

/// Exports the catalog, changes `kv` with `change`, and imports it again: a new revision
/// of the service every kv-cluster cluster is then behind.
fn import_kv_change(cfg: &Path, dir: &Path, change: impl FnOnce(&mut serde_json::Value)) {
    let bundle = dir.join("catalog.json");
    ok(&corral(
        cfg,
        &["catalog", "export", "--out", bundle.to_str().unwrap()],
        "",
    ));
    let mut catalog: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&bundle).unwrap()).unwrap();
    let kv = catalog["services"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|service| service["name"] == "kv")
        .unwrap();
    change(kv);
    std::fs::write(&bundle, catalog.to_string()).unwrap();
    ok(&corral(
        cfg,
        &["catalog", "import", bundle.to_str().unwrap()],
        "",
    ));
}

/// Issue 40's rollout acceptance: three kv-cluster clusters, one pinned. A rollout with
/// `--max-parallel 1` upgrades the other two, one after the other (their jobs' time
/// windows do not overlap), and leaves the pinned one on its old revision; a revision
/// whose health check fails stops the rollout after its first cluster, the rest left
/// untouched, and so does one whose install fails.
#[tokio::test(flavor = "multi_thread")]
async fn a_rollout_upgrades_one_cluster_at_a_time_passes_pinned_and_stops_at_red() {
    let data = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let server = start(data.path());
    let cfg = config.path();
    login_as_admin(cfg, &server);
    for name in ["kv-a", "kv-b", "kv-c"] {
        ok(&corral(
            cfg,
            &[
                "cluster",
                "create",
                name,
                "--template",
                "kv-cluster",
                "--size",
                "1",
                "--wait",
            ],
            "",
        ));
    }
    let pinned = ok(&corral(cfg, &["cluster", "pin", "kv-b"], ""));
    assert!(pinned.contains("pinned"), "{pinned}");
    assert!(ok(&corral(cfg, &["cluster", "show", "kv-b"], "")).contains("pinned"));
    let behind = |name: &str| show(cfg, name)["catalog_behind"].clone();
    let kv_changed = serde_json::json!([{"kind": "services", "name": "kv", "change": "changed"}]);

    // A new revision that reinstalls kv (stop, install, start) and still passes its
    // health check.
    import_kv_change(cfg, data.path(), |kv| {
        let install = &mut kv["provisioner"]["actions"]["install"]["fields"]["args"];
        assert_eq!(install, "install kv");
        *install = "install kv --release 2".into();
    });
    let dry = ok(&corral(
        cfg,
        &[
            "catalog",
            "rollout",
            "--template",
            "kv-cluster",
            "--dry-run",
        ],
        "",
    ));
    assert!(
        dry.contains("kv-a") && dry.contains("kv-b [pinned") && dry.contains("kv-c"),
        "{dry}"
    );
    assert!(dry.contains("kv changed"), "{dry}");
    let rolled = ok(&corral(
        cfg,
        &[
            "catalog",
            "rollout",
            "--template",
            "kv-cluster",
            "--max-parallel",
            "1",
        ],
        "",
    ));
    assert!(rolled.contains(": succeeded"), "{rolled}");
    assert!(rolled.contains("kv-b: skipped-pinned"), "{rolled}");
    let id = rolled
        .lines()
        .find_map(|line| line.strip_prefix("rollout ")?.strip_suffix(" started"))
        .unwrap()
        .to_owned();

    let (browser, _) = test_server::sign_in(&server.url, "admin", &server.password).await;
    let get = |path: String| {
        let browser = browser.clone();
        async move {
            browser
                .get(path)
                .send()
                .await
                .unwrap()
                .json::<serde_json::Value>()
                .await
                .unwrap()
        }
    };
    let rollout = get(format!("{}/api/v1/catalog/rollouts/{id}", server.url)).await;
    assert_eq!(rollout["state"], "succeeded", "{rollout}");
    let mut windows = Vec::new();
    for cluster in rollout["clusters"].as_array().unwrap() {
        if cluster["cluster_name"] == "kv-b" {
            assert_eq!(cluster["state"], "skipped-pinned", "{rollout}");
            assert!(cluster.get("job_id").is_none(), "{rollout}");
            continue;
        }
        assert_eq!(cluster["state"], "succeeded", "{rollout}");
        let job_id = cluster["job_id"].as_str().unwrap();
        let job = get(format!("{}/api/v1/jobs/{job_id}", server.url)).await;
        assert_eq!(job["operation"], "upgrade", "{job}");
        assert!(
            job["tasks_total"].as_i64().unwrap() > 0,
            "a real upgrade: {job}"
        );
        windows.push((
            job["started_at_ms"].as_i64().expect("started"),
            job["finished_at_ms"].as_i64().expect("finished"),
        ));
    }
    assert_eq!(windows.len(), 2, "{rollout}");
    windows.sort_unstable();
    assert!(
        windows[0].1 <= windows[1].0,
        "one after the other: {windows:?}"
    );
    assert_eq!(behind("kv-a"), serde_json::json!([]));
    assert_eq!(behind("kv-c"), serde_json::json!([]));
    assert_eq!(
        behind("kv-b"),
        kv_changed,
        "the pinned cluster kept its revision"
    );

    // A revision whose check fails: the rollout stops after its first cluster.
    import_kv_change(cfg, data.path(), |kv| {
        kv["healthcheck"] = serde_json::json!({"run": "exit 1", "interval": 2});
    });
    let stopped = corral(
        cfg,
        &[
            "catalog",
            "rollout",
            "--template",
            "kv-cluster",
            "--max-parallel",
            "1",
        ],
        "",
    );
    let said = text(&stopped.stdout);
    assert!(!stopped.status.success(), "a stopped rollout fails: {said}");
    assert!(said.contains("stopped at cluster kv-a"), "{said}");
    assert!(said.contains("kv-a: failed"), "{said}");
    assert!(said.contains("kv-c: untouched"), "{said}");
    assert!(said.contains("kv-b: skipped-pinned"), "{said}");
    assert_eq!(behind("kv-b"), kv_changed);
    assert_eq!(
        behind("kv-c"),
        kv_changed,
        "untouched: still on the passing revision"
    );

    // A revision whose install fails: the first cluster's upgrade job fails, naming
    // the step, and the rollout stops there the same way.
    import_kv_change(cfg, data.path(), |kv| {
        kv.as_object_mut().unwrap().remove("healthcheck");
        kv["provisioner"]["actions"]["install"]["fields"] =
            serde_json::json!({"run": "echo 'kv: broken release' >&2; exit 3"});
    });
    let broken = corral(
        cfg,
        &[
            "catalog",
            "rollout",
            "--template",
            "kv-cluster",
            "--max-parallel",
            "1",
        ],
        "",
    );
    let said = text(&broken.stdout);
    assert!(!broken.status.success(), "a stopped rollout fails: {said}");
    assert!(said.contains("stopped at cluster kv-a"), "{said}");
    assert!(said.contains("kv-a: failed"), "{said}");
    assert!(said.contains("kv-c: untouched"), "{said}");
    let kv_a = show(cfg, "kv-a");
    let failed_job = kv_a["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|job| job["operation"] == "upgrade" && job["state"] == "failed")
        .unwrap_or_else(|| panic!("no failed upgrade job: {kv_a}"))
        .clone();
    let error = failed_job["error"].as_str().unwrap_or_default();
    assert!(error.contains("install"), "{failed_job}");
}

/// A catalog whose `small` costs 0.5 per hour (0.25 on `local`, which wins there).
const PRICED_CATALOG: &str = r#"{
  "providers": [{"name": "local", "providertype": "local", "provisioner": {}}],
  "hardwaretypes": [{"name": "small", "price_per_hour": 0.5,
                     "providermap": {"local": {"flavor": "local-small", "price_per_hour": 0.25}}}],
  "imagetypes": [{"name": "debian", "providermap": {"local": {"image": "host"}}}],
  "services": [{"name": "noop", "dependencies": {}, "provisioner": {"actions": {
    "install": {"type": "shell", "fields": {"run": "true"}}
  }}}],
  "clustertemplates": [{
    "name": "plain",
    "compatibility": {"services": ["noop"]},
    "defaults": {"services": ["noop"], "provider": "local", "hardwaretype": "small",
                 "imagetype": "debian", "config": {}}
  }]
}"#;

/// Issue 44 point 4 from the CLI (docs/cost.md): the dry run prints the estimate per
/// hour and per month, a budget refuses a create naming itself with nothing made,
/// `--cost-above` adds a rule, and budget and showback print (showback as CSV too).
#[test]
fn the_cli_shows_estimates_and_a_budget_refuses_naming_itself() {
    let data = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let server = start(data.path());
    let cfg = config.path();
    login_as_admin(cfg, &server);
    let catalog = data.path().join("priced.json");
    std::fs::write(&catalog, PRICED_CATALOG).unwrap();
    ok(&corral(
        cfg,
        &["catalog", "import", catalog.to_str().unwrap()],
        "",
    ));
    let create = |name: &str, extra: &[&str]| {
        let mut args = vec![
            "cluster",
            "create",
            name,
            "--template",
            "plain",
            "--size",
            "2",
        ];
        args.extend(extra);
        corral(cfg, &args, "")
    };
    let preview = ok(&create("priced", &["--dry-run"]));
    assert!(
        preview.contains("estimated cost: 0.50 per hour, 365.00 per month (730 h)"),
        "{preview}"
    );

    let set = ok(&corral(cfg, &["budget", "set", "--monthly", "0.01"], ""));
    assert!(
        set.contains("monthly budget 0.01 (over it: refuse)"),
        "{set}"
    );
    let refused = create("over", &[]);
    assert!(!refused.status.success());
    let stderr = text(&refused.stderr);
    assert!(
        stderr.contains("over budget: the tenant's monthly budget is 0.01"),
        "{stderr}"
    );
    let listed = ok(&corral(cfg, &["cluster", "list", "--json"], ""));
    assert!(listed.contains("\"total\": 0"), "{listed}");
    let bad = corral(
        cfg,
        &["budget", "set", "--monthly", "5", "--action", "maybe"],
        "",
    );
    assert!(!bad.status.success());
    assert!(
        text(&bad.stderr).contains("budget_action"),
        "{}",
        text(&bad.stderr)
    );
    let shown = ok(&corral(cfg, &["budget", "show"], ""));
    assert!(shown.contains("projected"), "{shown}");
    let cleared = ok(&corral(cfg, &["budget", "clear"], ""));
    assert!(cleared.contains("no monthly budget"), "{cleared}");

    let rule = ok(&corral(
        cfg,
        &["approval", "rule", "add", "--cost-above", "100"],
        "",
    ));
    assert!(
        rule.contains("estimated cost above 100.00 per month"),
        "{rule}"
    );
    let csv = ok(&corral(cfg, &["showback", "--csv"], ""));
    assert!(csv.starts_with("month,by,name,cost\n"), "{csv}");
}
