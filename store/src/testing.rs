//! Throwaway databases for tests (feature `test-support`).
//!
//! Every test that needs a database gets its own: a SQLite file in a temp dir, or a
//! fresh PostgreSQL database that is dropped when the guard goes out of scope. The
//! PostgreSQL server comes from `CORRAL_TEST_POSTGRES_URL`, by default the one every
//! machine of this project runs at 127.0.0.1:5432 with trust auth.

use std::path::PathBuf;

use sqlx::{Connection, Executor, PgConnection};

use crate::{Backend, DatabaseUrl};

const DEFAULT_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

fn admin_url() -> String {
    std::env::var("CORRAL_TEST_POSTGRES_URL").unwrap_or_else(|_| DEFAULT_ADMIN_URL.to_owned())
}

/// A database that exists for one test and is removed afterwards.
pub struct TestDatabase {
    pub url: DatabaseUrl,
    backend: Backend,
    pg_name: Option<String>,
    // Held so the SQLite file's directory lives as long as the database.
    _dir: Option<tempfile::TempDir>,
}

impl TestDatabase {
    pub async fn new(backend: Backend) -> Self {
        match backend {
            Backend::Sqlite => Self::sqlite(),
            Backend::Postgres => Self::postgres().await,
        }
    }

    pub fn sqlite() -> Self {
        let dir = tempfile::tempdir().expect("temp dir for a test database");
        let path: PathBuf = dir.path().join("corral.db");
        Self {
            url: DatabaseUrl::sqlite_file(&path),
            backend: Backend::Sqlite,
            pg_name: None,
            _dir: Some(dir),
        }
    }

    pub async fn postgres() -> Self {
        let admin = admin_url();
        let name = format!("corral_test_{}", uuid::Uuid::new_v4().simple());
        let mut conn = PgConnection::connect(&admin)
            .await
            .unwrap_or_else(|err| panic!("PostgreSQL for tests at {admin}: {err}"));
        conn.execute(format!("CREATE DATABASE {name}").as_str())
            .await
            .expect("create test database");
        let mut url = url::Url::parse(&admin).expect("admin URL parses");
        url.set_path(&name);
        Self {
            url: DatabaseUrl::parse(url.as_str()).expect("test database URL"),
            backend: Backend::Postgres,
            pg_name: Some(name),
            _dir: None,
        }
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let Some(name) = self.pg_name.take() else {
            return;
        };
        // Drop runs outside any async context we can rely on, so use a short-lived
        // runtime on its own thread; FORCE ends connections a pool may still hold.
        let admin = admin_url();
        let joined = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime for dropping a test database");
            runtime.block_on(async move {
                if let Ok(mut conn) = PgConnection::connect(&admin).await {
                    let _ = conn
                        .execute(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)").as_str())
                        .await;
                }
            });
        })
        .join();
        if joined.is_err() {
            eprintln!("warning: could not drop a test database");
        }
    }
}

/// A cluster row with no template, layout or catalog behind it: enough for queue
/// tests and benchmarks, which need jobs to hang off a cluster and nothing more.
pub fn bare_cluster(tenant_id: &str, name: &str) -> crate::clusters::NewCluster {
    crate::clusters::NewCluster {
        tenant_id: tenant_id.into(),
        name: name.into(),
        template_name: "bare".into(),
        template_version: 1,
        template_json: "{}".into(),
        owner_id: None,
        state: api_types::ClusterState::Creating,
        layout_json: "{}".into(),
        config_json: "{}".into(),
        catalog_json: "{}".into(),
        provider: "local".into(),
        lease_expires_ms: None,
    }
}

/// An active cluster row as the store would return it (id `c1` of tenant `t`, named
/// `shop`, from template `web`), built without a database: for unit tests of what is
/// made of a row.
pub fn stored_cluster(layout_json: &str, catalog_json: &str) -> crate::clusters::Cluster {
    crate::clusters::Cluster {
        id: "c1".into(),
        tenant_id: "t".into(),
        name: "shop".into(),
        template_name: "web".into(),
        template_version: 1,
        template_json: "{}".into(),
        owner_id: None,
        state: api_types::ClusterState::Active,
        layout_json: layout_json.into(),
        config_json: "{}".into(),
        catalog_json: catalog_json.into(),
        provider: "local".into(),
        lease_expires_ms: None,
        lease_deletes_at_ms: None,
        lease_warned: None,
        created_at_ms: 0,
        updated_at_ms: 0,
    }
}

/// A ready node row of cluster `c1` as the store would return it (id `n<number>`,
/// hardware `small`, image `debian`, no services, no provider record yet).
pub fn stored_node(number: i64, hostname: Option<&str>) -> crate::clusters::nodes::Node {
    crate::clusters::nodes::Node {
        id: format!("n{number}"),
        cluster_id: "c1".into(),
        number,
        hostname: hostname.map(str::to_owned),
        hardwaretype: "small".into(),
        imagetype: "debian".into(),
        services_json: "[]".into(),
        provider_json: None,
        state: crate::clusters::nodes::NodeState::Ready,
        created_at_ms: 0,
        updated_at_ms: 0,
        presence: None,
        presence_since_ms: None,
    }
}

/// Runs each named `async fn(Backend)` scenario once per backend, as separate tests
/// in modules `sqlite` and `postgres`.
#[macro_export]
macro_rules! on_both_backends {
    ($($scenario:ident),* $(,)?) => {
        mod sqlite {
            $(#[tokio::test]
            async fn $scenario() {
                super::$scenario($crate::Backend::Sqlite).await;
            })*
        }
        mod postgres {
            $(#[tokio::test]
            async fn $scenario() {
                super::$scenario($crate::Backend::Postgres).await;
            })*
        }
    };
}

/// The secret key tests seal stored secrets with: fixed, so that several stores of
/// one test (a "second machine") open what another sealed, as processes sharing
/// `CORRAL_SECRET_KEY` do.
pub fn test_secret_key() -> crate::secrets::SecretKey {
    crate::secrets::SecretKey::from_bytes(&[0x5e; 32])
}
