//! `spawn_app()`: the real router on a free port over a fresh, migrated database.

use engine::store::{Backend, Store};
use engine::testing::TestDatabase;
use server::http::{leptos_options, router, AppState};

pub struct TestApp {
    pub address: String,
    pub client: reqwest::Client,
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
    let db = TestDatabase::new(backend).await;
    let store = Store::open(&db.url).await.expect("store opens");
    spawn_with_store(db, store).await
}

/// A server over `store` exactly as given (e.g. not migrated).
pub async fn spawn_with_store(db: TestDatabase, store: Store) -> TestApp {
    // Pages render without the browser bundle; these tests do not hydrate.
    let site = tempfile::tempdir().expect("site dir");
    let state = AppState {
        leptos_options: leptos_options(site.path()),
        store: store.clone(),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("free port");
    let address = format!("http://{}", listener.local_addr().expect("bound address"));
    tokio::spawn(async move {
        axum::serve(listener, router(state))
            .await
            .expect("test server runs");
    });
    TestApp {
        address,
        client: reqwest::Client::new(),
        store,
        _db: db,
        _site: site,
    }
}
