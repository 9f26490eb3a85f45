//! Whether the database answers.
//!
//! [`classify`] is the one table of which errors mean the database cannot be reached
//! (it is down, restarting, refusing connections, or the connection to it broke)
//! rather than that it answered and refused one statement. Callers act on it: the API
//! and pages answer 503 with [`api_types::DATABASE_UNAVAILABLE`] instead of 500, and
//! the worker loops retry quietly until it answers again.
//!
//! [`Reachability`] is the process's note of an outage, shared through the
//! [`super::Store`]: loops that fail because the database cannot be reached say so
//! once per outage ([`Reachability::lost`]), and once when it is back
//! ([`Reachability::answered`]), instead of one log line per retry.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What a failed database call says about the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The database could not be reached, or the connection to it broke: the same call
    /// may succeed once it is back.
    Unreachable,
    /// The database (or sqlx) answered and refused or failed this call.
    Answered,
}

/// What `error` says about the database (the table; see the tests).
pub fn classify(error: &sqlx::Error) -> Failure {
    match error {
        // No connection within the acquire timeout: the pool kept trying to connect
        // (a refused connection is retried until then) or every connection was busy
        // that long; either way the caller should try again shortly.
        sqlx::Error::PoolTimedOut
        // Connection refused or reset, broken pipe, end of stream mid-answer.
        | sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        // The SQLite worker thread or the connection's background task died.
        | sqlx::Error::WorkerCrashed => Failure::Unreachable,
        sqlx::Error::Database(database) => match database.code() {
            Some(code) if sqlstate_unreachable(&code) => Failure::Unreachable,
            _ => Failure::Answered,
        },
        _ => Failure::Answered,
    }
}

/// Whether a PostgreSQL SQLSTATE means the server is going away or cannot take the
/// connection now (SQLite's result codes never do).
pub fn sqlstate_unreachable(code: &str) -> bool {
    // Class 08: connection exceptions.
    code.starts_with("08")
        || matches!(
            code,
            // admin_shutdown (a stop), crash_shutdown, cannot_connect_now (starting
            // up or shutting down)
            "57P01" | "57P02" | "57P03"
            // too_many_connections: it cannot take us now
            | "53300"
        )
}

/// A failure that is the database being away settles after this long without one,
/// once a call succeeds: until then the outage goes on (calls that were already
/// failing while it came back do not end and restart it).
const SETTLE: Duration = Duration::from_secs(1);

/// A new failure this soon after the database came back is the same outage: not said
/// again (nor its end). As long as the pool's acquire timeout, since a call that
/// began waiting for a connection during the outage may fail that much later.
const RELAPSE: Duration = super::POSTGRES_ACQUIRE_TIMEOUT;

/// The process's note of whether the database answers; cheap to consult.
#[derive(Debug, Default)]
pub struct Reachability {
    /// Locked unpoisoned: each change sets whole fields, none is left half-made.
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// When the current outage began; `None` while the database answers.
    down_since: Option<Instant>,
    /// When a call last failed for the database being away.
    failed_at: Option<Instant>,
    /// Whether this outage was said (a relapse is not).
    announced: bool,
    /// When the last outage ended.
    back_at: Option<Instant>,
}

impl Reachability {
    /// Notes that a call failed because the database cannot be reached: the first
    /// failure of an outage is logged with `error`, later ones are not.
    pub fn lost(&self, error: &dyn std::fmt::Display) {
        let now = Instant::now();
        let mut state = crate::sync::lock_unpoisoned(&self.state);
        state.failed_at = Some(now);
        if state.down_since.is_some() {
            return;
        }
        state.down_since = Some(now);
        let relapse = state
            .back_at
            .is_some_and(|back| now.duration_since(back) < RELAPSE);
        state.announced = !relapse;
        if state.announced {
            tracing::warn!(
                %error,
                "database unavailable: claiming no tasks and retrying quietly until it answers"
            );
        }
    }

    /// Logs that `doing` failed with `error`: once per outage when the database was
    /// away (`unreachable`, as the error's `is_unreachable` says), else as a warning.
    pub fn failed(&self, doing: &str, error: &dyn std::fmt::Display, unreachable: bool) {
        if unreachable {
            self.lost(error);
        } else {
            tracing::warn!(%error, "{doing} failed");
        }
    }

    /// Notes that a call succeeded: the end of an outage is logged once.
    pub fn answered(&self) {
        let mut state = crate::sync::lock_unpoisoned(&self.state);
        let Some(since) = state.down_since else {
            return;
        };
        if state
            .failed_at
            .is_some_and(|failed| failed.elapsed() < SETTLE)
        {
            return;
        }
        if state.announced {
            tracing::info!(
                down_s = since.elapsed().as_secs(),
                "database available again: claiming resumes"
            );
        }
        state.down_since = None;
        state.announced = false;
        state.back_at = Some(Instant::now());
    }

    /// Whether the database failed to answer and has not answered since.
    pub fn is_down(&self) -> bool {
        crate::sync::lock_unpoisoned(&self.state)
            .down_since
            .is_some()
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::io;

    use super::*;

    /// A database error with only a SQLSTATE, as a driver reports it.
    #[derive(Debug)]
    struct Coded(&'static str);

    impl std::fmt::Display for Coded {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "error {}", self.0)
        }
    }

    impl std::error::Error for Coded {}

    impl sqlx::error::DatabaseError for Coded {
        fn message(&self) -> &str {
            self.0
        }

        fn code(&self) -> Option<Cow<'_, str>> {
            Some(Cow::Borrowed(self.0))
        }

        fn as_error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
            self
        }

        fn as_error_mut(&mut self) -> &mut (dyn std::error::Error + Send + Sync + 'static) {
            self
        }

        fn into_error(self: Box<Self>) -> Box<dyn std::error::Error + Send + Sync + 'static> {
            self
        }

        fn kind(&self) -> sqlx::error::ErrorKind {
            sqlx::error::ErrorKind::Other
        }
    }

    fn io(kind: io::ErrorKind) -> sqlx::Error {
        sqlx::Error::Io(io::Error::new(kind, "test"))
    }

    fn coded(code: &'static str) -> sqlx::Error {
        sqlx::Error::Database(Box::new(Coded(code)))
    }

    #[test]
    fn errors_that_mean_the_database_is_away() {
        let table: Vec<(&str, sqlx::Error, Failure)> = vec![
            (
                "pool timeout",
                sqlx::Error::PoolTimedOut,
                Failure::Unreachable,
            ),
            (
                "connection refused",
                io(io::ErrorKind::ConnectionRefused),
                Failure::Unreachable,
            ),
            (
                "connection reset",
                io(io::ErrorKind::ConnectionReset),
                Failure::Unreachable,
            ),
            (
                "closed mid-answer",
                io(io::ErrorKind::UnexpectedEof),
                Failure::Unreachable,
            ),
            (
                "broken pipe",
                io(io::ErrorKind::BrokenPipe),
                Failure::Unreachable,
            ),
            (
                "worker crashed",
                sqlx::Error::WorkerCrashed,
                Failure::Unreachable,
            ),
            ("admin shutdown", coded("57P01"), Failure::Unreachable),
            ("crash shutdown", coded("57P02"), Failure::Unreachable),
            ("starting up", coded("57P03"), Failure::Unreachable),
            ("connection failure", coded("08006"), Failure::Unreachable),
            ("cannot connect", coded("08001"), Failure::Unreachable),
            ("too many connections", coded("53300"), Failure::Unreachable),
            ("unique violation", coded("23505"), Failure::Answered),
            ("serialization failure", coded("40001"), Failure::Answered),
            ("syntax error", coded("42601"), Failure::Answered),
            ("statement timeout", coded("57014"), Failure::Answered),
            ("sqlite busy", coded("5"), Failure::Answered),
            ("no row", sqlx::Error::RowNotFound, Failure::Answered),
            (
                "pool closed by us",
                sqlx::Error::PoolClosed,
                Failure::Answered,
            ),
            (
                "protocol",
                sqlx::Error::Protocol("unexpected message".into()),
                Failure::Answered,
            ),
        ];
        for (name, error, expected) in &table {
            assert_eq!(classify(error), *expected, "{name}");
        }
    }

    #[test]
    fn an_outage_is_down_until_a_call_succeeds_after_it_settled() {
        let reach = Reachability::default();
        assert!(!reach.is_down());
        reach.answered();
        assert!(!reach.is_down());
        reach.lost(&"connection refused");
        reach.lost(&"connection refused");
        assert!(reach.is_down());
        // A call that succeeds while others still fail does not end it yet.
        reach.answered();
        assert!(reach.is_down());
        crate::sync::lock_unpoisoned(&reach.state).failed_at =
            Some(Instant::now() - SETTLE - Duration::from_millis(1));
        reach.answered();
        assert!(!reach.is_down());
        // A failure right after is the same outage, noted but not said again.
        reach.lost(&"pool timed out");
        assert!(reach.is_down());
        assert!(!crate::sync::lock_unpoisoned(&reach.state).announced);
    }
}
