//! Upgrades: every database a previous release wrote is migrated by this binary and
//! served, and a database a newer release migrated is refused.
//!
//! Each directory of `testdata/upgrade/` is one release's fixture, made by
//! `scripts/make-upgrade-fixture.sh` with that release's binary: an SQLite database,
//! a PostgreSQL dump, the secret key that sealed their credentials, and a manifest per
//! backend of what they hold (see the script). The test copies or restores one into a
//! fresh data dir or database, starts this binary's `corral serve` on it (which
//! migrates at start), and checks through the API that clusters read, the fixture's
//! API tokens and passwords still sign in, the provider credentials still open (the
//! test plugin's check passes only with them), and the create the release left queued
//! runs to the end once its tenant's work may be taken. Every new migration must pass
//! this; a release adds its fixture (docs/operations.md, "Upgrades").
//!
//! The refusal: a future row in `_sqlx_migrations` is what a newer release's migration
//! leaves, and `corral serve` and `corral migrate` must then stop with a message naming
//! both versions, changing nothing.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use engine::store::{Backend, DatabaseUrl};
use engine::testing::TestDatabase;
use serde_json::{json, Value};
use sqlx::Connection;

use crate::support::test_server::{corral_to_its_end, text, CORRAL};

/// A migration version later than any this binary can have.
const FUTURE_MIGRATION: i64 = 99_991_231_235_959;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/upgrade")
}

fn plugins() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/tests/plugins")
}

/// Every release fixture, oldest first (their names sort by nothing useful, so by
/// the manifest's newest migration).
fn releases() -> Vec<PathBuf> {
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join("sqlite.json").is_file())
        .map(|path| {
            let manifest = manifest(&path, Backend::Sqlite);
            (
                manifest["newest_migration"].as_str().unwrap().to_owned(),
                path,
            )
        })
        .collect();
    found.sort();
    assert!(
        !found.is_empty(),
        "no fixture under {}",
        fixtures().display()
    );
    found.into_iter().map(|(_, path)| path).collect()
}

fn manifest(release: &Path, backend: Backend) -> Value {
    let path = release.join(format!("{}.json", backend.as_str()));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// `corral serve` of this build on `data` (and `database`, for PostgreSQL), with the
/// test plugins; dropping it kills it and the local nodes it made. Its log is
/// `data/server.log`.
fn serve(data: &Path, database: Option<&DatabaseUrl>) -> served::Served {
    let mut options = served::Options::serve(CORRAL, data)
        .worker_slots(4)
        .arg("--provider-plugins")
        .arg(plugins());
    if let Some(url) = database {
        options = options.database_url(url.connect_string());
    }
    options.start().unwrap_or_else(|error| panic!("{error}"))
}

/// A fresh data dir holding the release's secret key (mode 0600, as the server makes it).
fn data_dir_with_key(release: &Path) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let data = tempfile::Builder::new()
        .prefix("corral-upgrade-")
        .tempdir()
        .unwrap();
    let key = data.path().join("secret.key");
    std::fs::copy(release.join("secret.key"), &key).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    data
}

/// Restores a `pg_dump` plain-text dump into `url`. psql's own meta-commands (the
/// dump's `\restrict` guard lines) are left out: they are not SQL.
async fn restore_dump(url: &DatabaseUrl, dump: &Path) {
    let text = std::fs::read_to_string(dump).unwrap();
    let sql: String = text
        .lines()
        .filter(|line| !line.starts_with('\\'))
        .map(|line| format!("{line}\n"))
        .collect();
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(&url.connect_string())
        .await
        .unwrap();
    sqlx::raw_sql(&sql).execute(&mut conn).await.unwrap();
    conn.close().await.unwrap();
}

struct Api {
    client: reqwest::Client,
    base: String,
}

impl Api {
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        token: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut request = self
            .client
            .request(method, format!("{}/api/v1{path}", self.base))
            .bearer_auth(token);
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

    async fn get(&self, path: &str, token: &str) -> Value {
        let (status, body) = self.call(reqwest::Method::GET, path, token, None).await;
        assert_eq!(status, 200, "GET {path}: {body}");
        body
    }

    async fn sign_in(&self, username: &str, password: &str) -> u16 {
        self.client
            .post(format!("{}/api/v1/session", self.base))
            .json(&json!({"username": username, "password": password}))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    }

    /// Waits (up to two minutes) for the job to end; its last view.
    async fn job_end(&self, job: &str, token: &str) -> Value {
        let started = Instant::now();
        loop {
            let view = self.get(&format!("/jobs/{job}"), token).await;
            let state = view["state"].as_str().unwrap().to_owned();
            if ["succeeded", "failed", "cancelled"].contains(&state.as_str())
                || started.elapsed() > Duration::from_secs(120)
            {
                return view;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

/// One release's database, migrated by this binary's server and used.
async fn release_is_migrated_and_served(release: &Path, backend: Backend) {
    let manifest = manifest(release, backend);
    let data = data_dir_with_key(release);
    let database = match backend {
        Backend::Sqlite => {
            std::fs::copy(release.join("sqlite.db"), data.path().join("corral.db")).unwrap();
            None
        }
        Backend::Postgres => {
            let db = TestDatabase::postgres().await;
            restore_dump(&db.url, &release.join("postgres.sql")).await;
            Some(db)
        }
    };
    let server = serve(data.path(), database.as_ref().map(|db| &db.url));
    let api = Api {
        client: reqwest::Client::new(),
        base: server.url().unwrap().to_owned(),
    };
    let name = release.file_name().unwrap().to_string_lossy().into_owned();

    // Migrated to this binary's newest schema.
    let ready: Value = api
        .client
        .get(format!("{}/readyz", api.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(ready["status"], "ready", "{name}: {ready}");

    // The release's tokens still sign their users in; a made-up one does not.
    let alice = manifest["users"]["alice"]["token"].as_str().unwrap();
    let admin = manifest["users"]["admin"]["token"].as_str().unwrap();
    let me = api.get("/me", alice).await;
    assert_eq!(me["username"], "alice", "{name}: {me}");
    let (status, _) = api
        .call(reqwest::Method::GET, "/me", "corral_not-a-token", None)
        .await;
    assert_eq!(status, 401, "{name}");
    // And so do their passwords.
    for user in ["admin", "alice", "bob"] {
        let password = manifest["users"][user]["password"].as_str().unwrap();
        assert_eq!(api.sign_in(user, password).await, 200, "{name}: {user}");
    }
    assert_eq!(api.sign_in("bob", "not-bobs-password").await, 401, "{name}");

    // The clusters read: the finished one with its nodes, the queued one.
    let shop = &manifest["clusters"]["shop"];
    let later = &manifest["clusters"]["later"];
    let list = api.get("/clusters", alice).await;
    let names: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|cluster| cluster["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"shop") && names.contains(&"later"),
        "{name}: {list}"
    );
    let detail = api
        .get(
            &format!("/clusters/{}", shop["id"].as_str().unwrap()),
            alice,
        )
        .await;
    assert_eq!(detail["state"], "active", "{name}: {detail}");
    assert_eq!(
        detail["nodes"].as_array().unwrap().len() as u64,
        shop["size"].as_u64().unwrap(),
        "{name}: {detail}"
    );
    let shop_job = api
        .get(&format!("/jobs/{}", shop["job"].as_str().unwrap()), alice)
        .await;
    assert_eq!(shop_job["state"], "succeeded", "{name}: {shop_job}");

    // The create the release left queued runs once shared workers may take it.
    let later_job = later["job"].as_str().unwrap();
    let queued = api.get(&format!("/jobs/{later_job}"), alice).await;
    assert_eq!(queued["state"], "queued", "{name}: {queued}");
    let tenant = manifest["tenant"]["id"].as_str().unwrap();
    let (status, body) = api
        .call(
            reqwest::Method::PUT,
            &format!("/tenants/{tenant}/dedicated-workers"),
            admin,
            Some(json!({"dedicated_workers": false})),
        )
        .await;
    assert_eq!(status, 200, "{name}: {body}");

    // The sealed credentials open with the release's key: the plugin's check passes
    // only with the token the release stored (it runs on the tenant's workers, which
    // are the shared ones again now).
    let (status, report) = api
        .call(
            reqwest::Method::POST,
            "/providers/inhouse/test",
            alice,
            Some(json!({})),
        )
        .await;
    assert_eq!(status, 200, "{name}: {report}");
    assert_eq!(report["passed"], true, "{name}: {report}");

    let ended = api.job_end(later_job, alice).await;
    assert_eq!(
        ended["state"],
        "succeeded",
        "{name}: {ended}\n{}",
        server.log_tail(200)
    );
    let built = api
        .get(
            &format!("/clusters/{}", later["id"].as_str().unwrap()),
            alice,
        )
        .await;
    assert_eq!(built["state"], "active", "{name}: {built}");
    drop(server);
}

async fn every_release_is_migrated_and_served(backend: Backend) {
    for release in releases() {
        release_is_migrated_and_served(&release, backend).await;
    }
}

/// Marks the database as migrated by a newer release: the row its migration leaves.
async fn add_future_migration(url: &DatabaseUrl, backend: Backend) {
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(&url.connect_string())
        .await
        .unwrap();
    let checksum = match backend {
        Backend::Sqlite => "X'00'",
        Backend::Postgres => "decode('00', 'hex')",
    };
    sqlx::query(&format!(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES ({FUTURE_MIGRATION}, 'a newer release', TRUE, {checksum}, 1)"
    ))
    .execute(&mut conn)
    .await
    .unwrap();
    conn.close().await.unwrap();
}

async fn applied_migrations(url: &DatabaseUrl) -> i64 {
    let mut conn = sqlx::AnyConnection::connect(&url.connect_string())
        .await
        .unwrap();
    let count = sqlx::query_scalar("SELECT COUNT(*) FROM _sqlx_migrations")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    count
}

async fn a_newer_schema_is_refused(backend: Backend) {
    let db = TestDatabase::new(backend).await;
    let data = tempfile::Builder::new()
        .prefix("corral-newer-")
        .tempdir()
        .unwrap();
    let data_dir = data.path().to_str().unwrap();
    let url = db.url.connect_string();
    let target = ["--data-dir", data_dir, "--database-url", &url];
    let migrated = corral_to_its_end([&["migrate"][..], &target].concat());
    assert!(migrated.status.success(), "{}", text(&migrated.stderr));
    add_future_migration(&db.url, backend).await;
    let before = applied_migrations(&db.url).await;

    let serve = [
        &["serve", "--listen", "127.0.0.1:0", "--worker-slots", "1"][..],
        &target,
    ]
    .concat();
    for args in [&serve[..], &[&["migrate"][..], &target].concat()[..]] {
        let refused = corral_to_its_end(args);
        let stderr = text(&refused.stderr);
        assert!(
            !refused.status.success(),
            "{args:?} ran on a newer schema: {stderr}"
        );
        assert!(
            stderr.contains(&format!(
                "the database was migrated by a newer Corral (migration {FUTURE_MIGRATION})"
            )) && stderr.contains("this binary knows migrations up to 2")
                && stderr.contains("upgrade this server"),
            "{args:?}: {stderr}"
        );
    }
    assert_eq!(
        applied_migrations(&db.url).await,
        before,
        "nothing was applied"
    );
}

engine::on_both_backends!(
    every_release_is_migrated_and_served,
    a_newer_schema_is_refused
);
