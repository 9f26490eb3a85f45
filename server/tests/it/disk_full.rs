//! Full disks (SQLite): the server's data directory on a small tmpfs that fills while
//! a create runs, and a step that fills its node's disk.
//!
//! While the data dir's filesystem is full, writes through the API are refused with
//! 507 `storage_full` naming the full disk (SQLite's `SQLITE_FULL`), reads still answer
//! 200 and the server stays up; the running job's worker cannot record its step and
//! gives it up. Once the filler is deleted, `PRAGMA integrity_check` finds nothing
//! wrong and the job, failed because its non-idempotent step was lost, is retried to
//! success. A step that fills its node's disk fails with the node's own words (`No
//! space left on device`) in its attempt's output.
//!
//! Mounting needs root, which the tests have here and in CI: a failed mount fails the
//! test saying so.
//!
//! The worker must see its heartbeats fail: a beat written as `UPDATE ... RETURNING`
//! and read with `fetch_optional` once "renewed" the lease while SQLite's commit (done
//! when the statement is reset, where sqlx does not look) failed, and the step was never
//! given up.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sqlx::{Connection, SqliteConnection};

use crate::support::one_heavy_test_at_a_time;
use crate::support::test_server::CORRAL;

/// A tmpfs mounted on a temp dir for the test, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str, mode: &str) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("corral-tmpfs-")
            .tempdir()
            .unwrap();
        let mounted = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode={mode}"),
                "tmpfs",
            ])
            .arg(dir.path())
            .output()
            .unwrap_or_else(|error| panic!("cannot run mount (this test needs root): {error}"));
        assert!(
            mounted.status.success(),
            "mounting a {size} tmpfs failed (this test needs root): {}",
            String::from_utf8_lossy(&mounted.stderr)
        );
        Self { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazily: a process that still has a file open there must not keep it mounted.
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// `corral serve` with its log (`server.log`) in `log_dir`, outside the data dir: a
/// full disk must not eat it.
fn serve(data: &Path, log_dir: &Path) -> served::Served {
    served::Options::serve(CORRAL, data)
        .worker_slots(4)
        // Short leases: the step given up while the disk was full is taken back soon.
        .lease_secs(3)
        .log_dir(log_dir)
        .start()
        .unwrap_or_else(|error| panic!("{error}"))
}

/// The test's catalog: `plain` nodes, `held` ones whose start waits for `go` (and is
/// declared unsafe to repeat), and `spilling` ones that write 4 MiB into `spill`.
fn catalog(go: &Path, spill: &Path) -> Value {
    let shell = |run: String| json!({"type": "shell", "fields": {"run": run}});
    let mut hold = shell(format!(
        "while [ ! -e {go} ]; do sleep 0.2; done; echo held",
        go = go.display()
    ));
    hold["fields"]["idempotent"] = json!("false");
    let template = |name: &str, services: &[&str]| {
        json!({
            "name": name,
            "compatibility": {"services": ["base", "hold", "spill"], "hardwaretypes": ["small"], "imagetypes": ["debian"]},
            "defaults": {"services": services, "provider": "local", "hardwaretype": "small", "imagetype": "debian", "config": {}},
            "constraints": {"size": {"min": 1}}
        })
    };
    json!({
        "providers": [{"name": "local", "providertype": "local", "provisioner": {}}],
        "hardwaretypes": [{"name": "small", "providermap": {"local": {"flavor": "local-small"}}}],
        "imagetypes": [{"name": "debian", "providermap": {"local": {"image": "host"}}}],
        "services": [
            {"name": "base", "dependencies": {}, "provisioner": {"actions": {
                "install": shell("echo base".to_owned())}}},
            {"name": "hold", "dependencies": {"install": {"requires": ["base"]}},
             "provisioner": {"actions": {"start": hold}}},
            {"name": "spill", "dependencies": {"install": {"requires": ["base"]}},
             "provisioner": {"actions": {"configure": shell(format!(
                 "dd if=/dev/zero of={}/spill-$CORRAL_NODE bs=64k count=64",
                 spill.display()
             ))}}}
        ],
        "clustertemplates": [
            template("plain", &["base"]),
            template("held", &["base", "hold"]),
            template("spilling", &["base", "spill"])
        ]
    })
}

struct Api {
    client: reqwest::Client,
    base: String,
    token: String,
}

impl Api {
    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut request = self
            .client
            .request(method, format!("{}/api/v1{path}", self.base))
            .bearer_auth(&self.token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    async fn get(&self, path: &str) -> Value {
        let (status, body) = self.call(reqwest::Method::GET, path, None).await;
        assert_eq!(status, 200, "GET {path}: {body}");
        body
    }

    /// Submits a create; its job id.
    async fn create(&self, name: &str, template: &str) -> String {
        let (status, body) = self
            .call(
                reqwest::Method::POST,
                "/clusters",
                Some(json!({"name": name, "template": template, "size": 1})),
            )
            .await;
        assert!((200..300).contains(&status), "{status}: {body}");
        body["job_id"].as_str().unwrap().to_owned()
    }

    /// Waits (two minutes at most) for the job to end; its last view.
    async fn job_end(&self, job: &str) -> Value {
        let started = Instant::now();
        loop {
            let view = self.get(&format!("/jobs/{job}")).await;
            let state = view["state"].as_str().unwrap();
            if ["succeeded", "failed", "cancelled"].contains(&state)
                || started.elapsed() > Duration::from_secs(120)
            {
                return view;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    async fn tasks(&self, job: &str) -> Vec<Value> {
        let tasks = self.get(&format!("/jobs/{job}/tasks")).await;
        let list = tasks.get("items").unwrap_or(&tasks);
        list.as_array().unwrap().clone()
    }
}

/// A browser-like client signed in as the admin, and an API token made through it.
async fn signed_in_admin(server: &served::Served) -> (reqwest::Client, String) {
    let client = reqwest::Client::builder()
        .cookie_store(true)
        .build()
        .unwrap();
    let session: Value = client
        .post(format!("{}/api/v1/session", server.url().unwrap()))
        .json(&json!({"username": "admin", "password": server.password().unwrap()}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let created: Value = client
        .post(format!("{}/api/v1/tokens", server.url().unwrap()))
        .header("x-csrf-token", session["csrf_token"].as_str().unwrap())
        .json(&json!({"name": "disk-full"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    (client, created["secret"].as_str().unwrap().to_owned())
}

/// Writes zeros into `dir` until its filesystem refuses (big files first, then small
/// blocks for the last pages); the files it made.
fn fill(dir: &Path) -> Vec<PathBuf> {
    let mut made = Vec::new();
    for (index, block) in [1 << 20, 4096, 512].into_iter().enumerate() {
        let path = dir.join(format!("filler-{index}"));
        let mut file = std::fs::File::create(&path).unwrap();
        made.push(path);
        let zeros = vec![0u8; block];
        loop {
            match file.write_all(&zeros) {
                Ok(()) => {}
                Err(error) if error.raw_os_error() == Some(28) => break,
                Err(error) => panic!("filling {}: {error}", dir.display()),
            }
        }
    }
    made
}

/// Empties SQLite's write-ahead log into the database and cuts it to nothing, so the
/// server's next write must grow it (a full disk then refuses it instead of the write
/// reusing room the log already has). Tried until no reader is in the way.
async fn truncate_wal(database: &Path) {
    let mut conn = SqliteConnection::connect(&format!("sqlite://{}", database.display()))
        .await
        .unwrap();
    for _ in 0..100 {
        let (busy, _, _): (i64, i64, i64) = sqlx::query_as("PRAGMA wal_checkpoint(TRUNCATE)")
            .fetch_one(&mut conn)
            .await
            .unwrap();
        if busy == 0 {
            conn.close().await.unwrap();
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the write-ahead log stayed busy");
}

async fn integrity_check(database: &Path) -> Vec<String> {
    let mut conn = SqliteConnection::connect(&format!("sqlite://{}", database.display()))
        .await
        .unwrap();
    let findings = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    findings
}

/// Waits (a minute at most) until the log holds `needle`.
async fn log_says(log: &Path, needle: &str) {
    let started = Instant::now();
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if text.contains(needle) {
            return;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let tail: Vec<&str> = text.lines().rev().take(30).collect();
            panic!(
                "the log never said {needle:?}; it ends:\n{}",
                tail.join("\n")
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_full_disk_refuses_writes_keeps_reads_and_recovers() {
    // First, so that it is dropped last (see `one_heavy_test_at_a_time`).
    let _heavy = one_heavy_test_at_a_time().await;
    let disk = Tmpfs::mount("48m", "0700");
    // The nodes' steps run as other users: the spill disk and the go file must be theirs too.
    let spill = Tmpfs::mount("1m", "1777");
    let outside = tempfile::Builder::new()
        .prefix("corral-disk-full-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(
        outside.path(),
        <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755),
    )
    .unwrap();
    let go = outside.path().join("go");
    let data = disk.path().join("data");
    let database = data.join("corral.db");
    let mut server = serve(&data, outside.path());
    let (browser, token) = signed_in_admin(&server).await;
    let api = Api {
        client: reqwest::Client::new(),
        base: server.url().unwrap().to_owned(),
        token,
    };
    let (status, body) = api
        .call(
            reqwest::Method::POST,
            "/catalog/import",
            Some(catalog(&go, spill.path())),
        )
        .await;
    assert_eq!(status, 200, "{body}");

    // A step that fills its node's disk fails with the node's words.
    let spilled = api.create("spilled", "spilling").await;
    let ended = api.job_end(&spilled).await;
    assert_eq!(ended["state"], "failed", "{ended}");
    let failed = api
        .tasks(&spilled)
        .await
        .into_iter()
        .find(|task| task["state"] == "failed")
        .unwrap();
    let attempts = api
        .get(&format!(
            "/jobs/{spilled}/tasks/{}/attempts",
            failed["id"].as_str().unwrap()
        ))
        .await;
    assert!(
        attempts.to_string().contains("No space left on device"),
        "{attempts}"
    );

    // The server's own disk fills while a create runs.
    let plain = api.create("plain", "plain").await;
    assert_eq!(api.job_end(&plain).await["state"], "succeeded");
    let held = api.create("held", "held").await;
    let started = Instant::now();
    while !api
        .tasks(&held)
        .await
        .iter()
        .any(|task| task["service"] == "hold" && task["state"] == "running")
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "hold never ran"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    truncate_wal(&database).await;
    let fillers = fill(disk.path());

    let (status, refused) = api
        .call(
            reqwest::Method::POST,
            "/clusters",
            Some(json!({"name": "refused", "template": "plain", "size": 1})),
        )
        .await;
    assert_eq!(status, 507, "{refused}");
    assert_eq!(refused["error"], "storage_full", "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("disk is full"),
        "{refused}"
    );
    let clusters = api.get("/clusters").await;
    assert_eq!(clusters["total"], 3, "{clusters}");
    let job = api.get(&format!("/jobs/{held}")).await;
    assert_eq!(job["state"], "running", "{job}");
    let held_cluster = job["cluster_id"].as_str().unwrap();
    for page in [
        "/clusters".to_owned(),
        format!("/clusters/{held_cluster}"),
        format!("/clusters/{held_cluster}/jobs/{held}"),
    ] {
        let answer = browser
            .get(format!("{}{page}", server.url().unwrap()))
            .send()
            .await
            .unwrap();
        assert_eq!(
            answer.status(),
            200,
            "the page {page} while the disk is full"
        );
    }
    // The worker cannot renew the step's lease and gives the step up.
    log_says(&server.log_path(), "giving the step up").await;
    assert!(server.is_alive(), "the server died");

    for filler in fillers {
        std::fs::remove_file(filler).unwrap();
    }
    assert_eq!(integrity_check(&database).await, vec!["ok".to_owned()]);
    std::fs::write(&go, "go").unwrap();
    // The lost step may not be repeated on a guess: its job fails, and is retried.
    let lost = api.job_end(&held).await;
    assert_eq!(lost["state"], "failed", "{lost}");
    let (status, body) = api
        .call(reqwest::Method::POST, &format!("/jobs/{held}/retry"), None)
        .await;
    assert!((200..300).contains(&status), "{status}: {body}");
    let retried = api.job_end(&held).await;
    assert_eq!(retried["state"], "succeeded", "{retried}");
    // Nothing of the refused create was kept; asked again, it is built.
    let names: Vec<String> = api.get("/clusters").await["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|cluster| cluster["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(!names.contains(&"refused".to_owned()), "{names:?}");
    let again = api.create("refused", "plain").await;
    assert_eq!(api.job_end(&again).await["state"], "succeeded");
    assert!(server.is_alive());
}
