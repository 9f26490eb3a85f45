//! A real `corral serve` on a fresh data dir for the CLI tests (the `served` crate's
//! process, with what these tests read of it as fields), and the `corral` binary run as
//! a client against it, or on its own (the offline commands, and the starts that must
//! fail: run to their end, within a bound). Dropping the server also stops the local
//! nodes it started: their sshds daemonize and would outlive it.

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

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
/// commands.
pub fn corral_alone(args: &[&str]) -> Output {
    Command::new(CORRAL).args(args).output().unwrap()
}

/// How long [`corral_to_its_end`] lets a command run.
const RUN_WITHIN: Duration = Duration::from_secs(60);

/// Runs `corral ARGS` on its own to its end: a `serve` or `worker` that must stop at
/// start (bad flags, database or TLS files, a newer schema), whose one-line error the
/// test reads. One that runs instead would never end, so after [`RUN_WITHIN`] it is
/// killed and fails the test with what it said.
pub fn corral_to_its_end<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<OsString> = args
        .into_iter()
        .map(|arg| arg.as_ref().to_owned())
        .collect();
    let mut child = Command::new(CORRAL)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read while it runs: a full pipe would stop it before it ends.
    let stdout = read_all(child.stdout.take().unwrap());
    let stderr = read_all(child.stderr.take().unwrap());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > RUN_WITHIN {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "corral {args:?} still ran after {RUN_WITHIN:?}: {}",
                text(&stderr.join().unwrap())
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

/// Everything `pipe` gives until it closes, read on a thread of its own.
fn read_all(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
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
