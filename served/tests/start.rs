//! The served crate against a stand-in for `corral` (tests/fake-corral.sh): readiness,
//! what a start keeps, logs per start, stopping and starting again, and the errors of a
//! process that exits first or never says it runs.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use served::{Error, Options, Role};

fn fake_corral() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fake-corral.sh")
}

/// The log at `path` once it holds `needle` (the process writes it on its own time).
fn log_with(path: &std::path::Path, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let log = std::fs::read_to_string(path).unwrap_or_default();
        if log.contains(needle) || Instant::now() > deadline {
            return log;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_server_is_running_once_it_says_so_and_keeps_what_it_announced() {
    let data = tempfile::tempdir().unwrap();
    let mut server = Options::serve(fake_corral(), data.path())
        .worker_slots(2)
        .lease_secs(3)
        .database_url("postgres://nobody@127.0.0.1/none")
        .args(["--flag", "value"])
        .env("FAKE_CORRAL", "serve")
        .start()
        .unwrap();
    assert_eq!(server.role(), Role::Serve);
    assert!(server.is_running());
    assert_eq!(server.url(), Some("http://127.0.0.1:9"));
    assert_eq!(server.password(), Some("secret-1"));
    assert_eq!(server.announced().len(), 2, "{:?}", server.announced());
    assert_eq!(
        server.running_line(),
        Some("Corral is running at http://127.0.0.1:9/")
    );
    assert_eq!(server.log_path(), data.path().join("server.log"));
    let log = log_with(&server.log_path(), "printed once running");
    assert!(
        log.contains(&format!(
            "args: serve --listen 127.0.0.1:0 --worker-slots 2 --worker-lease-secs 3 \
             --data-dir {} --database-url postgres://nobody@127.0.0.1/none --flag value",
            data.path().display()
        )),
        "{log}"
    );
    assert!(log.contains("printed once running"), "{log}");
    assert!(
        !log.contains("secret-1"),
        "the password is not logged: {log}"
    );

    let pid = server.pid();
    let status = server.terminate().unwrap();
    assert!(!status.success(), "sleep ends on SIGTERM: {status}");
    assert!(!server.is_running());
    assert_eq!(server.url(), None);
    assert!(server.running_line().is_some(), "kept once stopped");
    assert!(matches!(server.terminate(), Err(Error::NotRunning { .. })));

    server.start().unwrap();
    assert_ne!(server.pid(), pid);
    assert_eq!(server.starts(), 2);
    assert_eq!(server.log_path(), data.path().join("server-2.log"));
    assert_eq!(server.password(), Some("secret-1"));
    assert!(matches!(server.start(), Err(Error::StillRunning { .. })));
    server.kill().unwrap();
    server.kill().unwrap();
    assert!(!server.is_running());
}

#[test]
fn a_worker_is_running_without_a_url() {
    let data = tempfile::tempdir().unwrap();
    let worker = Options::worker(fake_corral(), data.path())
        .name("worker-a")
        .env("FAKE_CORRAL", "worker")
        .start()
        .unwrap();
    assert_eq!(worker.url(), None);
    assert_eq!(worker.password(), None);
    assert_eq!(
        worker.running_line(),
        Some("Corral worker running 2 task slot(s) for every tenant on host")
    );
    assert_eq!(worker.log_path(), data.path().join("worker-a.log"));
    let log = log_with(&worker.log_path(), "args: worker --data-dir");
    assert!(log.contains("args: worker --data-dir"), "{log}");
}

#[test]
fn a_process_that_ends_first_fails_the_start_with_its_log() {
    let data = tempfile::tempdir().unwrap();
    let error = Options::serve(fake_corral(), data.path())
        .env("FAKE_CORRAL", "exit")
        .start()
        .err()
        .unwrap();
    assert!(matches!(error, Error::Exited { start: 1, .. }), "{error}");
    let message = error.to_string();
    assert!(message.contains("exit status: 3"), "{message}");
    assert!(message.contains("error: no database here"), "{message}");
}

#[test]
fn a_process_that_never_says_it_runs_fails_the_start_in_time() {
    let data = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let error = Options::serve(fake_corral(), data.path())
        .env("FAKE_CORRAL", "silent")
        .ready_within(Duration::from_millis(300))
        .start()
        .err()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(matches!(error, Error::NotReady { .. }), "{error}");
    assert!(error.to_string().contains("args: serve"), "{error}");
}

#[test]
fn a_missing_binary_is_a_spawn_error() {
    let data = tempfile::tempdir().unwrap();
    let error = Options::serve(data.path().join("no-corral"), data.path())
        .start()
        .err()
        .unwrap();
    assert!(matches!(error, Error::Spawn { .. }), "{error}");
}
