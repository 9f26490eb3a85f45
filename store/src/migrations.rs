//! Schema migrations, one embedded set per backend (their SQL dialects differ).

use sqlx::migrate::Migrator;

use super::{Backend, Store, StoreError};

static SQLITE: Migrator = sqlx::migrate!("../migrations/sqlite");
static POSTGRES: Migrator = sqlx::migrate!("../migrations/postgres");

pub(super) fn migrator(backend: Backend) -> &'static Migrator {
    match backend {
        Backend::Sqlite => &SQLITE,
        Backend::Postgres => &POSTGRES,
    }
}

/// How far the database schema is from what this binary expects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrationStatus {
    pub applied: usize,
    pub known: usize,
}

impl MigrationStatus {
    pub fn is_current(&self) -> bool {
        self.applied >= self.known
    }
}

pub(super) async fn status(store: &Store) -> Result<MigrationStatus, StoreError> {
    let known = known_versions(store.backend);
    let applied_versions = applied_versions(store).await?;
    let applied = known
        .iter()
        .filter(|v| applied_versions.contains(v))
        .count();
    Ok(MigrationStatus {
        applied,
        known: known.len(),
    })
}

/// The versions of this binary's migrations for `backend`, in order.
fn known_versions(backend: Backend) -> Vec<i64> {
    migrator(backend)
        .iter()
        .filter(|m| !m.migration_type.is_down_migration())
        .map(|m| m.version)
        .collect()
}

/// The versions applied to the database (none before its first migration).
async fn applied_versions(store: &Store) -> Result<Vec<i64>, StoreError> {
    let table_exists: bool = match store.backend {
        Backend::Sqlite => sqlx::query_scalar::<_, i64>(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'",
        )
        .fetch_one(&store.pool)
        .await?
            > 0,
        Backend::Postgres => sqlx::query_scalar::<_, i64>(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = '_sqlx_migrations'",
        )
        .fetch_one(&store.pool)
        .await?
            > 0,
    };
    if !table_exists {
        return Ok(Vec::new());
    }
    Ok(
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success = TRUE")
            .fetch_all(&store.pool)
            .await?,
    )
}

/// Refuses a database holding a migration this binary does not know: a newer Corral
/// applied it. sqlx would also stop (`VersionMissing`), but only after taking its lock
/// and with words that suggest a broken install rather than an old binary.
pub(super) async fn refuse_newer(store: &Store) -> Result<(), StoreError> {
    let known = known_versions(store.backend);
    let newest_unknown = applied_versions(store)
        .await?
        .into_iter()
        .filter(|version| !known.contains(version))
        .max();
    match newest_unknown {
        Some(newest_applied) => Err(StoreError::NewerSchema {
            newest_applied,
            newest_known: known.iter().copied().max().unwrap_or(0),
        }),
        None => Ok(()),
    }
}
