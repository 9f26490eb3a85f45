//! The store: one query layer over two database backends.
//!
//! SQLite (a file in the data dir, WAL mode) is the embedded default that needs
//! nothing installed; PostgreSQL serves several Corral processes sharing one control
//! plane. Both go through sqlx's `Any` driver so every query is written once; the few
//! places where dialects differ branch on [`Backend`]. Portable column types only:
//! ids are UUID strings, times are Unix milliseconds (`BIGINT`).

mod database_url;
mod migrations;
pub mod tenants;
pub mod users;

use std::time::Duration;

use sqlx::any::{AnyPoolOptions, AnyQueryResult};
use sqlx::{AnyPool, Executor};

pub use database_url::{Backend, DatabaseUrl, DatabaseUrlError};
pub use migrations::MigrationStatus;

/// Everything that can go wrong talking to the database.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Url(#[from] DatabaseUrlError),
    #[error("cannot connect to {url}: {source}")]
    Connect {
        /// Redacted: never holds a password.
        url: String,
        #[source]
        source: sqlx::Error,
    },
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("{0} not found")]
    NotFound(String),
    #[error("{0} already exists")]
    Conflict(String),
    #[error("database error: {0}")]
    Query(#[from] sqlx::Error),
    #[error("corrupt row in {table}: {reason}")]
    CorruptRow { table: &'static str, reason: String },
}

/// A connection pool plus the knowledge of which backend it talks to.
#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Connects to `url` (creating the SQLite file if missing). Does not migrate.
    pub async fn connect(url: &DatabaseUrl) -> Result<Self, StoreError> {
        sqlx::any::install_default_drivers();
        let backend = url.backend();
        let options = AnyPoolOptions::new()
            .max_connections(match backend {
                // SQLite has one writer; a few readers are enough and keep lock waits short.
                Backend::Sqlite => 4,
                Backend::Postgres => 16,
            })
            .acquire_timeout(Duration::from_secs(10))
            .after_connect(move |conn, _meta| {
                Box::pin(async move {
                    if backend == Backend::Sqlite {
                        conn.execute(
                            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
                             PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000;",
                        )
                        .await?;
                    }
                    Ok(())
                })
            });
        let pool = options
            .connect(&url.connect_string())
            .await
            .map_err(|source| StoreError::Connect {
                url: url.redacted(),
                source,
            })?;
        Ok(Self { pool, backend })
    }

    /// Connects and applies every pending migration: what `corral serve` does at start.
    pub async fn open(url: &DatabaseUrl) -> Result<Self, StoreError> {
        let store = Self::connect(url).await?;
        store.migrate().await?;
        Ok(store)
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// Applies pending migrations for this backend. Safe to run concurrently from
    /// several processes: sqlx takes an advisory lock on PostgreSQL.
    pub async fn migrate(&self) -> Result<(), StoreError> {
        migrations::migrator(self.backend).run(&self.pool).await?;
        Ok(())
    }

    /// Whether the database answers and every migration this binary knows is applied.
    pub async fn migration_status(&self) -> Result<MigrationStatus, StoreError> {
        migrations::status(self).await
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// Current time as Unix milliseconds, the store's time unit.
pub(crate) fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Maps a unique-constraint violation to [`StoreError::Conflict`] naming `what`.
pub(crate) fn conflict_on_unique(
    result: Result<AnyQueryResult, sqlx::Error>,
    what: impl FnOnce() -> String,
) -> Result<AnyQueryResult, StoreError> {
    match result {
        Err(sqlx::Error::Database(db)) if db.is_unique_violation() => {
            Err(StoreError::Conflict(what()))
        }
        other => Ok(other?),
    }
}
