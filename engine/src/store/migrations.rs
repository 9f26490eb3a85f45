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
    let known: Vec<i64> = migrator(store.backend)
        .iter()
        .filter(|m| !m.migration_type.is_down_migration())
        .map(|m| m.version)
        .collect();
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
    let applied_versions: Vec<i64> = if table_exists {
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success = TRUE")
            .fetch_all(&store.pool)
            .await?
    } else {
        Vec::new()
    };
    let applied = known
        .iter()
        .filter(|v| applied_versions.contains(v))
        .count();
    Ok(MigrationStatus {
        applied,
        known: known.len(),
    })
}
