//! The store: one query layer over two database backends.
//!
//! SQLite (a file in the data dir, WAL mode) is the embedded default that needs
//! nothing installed; PostgreSQL serves several Corral processes sharing one control
//! plane. Both go through sqlx's `Any` driver so every query is written once; the few
//! places where dialects differ branch on [`Backend`]. Portable column types only:
//! ids are UUID strings, times are Unix milliseconds (`BIGINT`).
//!
//! Rows are read with `#[derive(sqlx::FromRow)]`: states decode as their enums
//! (`api_types`' `sqlx` feature), integer flags and ports through [`IntFlag`] and
//! [`PortNumber`], so a stored value the Rust type cannot hold is
//! [`StoreError::CorruptColumn`] naming the column, never a default. Lists go through [`Listing`], which pages in SQL ([`Store::windowed`]:
//! `LIMIT`/`OFFSET` plus a count). Row locks are written by [`Backend::lock_clause`].
//! SQL lives here and in the `queue` crate, nowhere else.
//!
//! Also here, because rows carry them: [`secrets`] (the server's key and what it seals),
//! [`credentials`] (provider credentials that cannot be printed by accident),
//! [`views`] (each row's view in the wire contract), and `testing` (feature
//! `test-support`: throwaway databases and rows). The wakes of a job's followers are
//! not here: the `queue` crate's `Queue` handle owns them, as the only writer of jobs.
//!
//! The bottom of Corral's I/O crates: it uses only `domain` and `api-types`; `queue`,
//! `nodes` and the engine stand on it, and nothing here names them.

pub mod approvals;
pub mod audit;
pub mod catalog;
pub mod client_keys;
pub mod clusters;
mod columns;
pub mod cost;
pub mod credentials;
mod database_url;
mod found;
pub mod gauges;
pub mod health;
pub mod history;
pub mod hooks;
pub mod login_attempts;
mod migrations;
pub mod pool_hosts;
pub mod provider_credentials;
pub mod provider_tests;
pub mod reachability;
pub mod resource_types;
pub mod resources;
pub mod rollouts;
pub mod secrets;
pub mod snapshot;
pub mod sso;
pub mod sync;
pub mod tenants;
pub mod terminal_recordings;
pub mod tokens;
pub mod user_keys;
pub mod users;
pub mod views;
mod worker_scope;

#[cfg(feature = "test-support")]
pub mod testing;

use std::sync::Arc;
use std::time::Duration;

use sqlx::any::{AnyPoolOptions, AnyQueryResult, AnyRow};

use crate::secrets::SecretKey;
use sqlx::{Any, AnyConnection, AnyPool, Connection, Executor, FromRow, Transaction};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a statement waits for a PostgreSQL connection before it fails (as
/// unreachable: see [`reachability::classify`]). While the server is down the pool
/// keeps retrying refused connections until then, so this is how long a request
/// takes to answer 503 during an outage: a few seconds, not a hang. Also the bound
/// for the session store's pool.
pub const POSTGRES_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

pub use columns::column_value;
pub use columns::{IntFlag, PortNumber};
pub use database_url::{Backend, DatabaseUrl, DatabaseUrlError, RowLock};
pub use migrations::MigrationStatus;
pub use worker_scope::WorkerScope;

/// Everything that can go wrong talking to the database.
///
/// Variants wrapping sqlx errors print them through [`describe`] and do not chain
/// them as `source`: sqlx repeats its message in its own source chain, which would
/// otherwise show every cause twice in a one-line error report.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Url(#[from] DatabaseUrlError),
    #[error("cannot connect to {url}: {}", describe(.cause))]
    Connect {
        /// Redacted: never holds a password.
        url: String,
        cause: sqlx::Error,
    },
    #[error("cannot connect to {url}: no answer within {seconds} s")]
    ConnectTimeout { url: String, seconds: u64 },
    #[error("database migration failed: {}", describe_migrate(.0))]
    Migrate(sqlx::migrate::MigrateError),
    /// The database holds migrations this binary does not have: a newer Corral
    /// migrated it. Running on would misread its tables, so nothing starts.
    #[error(
        "the database was migrated by a newer Corral (migration {newest_applied}); this \
         binary knows migrations up to {newest_known}: upgrade this server to that release \
         (or restore a backup taken before the upgrade)"
    )]
    NewerSchema {
        newest_applied: i64,
        newest_known: i64,
    },
    /// The database's disk is full (SQLite's `SQLITE_FULL`, PostgreSQL's `disk_full`,
    /// or `ENOSPC` from a file): the write did not happen; reads still work.
    #[error("the database's disk is full: {cause}")]
    StorageFull { cause: String },
    #[error("{0} not found")]
    NotFound(String),
    #[error("{0} already exists")]
    Conflict(String),
    #[error("database error: {}", describe(.0))]
    Query(sqlx::Error),
    #[error("corrupt row in {table}: {reason}")]
    CorruptRow { table: &'static str, reason: String },
    /// A stored value its row type cannot hold (an unknown state word, a negative
    /// node number): read through a row's derived decoder.
    #[error("corrupt value in column {column}: {reason}")]
    CorruptColumn { column: String, reason: String },
    #[error("this process has no secret key to seal or open stored secrets with")]
    NoSecretKey,
    #[error(transparent)]
    Secret(#[from] crate::secrets::SecretError),
    #[error("not supported: {what}")]
    Unsupported { what: String },
}

impl StoreError {
    /// Whether the database could not be reached (see [`reachability::classify`]):
    /// the call may succeed once it is back.
    pub fn is_unreachable(&self) -> bool {
        use reachability::{classify, Failure};
        match self {
            StoreError::ConnectTimeout { .. } => true,
            StoreError::Connect { cause, .. } | StoreError::Query(cause) => {
                classify(cause) == Failure::Unreachable
            }
            StoreError::Migrate(
                sqlx::migrate::MigrateError::Execute(cause)
                | sqlx::migrate::MigrateError::ExecuteMigration(cause, _),
            ) => classify(cause) == Failure::Unreachable,
            _ => false,
        }
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(err: sqlx::Error) -> Self {
        match err {
            // What a row's `try_from` conversion refused: the data is wrong, not the query.
            sqlx::Error::ColumnDecode { index, source } => StoreError::CorruptColumn {
                column: index.trim_matches('"').to_owned(),
                reason: source.to_string(),
            },
            full if is_storage_full(&full) => StoreError::StorageFull {
                cause: describe(&full),
            },
            other => StoreError::Query(other),
        }
    }
}

impl From<sqlx::migrate::MigrateError> for StoreError {
    fn from(err: sqlx::migrate::MigrateError) -> Self {
        StoreError::Migrate(err)
    }
}

/// SQLite's primary result code for a full disk (`SQLITE_FULL`).
const SQLITE_FULL: i64 = 13;
/// PostgreSQL's SQLSTATE for a full disk (`disk_full`).
const POSTGRES_DISK_FULL: &str = "53100";
/// `ENOSPC` on Linux.
const NO_SPACE_LEFT: i32 = 28;

/// Whether `err` says the database's disk is full. SQLite reports its (extended)
/// result code as the error's code; the primary code is its low byte.
fn is_storage_full(err: &sqlx::Error) -> bool {
    match err {
        sqlx::Error::Database(db) => db.code().is_some_and(|code| {
            code == POSTGRES_DISK_FULL
                || code
                    .parse::<i64>()
                    .is_ok_and(|number| number & 0xff == SQLITE_FULL)
        }),
        sqlx::Error::Io(io) => io.raw_os_error() == Some(NO_SPACE_LEFT),
        _ => false,
    }
}

impl StoreError {
    /// Whether the database's disk is full (see [`StoreError::StorageFull`]).
    pub fn is_storage_full(&self) -> bool {
        matches!(self, StoreError::StorageFull { .. })
    }
}

/// The most specific message of a sqlx error, once.
pub fn describe(err: &sqlx::Error) -> String {
    match err {
        sqlx::Error::Database(db) => db.message().to_owned(),
        sqlx::Error::Io(io) => io.to_string(),
        other => other.to_string(),
    }
}

fn describe_migrate(err: &sqlx::migrate::MigrateError) -> String {
    match err {
        // Found by sqlx when a newer Corral migrated the database between our check
        // and the run (see [`Store::migrate`]).
        sqlx::migrate::MigrateError::VersionMissing(version) => format!(
            "the database was migrated by a newer Corral (migration {version} is unknown to \
             this binary): upgrade this server to that release"
        ),
        sqlx::migrate::MigrateError::Execute(inner)
        | sqlx::migrate::MigrateError::ExecuteMigration(inner, _) => describe(inner),
        other => other.to_string(),
    }
}

/// A connection pool plus the knowledge of which backend it talks to.
#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    /// Whose turn it is to write, among this process's write transactions (SQLite):
    /// held by the code at the location it keeps, so a turn that is never given back
    /// can be named (see [`Store::write_turn`]).
    writer: Arc<tokio::sync::Mutex<()>>,
    /// Where the current (or last) turn was taken.
    turn_taken_at: Arc<std::sync::Mutex<Option<&'static std::panic::Location<'static>>>>,
    /// Seals the secrets some rows hold; without it they cannot be written or read.
    secret_key: Option<Arc<SecretKey>>,
    /// The operator's limits for docker nodes, which previews check hardware types
    /// against (kept here because every operation has the store).
    docker_limits: domain::node_limits::DockerLimits,
    /// Where hooks may send (the operator's `--hook-allow` ranges): kept here because
    /// gates are called from operations, which all have the store.
    hook_network: Arc<domain::network::HookNetwork>,
    /// Whether the database answers, as this process's calls found (see
    /// [`reachability::Reachability`]).
    reachability: Arc<reachability::Reachability>,
}

/// This process's turn to write to a SQLite database, held for the life of a write
/// transaction (and empty on PostgreSQL, whose writers do not queue).
///
/// SQLite has one writer. Without turns, the process's writers contend for its lock
/// inside SQLite, whose busy handler sleeps 1 ms, then 2, then 5… before trying again:
/// under load a good part of every second was spent asleep with the lock free. Taking
/// turns here hands the lock straight to the next writer. Other processes on the same
/// file still meet SQLite's busy handler.
#[must_use = "the turn lasts as long as it is held"]
pub struct WriteTurn(#[allow(dead_code)] Option<tokio::sync::OwnedMutexGuard<()>>);

/// How long a writer waits for its turn before it says so (and again each time as
/// long): turns last one transaction, so a wait this long means a holder that is stuck.
const TURN_WAIT_WARNING: std::time::Duration = std::time::Duration::from_secs(30);

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
            .acquire_timeout(match backend {
                // A local file: a wait means queued writers, not an outage.
                Backend::Sqlite => CONNECT_TIMEOUT,
                Backend::Postgres => POSTGRES_ACQUIRE_TIMEOUT,
            })
            // A connection sqlx still counts inside a transaction is never handed out
            // again: when SQLite refuses a COMMIT (a full disk) it rolls the transaction
            // back itself, sqlx's own ROLLBACK then fails and its count stays up, and
            // every later `begin` on that connection would fail for good ("begin_with
            // at non-zero transaction depth").
            .before_acquire(|conn, _meta| Box::pin(async move { Ok(!conn.is_in_transaction()) }))
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
        // One direct connection first: a pool only reports "timed out" when the
        // server refuses or does not exist, while a connection says why.
        let probe = tokio::time::timeout(
            CONNECT_TIMEOUT,
            AnyConnection::connect(&url.connect_string()),
        )
        .await
        .map_err(|_| StoreError::ConnectTimeout {
            url: url.redacted(),
            seconds: CONNECT_TIMEOUT.as_secs(),
        })?
        .map_err(|cause| StoreError::Connect {
            url: url.redacted(),
            cause,
        })?;
        probe.close().await.ok();
        let pool = options
            .connect(&url.connect_string())
            .await
            .map_err(|cause| StoreError::Connect {
                url: url.redacted(),
                cause,
            })?;
        Ok(Self {
            pool,
            backend,
            writer: Arc::default(),
            turn_taken_at: Arc::default(),
            secret_key: None,
            docker_limits: domain::node_limits::DockerLimits::default(),
            hook_network: Arc::default(),
            reachability: Arc::default(),
        })
    }

    /// Starts a transaction that may write, in this process's turn (see [`WriteTurn`]);
    /// SQLite takes its write lock up front so a read-then-write transaction never fails
    /// on a stale snapshot. Keep the turn until the transaction ends.
    #[track_caller]
    pub fn begin_write(
        &self,
    ) -> impl std::future::Future<Output = Result<(WriteTurn, Transaction<'static, Any>), StoreError>>
           + Send
           + '_ {
        let turn = self.write_turn();
        async move {
            Ok(match self.backend {
                Backend::Sqlite => {
                    let turn = turn.await;
                    (turn, self.pool.begin_with("BEGIN IMMEDIATE").await?)
                }
                Backend::Postgres => (WriteTurn(None), self.pool.begin().await?),
            })
        }
    }

    /// This process's turn to write one statement outside a transaction (see
    /// [`WriteTurn`]): a statement that waited inside SQLite's busy handler instead
    /// would hold a pooled connection for as long, and under load the handler's sleeps
    /// reached seconds and starved the pool. Never take it while holding one.
    ///
    /// The turn remembers where it was taken; a writer that waits longer than
    /// [`TURN_WAIT_WARNING`] logs where it waits and where the holder took the turn.
    #[track_caller]
    pub fn write_turn(&self) -> impl std::future::Future<Output = WriteTurn> + Send + '_ {
        let wanted_at = std::panic::Location::caller();
        async move {
            if self.backend == Backend::Postgres {
                return WriteTurn(None);
            }
            let taking = self.writer.clone().lock_owned();
            tokio::pin!(taking);
            let started = std::time::Instant::now();
            let guard = loop {
                match tokio::time::timeout(TURN_WAIT_WARNING, &mut taking).await {
                    Ok(guard) => break guard,
                    Err(_) => {
                        let held_at = crate::sync::lock_unpoisoned(&self.turn_taken_at)
                            .map_or_else(|| "unknown".to_owned(), ToString::to_string);
                        tracing::warn!(
                            waited_s = started.elapsed().as_secs(),
                            at = %wanted_at,
                            held_by = %held_at,
                            "waiting for SQLite's write turn"
                        );
                    }
                }
            };
            *crate::sync::lock_unpoisoned(&self.turn_taken_at) = Some(wanted_at);
            WriteTurn(Some(guard))
        }
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

    /// This store, sealing and opening stored secrets with `key` (see [`crate::secrets`]).
    pub fn with_secret_key(mut self, key: SecretKey) -> Self {
        self.secret_key = Some(Arc::new(key));
        self
    }

    pub fn secret_key(&self) -> Result<&SecretKey, StoreError> {
        self.secret_key.as_deref().ok_or(StoreError::NoSecretKey)
    }

    /// This store, with previews checking docker nodes against `limits` (the
    /// operator's; see [`domain::node_limits::DockerLimits`]).
    #[must_use]
    pub fn with_docker_limits(mut self, limits: domain::node_limits::DockerLimits) -> Self {
        self.docker_limits = limits;
        self
    }

    /// The operator's limits for docker nodes.
    pub fn docker_limits(&self) -> &domain::node_limits::DockerLimits {
        &self.docker_limits
    }

    /// This store, with hooks sent only where `network` permits.
    #[must_use]
    pub fn with_hook_network(mut self, network: domain::network::HookNetwork) -> Self {
        self.hook_network = Arc::new(network);
        self
    }

    /// Where hooks may send.
    pub fn hook_network(&self) -> &domain::network::HookNetwork {
        &self.hook_network
    }

    /// Whether the database answers, as this process's calls found.
    pub fn reachability(&self) -> &reachability::Reachability {
        &self.reachability
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// Applies pending migrations for this backend. Safe to run concurrently from
    /// several processes: sqlx takes an advisory lock on PostgreSQL.
    ///
    /// A database that a newer Corral migrated is refused first
    /// ([`StoreError::NewerSchema`]): during a rolling upgrade of several servers on one
    /// PostgreSQL, an old server that restarts must stop, not read tables whose meaning
    /// changed.
    pub async fn migrate(&self) -> Result<(), StoreError> {
        migrations::refuse_newer(self).await?;
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

/// A window of a list: `limit` rows from `offset`, in the list's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub offset: u32,
    pub limit: u32,
}

/// A list as SQL: `SELECT {columns} FROM {from} ORDER BY {order}`, where `from` holds
/// the table and its `WHERE` with `$1`, `$2`… bound to `params` in order.
pub struct Listing<'a> {
    pub columns: &'a str,
    pub from: &'a str,
    pub order: &'a str,
    pub params: &'a [&'a str],
}

impl Listing<'_> {
    /// The list's `SELECT`, in order, cut to `window` if one is given.
    fn select(&self, window: Option<Window>) -> String {
        let Listing {
            columns,
            from,
            order,
            ..
        } = self;
        let mut select = format!("SELECT {columns} FROM {from} ORDER BY {order}");
        // The window's numbers are written into the text (they are integers, not input
        // text); the list's own parameters are bound.
        if let Some(Window { offset, limit }) = window {
            select.push_str(&format!(" LIMIT {limit} OFFSET {offset}"));
        }
        select
    }
}

impl Store {
    /// The whole of `listing`, decoded, in its order: for lists a caller needs entire
    /// (a tenant's users for names, a cluster's catalog); pages use [`Store::windowed`].
    pub async fn listed<T>(&self, listing: &Listing<'_>) -> Result<Vec<T>, StoreError>
    where
        T: for<'r> FromRow<'r, AnyRow> + Send + Unpin,
    {
        self.decoded_rows(&listing.select(None), listing.params)
            .await
    }

    /// One window of `listing`, decoded, with how many rows the whole list has: a page
    /// reads its rows and a count, never the rest of the list.
    pub async fn windowed<T>(
        &self,
        listing: &Listing<'_>,
        window: Window,
    ) -> Result<(Vec<T>, u64), StoreError>
    where
        T: for<'r> FromRow<'r, AnyRow> + Send + Unpin,
    {
        let items = self
            .decoded_rows(&listing.select(Some(window)), listing.params)
            .await?;
        let count = format!("SELECT COUNT(*) FROM {}", listing.from);
        let mut total = sqlx::query_scalar::<_, i64>(&count);
        for param in listing.params {
            total = total.bind(*param);
        }
        let total = total.fetch_one(&self.pool).await?;
        Ok((items, u64::try_from(total).unwrap_or(0)))
    }

    async fn decoded_rows<T>(&self, select: &str, params: &[&str]) -> Result<Vec<T>, StoreError>
    where
        T: for<'r> FromRow<'r, AnyRow> + Send + Unpin,
    {
        let mut rows = sqlx::query_as::<_, T>(select);
        for param in params {
            rows = rows.bind(*param);
        }
        Ok(rows.fetch_all(&self.pool).await?)
    }
}

/// The wall clock in Unix milliseconds, for the few places that cannot take it as input.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Maps a unique-constraint violation to [`StoreError::Conflict`] naming `what`.
pub fn conflict_on_unique(
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
