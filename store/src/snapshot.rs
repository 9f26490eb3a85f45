//! Consistent copies of an SQLite database taken while it is in use, and the checks a
//! copy passes before it replaces a database (`corral admin backup` and `restore`).
//!
//! `VACUUM INTO` reads the database in one read transaction, so the copy is what a
//! reader saw at one moment, however busy the writers are, and it is compacted. A
//! PostgreSQL database is backed up with PostgreSQL's own tools instead (see
//! docs/operations.md).

use std::path::Path;

use super::{migrations, Backend, Store, StoreError};

/// What [`Store::check_snapshot`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotCheck {
    /// `PRAGMA integrity_check`'s findings; empty when the file is sound.
    pub integrity_problems: Vec<String>,
    /// Schema versions the copy has that this binary does not know (the copy comes
    /// from a newer Corral).
    pub unknown_migrations: Vec<i64>,
    /// Schema versions this binary knows that are applied in the copy.
    pub applied_migrations: usize,
}

impl SnapshotCheck {
    pub fn is_usable(&self) -> bool {
        self.integrity_problems.is_empty() && self.unknown_migrations.is_empty()
    }
}

impl Store {
    /// Writes a consistent, compacted copy of this SQLite database to `path`, which
    /// must not exist. Writers go on meanwhile.
    pub async fn snapshot_into(&self, path: &Path) -> Result<(), StoreError> {
        self.require_sqlite("a snapshot")?;
        let target = path.to_str().ok_or_else(|| StoreError::Unsupported {
            what: format!("a snapshot path that is not UTF-8: {}", path.display()),
        })?;
        sqlx::query("VACUUM INTO $1")
            .bind(target)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Checks that this SQLite database (a copy about to be restored) is sound and
    /// holds no schema newer than this binary's.
    pub async fn check_snapshot(&self) -> Result<SnapshotCheck, StoreError> {
        self.require_sqlite("a snapshot check")?;
        let findings: Vec<String> = sqlx::query_scalar("PRAGMA integrity_check")
            .fetch_all(&self.pool)
            .await?;
        let integrity_problems = findings
            .into_iter()
            .filter(|finding| finding != "ok")
            .collect();
        let known: Vec<i64> = migrations::migrator(self.backend)
            .iter()
            .map(|migration| migration.version)
            .collect();
        let applied: Vec<i64> =
            sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success = TRUE")
                .fetch_all(&self.pool)
                .await?;
        Ok(SnapshotCheck {
            integrity_problems,
            unknown_migrations: applied
                .iter()
                .copied()
                .filter(|version| !known.contains(version))
                .collect(),
            applied_migrations: applied
                .iter()
                .filter(|version| known.contains(version))
                .count(),
        })
    }

    fn require_sqlite(&self, what: &str) -> Result<(), StoreError> {
        match self.backend {
            Backend::Sqlite => Ok(()),
            Backend::Postgres => Err(StoreError::Unsupported {
                what: format!("{what} of a PostgreSQL database (use pg_dump)"),
            }),
        }
    }
}
