//! `spawn_app()`: the real router on a free port over a fresh, migrated database.

use std::net::SocketAddr;

use axum::body::Bytes;
use engine::accounts::Password;
use engine::principal::Principal;
use engine::queue::Queue;
use engine::resources::ResourceFiles;
use engine::service::{Caller, ProviderTestWaits, Service, TokenRequest};
use engine::store::tenants::NewTenant;
use engine::store::users::Role;
use engine::store::{Backend, Store};
use engine::testing::TestDatabase;
use server::http::bundle::Bundle;
use server::http::hardening::TrustedProxies;
use server::http::{leptos_options, router, AppState};
use server::sessions::SessionBackend;

/// How long [`render_page`] waits for a whole page: far more than any page takes, so
/// that a page that never finishes fails its test instead of holding the run.
const PAGE_WAIT: std::time::Duration = std::time::Duration::from_secs(20);

/// GETs a server-rendered page: its status and body.
///
/// Pages once, rarely, never finished while tests ran side by side. The cause was
/// Leptos's route listing, which switches resource loading off for the whole process
/// while it runs: every test server listed the routes again, and a page of another
/// test whose data first loaded in that moment waited forever. Routes are now listed
/// once per process (`server::http::router`), and `pages_finish_while_other_servers_start`
/// keeps it so.
pub async fn render_page(client: &reqwest::Client, url: &str) -> (u16, String) {
    let fetch = async {
        let response = client.get(url).timeout(PAGE_WAIT).send().await?;
        let status = response.status().as_u16();
        Ok::<_, reqwest::Error>((status, response.text().await?))
    };
    fetch
        .await
        .unwrap_or_else(|error| panic!("GET {url}: {error}"))
}

/// How long a test server's provider tests wait for a worker pool, and for its report.
/// A claim is a wake and one update, but a full test run keeps both cores busy: the
/// claim bound is long enough not to refuse a started pool that is merely slow.
pub const PROVIDER_TEST_WAITS: ProviderTestWaits = ProviderTestWaits {
    claim: std::time::Duration::from_secs(8),
    check: std::time::Duration::from_secs(60),
    create: std::time::Duration::from_secs(180),
};

pub struct TestApp {
    pub address: String,
    pub client: reqwest::Client,
    /// The server's queue (the one its service and streams use) and its store.
    pub queue: Queue,
    pub store: Store,
    // Dropped last: removes the database after the server stopped using it.
    _db: TestDatabase,
    _site: tempfile::TempDir,
}

impl TestApp {
    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.client
            .get(format!("{}{path}", self.address))
            .send()
            .await
            .expect("request reaches the test server")
    }
}

/// A migrated database behind a running server.
pub async fn spawn_app(backend: Backend) -> TestApp {
    let (db, store) = migrated(backend).await;
    spawn_with_store(db, store).await
}

/// A server that believes `X-Forwarded-For` from 127.0.0.1, as behind a reverse proxy
/// on the same machine.
pub async fn spawn_app_behind_proxy(backend: Backend) -> TestApp {
    let (db, store) = migrated(backend).await;
    let proxies = TrustedProxies(std::sync::Arc::from(["127.0.0.1"
        .parse::<std::net::IpAddr>()
        .unwrap()]));
    spawn_configured(db, store, server::sessions::ABSOLUTE_EXPIRY_MS, proxies).await
}

async fn migrated(backend: Backend) -> (TestDatabase, Store) {
    let db = TestDatabase::new(backend).await;
    let store = Store::open(&db.url)
        .await
        .expect("store opens")
        .with_secret_key(engine::testing::test_secret_key());
    (db, store)
}

/// A server over `store` exactly as given (e.g. not migrated).
pub async fn spawn_with_store(db: TestDatabase, store: Store) -> TestApp {
    spawn_with_session_age(db, store, server::sessions::ABSOLUTE_EXPIRY_MS).await
}

/// A server whose sessions end `session_max_age_ms` after sign-in.
pub async fn spawn_with_session_age(
    db: TestDatabase,
    store: Store,
    session_max_age_ms: i64,
) -> TestApp {
    spawn_configured(db, store, session_max_age_ms, TrustedProxies::default()).await
}

async fn spawn_configured(
    db: TestDatabase,
    store: Store,
    session_max_age_ms: i64,
    trusted_proxies: TrustedProxies,
) -> TestApp {
    let site = tempfile::tempdir().expect("site dir");
    let bundle = test_bundle();
    // No worker pool runs unless a test starts one: a provider test waits for one
    // briefly (see `dedicated_workers`).
    let queue = Queue::new(store.clone());
    let service = Service::new(
        queue.clone(),
        ResourceFiles::in_directory(site.path().join("resources")),
    )
    .with_provider_test_waits(PROVIDER_TEST_WAITS);
    let sessions = SessionBackend::connect(&db.url)
        .await
        .expect("session store opens");
    let state = AppState {
        leptos_options: leptos_options(&bundle),
        bundle,
        store: store.clone(),
        service,
        sessions,
        secure_cookies: false,
        session_max_age_ms,
        trusted_proxies,
        metrics: server::metrics::Metrics::install(),
        job_feeds: server::api::JobFeeds::default(),
        sso: Default::default(),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("free port");
    let address = format!("http://{}", listener.local_addr().expect("bound address"));
    tokio::spawn(async move {
        axum::serve(
            listener,
            router(state).into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
        .expect("test server runs");
    });
    TestApp {
        address,
        client: reqwest::Client::new(),
        queue,
        store,
        _db: db,
        _site: site,
    }
}

/// The browser bundle test servers serve: the build's file names with stand-in bytes
/// (these tests do not hydrate), the wasm also in both precompressed forms.
pub fn test_bundle() -> Bundle {
    Bundle::from_files(
        [
            ("corral.js", "export default async function init() {}"),
            ("corral_bg.wasm", "wasm bytes"),
            ("corral_bg.wasm.br", "wasm bytes in brotli"),
            ("corral_bg.wasm.gz", "wasm bytes in gzip"),
            ("__wasm_split.js", "export const loaders = {};"),
            ("corral.css", "body { margin: 0 }"),
            ("favicon.svg", "<svg xmlns=\"http://www.w3.org/2000/svg\"/>"),
        ]
        .map(|(name, bytes)| (name.to_owned(), Bytes::from_static(bytes.as_bytes()))),
    )
}

/// A user of the test server with an API token.
pub struct ApiUser {
    pub id: String,
    pub tenant_id: String,
    pub token: String,
}

pub const PASSWORD: &str = "correct horse battery staple";

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.address)
    }

    /// Creates a tenant (unless it is `default`) and a user in it with a token.
    pub async fn user(&self, username: &str, role: Role, tenant: &str) -> ApiUser {
        if tenant != "default" && self.store.tenant_by_name(tenant).await.is_err() {
            self.store
                .create_tenant(&NewTenant {
                    name: tenant.to_owned(),
                    max_clusters: None,
                    max_nodes: None,
                    provider_types: NewTenant::all_provider_types(),
                })
                .await
                .unwrap();
        }
        let user = engine::accounts::create_user(
            &self.store,
            username,
            role,
            Some(tenant),
            &Password::new(PASSWORD),
        )
        .await
        .unwrap();
        let service = Service::new(
            self.queue.clone(),
            ResourceFiles::in_directory(self._site.path().join("resources")),
        );
        let caller = Caller::new(Principal::from_user(&user), None);
        let token = service
            .create_token(
                &caller,
                &TokenRequest {
                    name: "tests".to_owned(),
                    expires_in_seconds: None,
                    renew_on_use: false,
                    scope: Default::default(),
                },
            )
            .await
            .unwrap();
        ApiUser {
            id: user.id,
            tenant_id: user.tenant_id,
            token: token.secret,
        }
    }

    pub async fn call(
        &self,
        user: &ApiUser,
        method: reqwest::Method,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> reqwest::Response {
        let mut request = self
            .client
            .request(method, self.url(path))
            .bearer_auth(&user.token);
        if let Some(body) = body {
            request = request.json(body);
        }
        request
            .send()
            .await
            .expect("request reaches the test server")
    }

    /// [`TestApp::call`] read as its status and JSON body (`null` when the body is not
    /// JSON).
    pub async fn call_json(
        &self,
        user: &ApiUser,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> (u16, serde_json::Value) {
        json_of(self.call(user, method, path, body.as_ref()).await).await
    }

    /// A browser-like client signed in as `username`, and its CSRF token.
    pub async fn browser(&self, username: &str) -> (reqwest::Client, String) {
        let client = reqwest::Client::builder()
            .cookie_store(true)
            .build()
            .unwrap();
        let response = client
            .post(self.url("/api/v1/session"))
            .json(&serde_json::json!({"username": username, "password": PASSWORD}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let body: serde_json::Value = response.json().await.unwrap();
        let csrf = body["csrf_token"].as_str().unwrap().to_owned();
        (client, csrf)
    }
}

/// The lifecycle test catalog (`testdata/lifecycle/catalog.json`) as JSON.
pub fn lifecycle_catalog() -> serde_json::Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/lifecycle/catalog.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A tenant admin of `tenant` (created if missing) who has imported the lifecycle
/// catalog.
pub async fn with_catalog(app: &TestApp, tenant: &str) -> ApiUser {
    let admin = app
        .user(
            &format!("{tenant}-admin"),
            engine::store::users::Role::TenantAdmin,
            tenant,
        )
        .await;
    let response = app
        .call(
            &admin,
            reqwest::Method::POST,
            "/api/v1/catalog/import",
            Some(&lifecycle_catalog()),
        )
        .await;
    assert_eq!(response.status(), 200);
    admin
}

/// A response's status and JSON body (`null` when the body is not JSON).
pub async fn json_of(response: reqwest::Response) -> (u16, serde_json::Value) {
    let status = response.status().as_u16();
    (
        status,
        response.json().await.unwrap_or(serde_json::Value::Null),
    )
}

/// A worker pool running the tenants of `scope` over the test server's database and
/// building clusters on real `local` nodes under `nodes`; ready to claim when returned.
pub async fn scoped_local_pool(
    app: &TestApp,
    nodes: &std::path::Path,
    scope: engine::queue::WorkerScope,
) -> engine::worker::WorkerPool {
    use engine::execute::{Executor, ExecutorSettings, Providers};
    use engine::worker::{WorkerPool, WorkerSettings};
    let providers = Providers::new().with(std::sync::Arc::new(
        engine::provider::LocalProvider::new(nodes).unwrap(),
    ));
    let executor = Executor::new(
        app.queue.clone(),
        providers,
        std::sync::Arc::new(engine::ssh::SessionPool::new(
            engine::ssh::PoolConfig::default(),
        )),
        engine::resources::ResourceFiles::in_directory(nodes.join("resources")),
        ExecutorSettings::default(),
    );
    let pool = WorkerPool::start(
        executor,
        WorkerSettings {
            scope,
            idle_poll: std::time::Duration::from_millis(50),
            ..WorkerSettings::default()
        },
    );
    pool.ready().await;
    pool
}

/// [`scoped_local_pool`] for every tenant.
pub async fn local_pool(app: &TestApp, nodes: &std::path::Path) -> engine::worker::WorkerPool {
    scoped_local_pool(app, nodes, engine::queue::WorkerScope::Shared).await
}
