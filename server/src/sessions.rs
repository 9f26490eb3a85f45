//! Browser sessions: tower-sessions over the same database as everything else.
//!
//! tower-sessions' SQL stores take a typed sqlx pool, so a second, small pool is
//! opened from the same URL; [`SessionBackend`] picks the SQLite or PostgreSQL store
//! for it. Cookies are HttpOnly and SameSite=Lax (Secure when served over TLS),
//! expire after 8 hours idle, and a session older than 7 days is refused whatever
//! its activity (the absolute limit, checked by the API's authentication).
//!
//! Session ids are stored as a hash ([`stored_id`]): whoever reads the sessions
//! table (a backup, a leaked dump) learns no cookie that signs in. The cookie holds
//! the id; the table holds SHA-256 of it, cut to the id's 128 bits.

use async_trait::async_trait;
use engine::store::{Backend, DatabaseUrl};
use tower_sessions::cookie::SameSite;
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::{self, ExpiredDeletion, SessionStore};
use tower_sessions::{Expiry, SessionManagerLayer};
use tower_sessions_sqlx_store::sqlx::postgres::PgPoolOptions;
use tower_sessions_sqlx_store::sqlx::SqlitePool;
use tower_sessions_sqlx_store::{PostgresStore, SqliteStore};

/// How long a session lives without requests.
pub const IDLE_EXPIRY: time::Duration = time::Duration::hours(8);
/// How long a session lives at most, in milliseconds (the default of
/// `AppState::session_max_age_ms`).
pub const ABSOLUTE_EXPIRY_MS: i64 = 7 * 24 * 3600 * 1000;
/// The session cookie's name.
pub const COOKIE_NAME: &str = "corral_session";

/// The session store for whichever backend Corral runs on.
#[derive(Debug, Clone)]
pub enum SessionBackend {
    Sqlite(SqliteStore),
    Postgres(PostgresStore),
}

impl SessionBackend {
    /// Connects a small pool to `url` and creates the session table if missing.
    pub async fn connect(url: &DatabaseUrl) -> anyhow::Result<Self> {
        let backend = match url.backend() {
            Backend::Sqlite => {
                let pool = SqlitePool::connect(&url.connect_string()).await?;
                let store = SqliteStore::new(pool);
                store.migrate().await?;
                SessionBackend::Sqlite(store)
            }
            Backend::Postgres => {
                // As short a wait for a connection as the store's: while the database
                // is down a page answers 503 in seconds (see `page_guard`).
                let pool = PgPoolOptions::new()
                    .acquire_timeout(engine::store::POSTGRES_ACQUIRE_TIMEOUT)
                    .connect(&url.connect_string())
                    .await?;
                let store = PostgresStore::new(pool);
                store.migrate().await?;
                SessionBackend::Postgres(store)
            }
        };
        Ok(backend)
    }

    /// The session layer: HttpOnly, SameSite=Lax, Secure when `secure`.
    pub fn layer(self, secure: bool) -> SessionManagerLayer<Self> {
        SessionManagerLayer::new(self)
            .with_name(COOKIE_NAME)
            .with_http_only(true)
            .with_same_site(SameSite::Lax)
            .with_secure(secure)
            .with_expiry(Expiry::OnInactivity(IDLE_EXPIRY))
    }

    /// Deletes expired sessions every `period` until the task is dropped.
    pub fn spawn_cleanup(self, period: std::time::Duration) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval(period);
            loop {
                ticker.tick().await;
                if let Err(error) = self.delete_expired().await {
                    tracing::warn!(%error, "expired sessions not deleted");
                }
            }
        })
    }
}

/// The key a session is stored under: SHA-256 of its id, cut to 128 bits.
pub fn stored_id(id: &Id) -> Id {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(id.0.to_le_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    Id(i128::from_le_bytes(bytes))
}

/// `record` as stored: under the hash of its id.
fn stored_record(record: &Record) -> Record {
    let mut stored = record.clone();
    stored.id = stored_id(&record.id);
    stored
}

impl SessionBackend {
    async fn save_stored(&self, record: &Record) -> session_store::Result<()> {
        match self {
            SessionBackend::Sqlite(store) => store.save(record).await,
            SessionBackend::Postgres(store) => store.save(record).await,
        }
    }

    async fn load_stored(&self, id: &Id) -> session_store::Result<Option<Record>> {
        match self {
            SessionBackend::Sqlite(store) => store.load(id).await,
            SessionBackend::Postgres(store) => store.load(id).await,
        }
    }
}

#[async_trait]
impl SessionStore for SessionBackend {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        // A fresh random id whose hash is not taken yet (128 random bits: the loop
        // runs once in practice).
        while self.load_stored(&stored_id(&record.id)).await?.is_some() {
            record.id = Id::default();
        }
        self.save_stored(&stored_record(record)).await
    }

    async fn save(&self, record: &Record) -> session_store::Result<()> {
        self.save_stored(&stored_record(record)).await
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        Ok(self.load_stored(&stored_id(id)).await?.map(|mut record| {
            record.id = *id;
            record
        }))
    }

    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        let stored = stored_id(id);
        match self {
            SessionBackend::Sqlite(store) => store.delete(&stored).await,
            SessionBackend::Postgres(store) => store.delete(&stored).await,
        }
    }
}

#[async_trait]
impl ExpiredDeletion for SessionBackend {
    async fn delete_expired(&self) -> session_store::Result<()> {
        match self {
            SessionBackend::Sqlite(store) => store.delete_expired().await,
            SessionBackend::Postgres(store) => store.delete_expired().await,
        }
    }
}
