//! Parsing and redacting database URLs.
//!
//! Users type these on the command line, so a bad one must produce a one-line error
//! that names the problem, and a good one must never be logged with its password.

use std::path::Path;

use url::Url;

/// Which database engine a URL points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// How a `SELECT` locks the rows it reads for the rest of its transaction
/// ([`Backend::lock_clause`]). SQLite has one writer at a time, so it needs none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowLock {
    /// Wait for rows another transaction holds, then hold them.
    Wait,
    /// Pass over rows another transaction holds (queues and pools: take the next one).
    SkipLocked,
    /// As `SkipLocked`, locking only the rows of the table aliased `t` in a join.
    SkipLockedOfT,
}

impl Backend {
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }

    /// The clause that ends a `SELECT` taking `lock` (with its leading space), or
    /// nothing on SQLite.
    pub fn lock_clause(self, lock: RowLock) -> &'static str {
        match (self, lock) {
            (Backend::Sqlite, _) => "",
            (Backend::Postgres, RowLock::Wait) => " FOR UPDATE",
            (Backend::Postgres, RowLock::SkipLocked) => " FOR UPDATE SKIP LOCKED",
            (Backend::Postgres, RowLock::SkipLockedOfT) => " FOR UPDATE OF t SKIP LOCKED",
        }
    }
}

/// Why a database URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DatabaseUrlError {
    #[error("invalid database URL {url:?}: {reason}")]
    Malformed { url: String, reason: String },
    #[error(
        "unsupported database URL scheme {scheme:?}: use sqlite://PATH or postgres://USER@HOST/DB"
    )]
    UnsupportedScheme { scheme: String },
}

/// A validated database URL.
#[derive(Clone, PartialEq, Eq)]
pub struct DatabaseUrl {
    raw: String,
    backend: Backend,
}

impl std::fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("DatabaseUrl")
            .field(&self.redacted())
            .finish()
    }
}

impl DatabaseUrl {
    pub fn parse(raw: &str) -> Result<Self, DatabaseUrlError> {
        let malformed = |reason: String| DatabaseUrlError::Malformed {
            url: redact(raw),
            reason,
        };
        let (scheme, _) = raw
            .split_once(':')
            .ok_or_else(|| malformed("expected SCHEME:... (sqlite:// or postgres://)".into()))?;
        let backend = match scheme {
            "sqlite" => Backend::Sqlite,
            "postgres" | "postgresql" => Backend::Postgres,
            other => {
                return Err(DatabaseUrlError::UnsupportedScheme {
                    scheme: other.to_owned(),
                })
            }
        };
        match backend {
            Backend::Sqlite => {
                if sqlite_path_of(raw).is_empty() {
                    return Err(malformed("no file path after sqlite://".into()));
                }
            }
            Backend::Postgres => {
                let url = Url::parse(raw).map_err(|err| malformed(err.to_string()))?;
                if url.host_str().unwrap_or_default().is_empty() {
                    return Err(malformed("no host".into()));
                }
            }
        }
        Ok(Self {
            raw: raw.to_owned(),
            backend,
        })
    }

    /// The embedded default: a SQLite file in `data_dir`.
    pub fn sqlite_file(path: &Path) -> Self {
        Self {
            raw: format!("sqlite://{}", path.display()),
            backend: Backend::Sqlite,
        }
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The URL with any password replaced by `***`, safe for logs and errors.
    pub fn redacted(&self) -> String {
        redact(&self.raw)
    }

    /// The SQLite database's file, for a `sqlite:` URL.
    pub fn sqlite_path(&self) -> Option<std::path::PathBuf> {
        match self.backend {
            Backend::Sqlite => Some(sqlite_path_of(&self.raw).into()),
            Backend::Postgres => None,
        }
    }

    /// What the driver is given: SQLite files are created when missing.
    pub fn connect_string(&self) -> String {
        match self.backend {
            Backend::Sqlite if !self.raw.contains("mode=") => {
                let sep = if self.raw.contains('?') { '&' } else { '?' };
                format!("{}{sep}mode=rwc", self.raw)
            }
            _ => self.raw.clone(),
        }
    }
}

/// The file path of a `sqlite:` URL, without its query.
fn sqlite_path_of(raw: &str) -> &str {
    raw.trim_start_matches("sqlite:")
        .trim_start_matches("//")
        .split('?')
        .next()
        .unwrap_or_default()
}

fn redact(raw: &str) -> String {
    // Done by hand rather than with `Url`, so that URLs too broken to parse are
    // still redacted in the error that reports them.
    let Some((scheme, rest)) = raw.split_once("://") else {
        return raw.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return raw.to_owned();
    };
    match rest[..at].split_once(':') {
        Some((user, _password)) => format!("{scheme}://{user}:***{}", &rest[at..]),
        None => raw.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_both_backends() {
        assert_eq!(
            DatabaseUrl::parse("sqlite:///tmp/x.db").unwrap().backend(),
            Backend::Sqlite
        );
        assert_eq!(
            DatabaseUrl::parse("postgres://u@127.0.0.1/db")
                .unwrap()
                .backend(),
            Backend::Postgres
        );
    }

    #[test]
    fn refuses_unknown_schemes_and_garbage() {
        assert!(matches!(
            DatabaseUrl::parse("mysql://x/y"),
            Err(DatabaseUrlError::UnsupportedScheme { .. })
        ));
        assert!(matches!(
            DatabaseUrl::parse("not a url"),
            Err(DatabaseUrlError::Malformed { .. })
        ));
        assert!(matches!(
            DatabaseUrl::parse("sqlite://"),
            Err(DatabaseUrlError::Malformed { .. })
        ));
    }

    #[test]
    fn never_shows_a_password() {
        let url = DatabaseUrl::parse("postgres://alice:s3cret@db.example/corral").unwrap();
        assert!(!url.redacted().contains("s3cret"));
        assert!(!format!("{url:?}").contains("s3cret"));
        let err = DatabaseUrl::parse("postgres://alice:s3cret@/corral").unwrap_err();
        assert!(!err.to_string().contains("s3cret"), "{err}");
    }

    #[test]
    fn sqlite_files_are_created_on_first_start() {
        let url = DatabaseUrl::sqlite_file(Path::new("/data/corral.db"));
        assert_eq!(url.connect_string(), "sqlite:///data/corral.db?mode=rwc");
    }
}
