//! A private PostgreSQL server a fault test may stop and start (never the shared one
//! at 127.0.0.1:5432): `scripts/private-postgres.sh` runs it from a temp dir on a
//! free loopback port, with trust auth. Dropping the guard stops it (immediately)
//! and removes its files, whether the test passed or not.

use std::path::Path;
use std::process::Command;

use engine::store::DatabaseUrl;
use sqlx::{Connection, Executor, PgConnection};

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../scripts/private-postgres.sh"
);

/// How `pg_ctl stop` ends the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopMode {
    /// Connections are ended (`57P01 admin_shutdown`), then a clean shutdown.
    Fast,
    /// Every server process is killed at once, as in a crash; recovery at the next start.
    Immediate,
}

impl StopMode {
    fn word(self) -> &'static str {
        match self {
            StopMode::Fast => "fast",
            StopMode::Immediate => "immediate",
        }
    }
}

/// A running private PostgreSQL; stopped and removed when dropped.
pub struct PrivatePostgres {
    dir: tempfile::TempDir,
    pub port: u16,
}

impl PrivatePostgres {
    /// Makes a cluster in a new temp dir and starts it on a free 127.0.0.1 port.
    pub fn start() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("corral-private-pg-")
            .tempdir()
            .unwrap();
        // A port the kernel just handed out and took back: free unless another
        // process grabs it in between.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let postgres = Self { dir, port };
        postgres.run(&["start", &postgres.port.to_string()]);
        postgres
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn run(&self, args: &[&str]) {
        let output = Command::new(SCRIPT)
            .arg(args[0])
            .arg(self.path())
            .args(&args[1..])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "private-postgres.sh {args:?}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// Stops the server (`pg_ctl stop -m MODE`), waiting until it has.
    pub fn stop(&self, mode: StopMode) {
        self.run(&["stop", mode.word()]);
    }

    /// Starts the stopped server again on the same port, waiting until it accepts
    /// connections.
    pub fn start_again(&self) {
        self.run(&["start", &self.port.to_string()]);
    }

    /// The URL of database `name` on this server.
    pub fn url(&self, name: &str) -> DatabaseUrl {
        DatabaseUrl::parse(&format!(
            "postgres://postgres@127.0.0.1:{}/{name}",
            self.port
        ))
        .unwrap()
    }

    /// Creates database `name` and returns its URL.
    pub async fn create_database(&self, name: &str) -> DatabaseUrl {
        let admin = self.url("postgres");
        let mut conn = PgConnection::connect(&admin.connect_string())
            .await
            .unwrap();
        conn.execute(format!("CREATE DATABASE {name}").as_str())
            .await
            .unwrap();
        conn.close().await.ok();
        self.url(name)
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        let stopped = Command::new(SCRIPT)
            .args(["stop"])
            .arg(self.path())
            .arg("immediate")
            .status();
        if !matches!(stopped, Ok(status) if status.success()) {
            eprintln!(
                "warning: the private PostgreSQL in {} may still run",
                self.path().display()
            );
        }
    }
}
