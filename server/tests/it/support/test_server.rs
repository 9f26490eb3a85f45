//! A real `corral serve` on a fresh data dir for the CLI tests (the `served` crate's
//! process, with what these tests read of it as fields), and the `corral` binary run as
//! a client against it (or on its own). Dropping the server also stops the local nodes
//! it started: their sshds daemonize and would outlive it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub const CORRAL: &str = env!("CARGO_BIN_EXE_corral");

pub struct Served {
    pub url: String,
    /// The first admin's password, as the first start prints it (empty on a data dir
    /// that has one already).
    pub password: String,
    /// What the server printed before it said where it runs.
    pub announced: Vec<String>,
    pub nodes: PathBuf,
    process: served::Served,
}

impl Served {
    /// The server's process id, for signals.
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// Asks the server to stop with SIGTERM and waits until it has.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        self.process.terminate().unwrap()
    }
}

/// Starts `corral serve` on a free port with `worker_slots` workers and the extra
/// environment `env`; its log goes to `server.log` in `data`.
pub fn serve(data: &Path, worker_slots: u32, env: &[(&str, &str)]) -> Served {
    let process = env
        .iter()
        .fold(
            served::Options::serve(CORRAL, data).worker_slots(worker_slots as usize),
            |options, (name, value)| options.env(name, value),
        )
        .start()
        .unwrap_or_else(|error| panic!("{error}"));
    Served {
        url: process.url().unwrap_or_default().to_owned(),
        password: process.password().unwrap_or_default().to_owned(),
        announced: process.announced().to_vec(),
        nodes: process.nodes_dir(),
        process,
    }
}

/// Runs `corral ARGS` with its config in `config`, feeding it `stdin`.
pub fn corral(config: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(CORRAL)
        .args(args)
        .env("CORRAL_CONFIG_DIR", config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Runs `corral ARGS` on its own, with this process's environment: the offline
/// commands, and the ones that must fail before they serve anything.
pub fn corral_alone(args: &[&str]) -> Output {
    Command::new(CORRAL).args(args).output().unwrap()
}

/// The standard output of a command that must have succeeded (else both outputs, in
/// the failure).
pub fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "stdout: {}\nstderr: {}",
        text(&output.stdout),
        text(&output.stderr)
    );
    text(&output.stdout)
}

/// Runs `corral login` against `served` as its first admin with `password` on
/// standard input and the `extra` arguments.
pub fn login(config: &Path, served: &Served, password: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "login",
        "--server",
        &served.url,
        "--username",
        "admin",
        "--password-stdin",
    ];
    args.extend_from_slice(extra);
    corral(config, &args, &format!("{password}\n"))
}

/// Signs the CLI whose config is in `config` in to `served` as its first admin.
pub fn login_as_admin(config: &Path, served: &Served) {
    let login = login(config, served, &served.password, &[]);
    assert!(login.status.success(), "{}", text(&login.stderr));
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A browser-like client signed in to the server at `base` (no trailing slash) as
/// `username`, and its session's CSRF token for writes.
pub async fn sign_in(base: &str, username: &str, password: &str) -> (reqwest::Client, String) {
    let client = reqwest::Client::builder()
        .cookie_store(true)
        .build()
        .unwrap();
    let response = client
        .post(format!("{base}/api/v1/session"))
        .json(&serde_json::json!({"username": username, "password": password}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "signing in as {username}");
    let session: serde_json::Value = response.json().await.unwrap();
    let csrf = session["csrf_token"].as_str().unwrap().to_owned();
    (client, csrf)
}
