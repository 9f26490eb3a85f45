//! A real `corral serve` or `corral worker` as a child process, for the tests and
//! benchmarks that need one running: the server's CLI tests, its chaos tests (crash,
//! db_outage and scaleout kill processes with SIGKILL and start them again) and the
//! benchmarks (`bench`'s server and the scale-out's workers).
//!
//! [`Options`] says what to run: the `corral` binary, the [`Role`], the data directory,
//! the database, task slots, lease length, extra flags and environment.
//! [`Options::start`] spawns the process and waits, for a bounded time, until it says it
//! runs (`Corral is running at URL` for `serve`, `Corral worker running` for a worker).
//! The lines it printed before that, that line itself (a worker's says which tenants it
//! serves), and the first admin's password a first start prints, are kept on the
//! [`Served`]; everything else it writes goes to one log file per start in the data
//! directory (`NAME.log`, then `NAME-2.log`, ...). A start whose process exits first, or
//! stays silent too long, fails with the end of that log.
//!
//! Dropping a [`Served`] kills its process (SIGKILL) and the local nodes under the data
//! directory's `nodes` (their sshds daemonize and would outlive it), and while the thread
//! panics it prints the end of every start's log, so a failing test shows what the
//! server said.

use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use engine::provider::LocalProvider;

/// How long a start may take to say it runs, unless [`Options::ready_within`] says
/// otherwise: generous, since tests start several servers at once on small machines.
pub const READY_WITHIN: Duration = Duration::from_secs(120);
/// How long a process that closed its output before it was running may take to exit.
const EXIT_WITHIN: Duration = Duration::from_secs(10);
/// How many log lines an error and a panicking drop show.
const TAIL_LINES: usize = 40;

/// What a process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `corral serve` on a free loopback port: pages, API and workers.
    Serve,
    /// `corral worker`: workers only.
    Worker,
}

impl Role {
    fn subcommand(self) -> &'static [&'static str] {
        match self {
            Role::Serve => &["serve", "--listen", "127.0.0.1:0"],
            Role::Worker => &["worker"],
        }
    }

    /// The start of the line the process prints once it runs.
    fn ready_line(self) -> &'static str {
        match self {
            Role::Serve => "Corral is running at ",
            Role::Worker => "Corral worker running",
        }
    }

    fn default_name(self) -> &'static str {
        match self {
            Role::Serve => "server",
            Role::Worker => "worker",
        }
    }
}

/// Why a process could not be started or stopped.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{name}: cannot create its log {}: {source}", log.display())]
    Log {
        name: String,
        log: PathBuf,
        source: std::io::Error,
    },
    #[error("{name}: cannot run {}: {source}", corral.display())]
    Spawn {
        name: String,
        corral: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{name} (start {start}) ended before it was running ({status}); {} ends:\n{tail}",
        log.display()
    )]
    Exited {
        name: String,
        start: usize,
        status: String,
        log: PathBuf,
        tail: String,
    },
    #[error(
        "{name} (start {start}) did not say it runs within {waited:?}; {} ends:\n{tail}",
        log.display()
    )]
    NotReady {
        name: String,
        start: usize,
        waited: Duration,
        log: PathBuf,
        tail: String,
    },
    #[error("{name}: {action}: {source}")]
    Stop {
        name: String,
        action: &'static str,
        source: std::io::Error,
    },
    #[error("{name} is still running")]
    StillRunning { name: String },
    #[error("{name} is not running")]
    NotRunning { name: String },
}

/// What to run: see the crate's overview. Built with [`Options::serve`] or
/// [`Options::worker`] and the methods that follow.
#[derive(Debug, Clone)]
pub struct Options {
    corral: PathBuf,
    role: Role,
    data_dir: PathBuf,
    name: String,
    database_url: Option<String>,
    worker_slots: Option<usize>,
    lease_secs: Option<u64>,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    ready_within: Duration,
    keep_nodes: bool,
    log_dir: Option<PathBuf>,
}

impl Options {
    /// `corral` (the binary at that path) in `role` over `data_dir`, named after the
    /// role (`server` or `worker`) in its logs and errors.
    pub fn new(corral: impl Into<PathBuf>, role: Role, data_dir: impl Into<PathBuf>) -> Self {
        Options {
            corral: corral.into(),
            role,
            data_dir: data_dir.into(),
            name: role.default_name().to_owned(),
            database_url: None,
            worker_slots: None,
            lease_secs: None,
            args: Vec::new(),
            env: Vec::new(),
            ready_within: READY_WITHIN,
            keep_nodes: false,
            log_dir: None,
        }
    }

    /// `corral serve` over `data_dir`.
    pub fn serve(corral: impl Into<PathBuf>, data_dir: impl Into<PathBuf>) -> Self {
        Self::new(corral, Role::Serve, data_dir)
    }

    /// `corral worker` over `data_dir`.
    pub fn worker(corral: impl Into<PathBuf>, data_dir: impl Into<PathBuf>) -> Self {
        Self::new(corral, Role::Worker, data_dir)
    }

    /// The name of the process in its log files (`NAME.log`) and errors: each process
    /// sharing a data directory needs its own.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// `--database-url`; without it the data directory's SQLite database.
    pub fn database_url(mut self, url: impl Into<String>) -> Self {
        self.database_url = Some(url.into());
        self
    }

    /// `--worker-slots`.
    pub fn worker_slots(mut self, slots: usize) -> Self {
        self.worker_slots = Some(slots);
        self
    }

    /// `--worker-lease-secs`: how soon a killed process's tasks come back.
    pub fn lease_secs(mut self, secs: u64) -> Self {
        self.lease_secs = Some(secs);
        self
    }

    /// One more flag or value on the command line.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// More flags and values on the command line.
    pub fn args<I>(mut self, args: I) -> Self
    where
        I: IntoIterator,
        I::Item: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|arg| arg.as_ref().to_owned()));
        self
    }

    /// `name=value` in the process's environment.
    pub fn env(mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((name.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// How long a start may take to say it runs ([`READY_WITHIN`] by default).
    pub fn ready_within(mut self, limit: Duration) -> Self {
        self.ready_within = limit;
        self
    }

    /// Leaves the local nodes under the data directory running when the process is
    /// dropped: for nodes that outlive it on purpose (the scale-out bench's, made before
    /// its workers and shared by the rounds).
    pub fn keep_nodes(mut self) -> Self {
        self.keep_nodes = true;
        self
    }

    /// Writes the logs into `dir` instead of the data directory: for a test that fills
    /// the data directory's disk, whose logs must not be lost with it.
    pub fn log_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.log_dir = Some(dir.into());
        self
    }

    /// Starts the process and waits until it says it runs.
    pub fn start(self) -> Result<Served, Error> {
        let mut served = Served {
            options: self,
            child: None,
            pid: 0,
            starts: 0,
            url: None,
            password: None,
            announced: Vec::new(),
            running_line: None,
        };
        served.start()?;
        Ok(served)
    }

    /// The log of start `start` (1 for the first).
    fn log_path(&self, start: usize) -> PathBuf {
        let file = match start {
            1 => format!("{}.log", self.name),
            _ => format!("{}-{start}.log", self.name),
        };
        self.log_dir.as_ref().unwrap_or(&self.data_dir).join(file)
    }
}

/// A `corral serve` or `corral worker` started from [`Options`]; it can be stopped and
/// started again. Dropping it kills the process and the local nodes it left.
pub struct Served {
    options: Options,
    child: Option<Child>,
    pid: u32,
    starts: usize,
    url: Option<String>,
    password: Option<String>,
    announced: Vec<String>,
    running_line: Option<String>,
}

impl Served {
    /// The process's name in its logs and errors.
    pub fn name(&self) -> &str {
        &self.options.name
    }

    pub fn role(&self) -> Role {
        self.options.role
    }

    pub fn data_dir(&self) -> &Path {
        &self.options.data_dir
    }

    /// Where the local provider keeps its nodes: `nodes` in the data directory.
    pub fn nodes_dir(&self) -> PathBuf {
        self.options.data_dir.join("nodes")
    }

    /// Where a running `serve` answers, without a trailing slash
    /// (`http://127.0.0.1:PORT`); `None` for a worker or a stopped process.
    pub fn url(&self) -> Option<&str> {
        self.url.as_deref()
    }

    /// The first admin's password, as the first start on a new data directory prints
    /// it (later starts keep it).
    pub fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }

    /// What the latest start printed before it said it runs.
    pub fn announced(&self) -> &[String] {
        &self.announced
    }

    /// The whole line with which the latest start said it runs (`Corral is running at
    /// URL/`, or `Corral worker running N task slot(s) for ...`, which names the tenants
    /// a worker serves); kept once it stops, like [`Served::announced`].
    pub fn running_line(&self) -> Option<&str> {
        self.running_line.as_deref()
    }

    /// The process id of the latest start, for signals and `/proc`.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Started and not stopped since (through this value).
    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// Whether the latest start is still alive: started, not stopped through this
    /// value, and not exited on its own (a crash) either.
    pub fn is_alive(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|child| matches!(child.try_wait(), Ok(None)))
    }

    /// How many times the process was started.
    pub fn starts(&self) -> usize {
        self.starts
    }

    /// The log of the latest start.
    pub fn log_path(&self) -> PathBuf {
        self.options.log_path(self.starts)
    }

    /// The last `lines` lines of the latest start's log.
    pub fn log_tail(&self, lines: usize) -> String {
        tail(&self.log_path(), lines)
    }

    /// Starts the process again after it was stopped, and waits until it says it runs.
    pub fn start(&mut self) -> Result<(), Error> {
        if self.child.is_some() {
            return Err(Error::StillRunning {
                name: self.options.name.clone(),
            });
        }
        let options = &self.options;
        let start = self.starts + 1;
        let log_path = options.log_path(start);
        let log_error = |source| Error::Log {
            name: options.name.clone(),
            log: log_path.clone(),
            source,
        };
        let (stderr_log, stdout_log) = open_log(&log_path).map_err(log_error)?;
        let mut command = Command::new(&options.corral);
        command.args(options.role.subcommand());
        if let Some(slots) = options.worker_slots {
            command.arg("--worker-slots").arg(slots.to_string());
        }
        if let Some(secs) = options.lease_secs {
            command.arg("--worker-lease-secs").arg(secs.to_string());
        }
        command.arg("--data-dir").arg(&options.data_dir);
        if let Some(url) = &options.database_url {
            command.arg("--database-url").arg(url);
        }
        let mut child = command
            .args(&options.args)
            .envs(options.env.iter().map(|(name, value)| (name, value)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr_log)
            .spawn()
            .map_err(|source| Error::Spawn {
                name: options.name.clone(),
                corral: options.corral.clone(),
                source,
            })?;
        self.starts = start;
        self.pid = child.id();
        let Some(stdout) = child.stdout.take() else {
            kill_and_wait(&mut child);
            return Err(Error::Spawn {
                name: options.name.clone(),
                corral: options.corral.clone(),
                source: std::io::Error::other("its output was not piped"),
            });
        };
        let lines = read_lines(stdout, stdout_log);
        let deadline = Instant::now() + options.ready_within;
        let ready = options.role.ready_line();
        let mut announced = Vec::new();
        loop {
            match lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) => {
                    if let Some(rest) = line.split("with password ").nth(1) {
                        if let Some(password) = rest.split_whitespace().next() {
                            self.password = Some(password.to_owned());
                        }
                    }
                    if let Some(rest) = line.strip_prefix(ready) {
                        self.url = match options.role {
                            Role::Serve => Some(rest.trim().trim_end_matches('/').to_owned()),
                            Role::Worker => None,
                        };
                        self.running_line = Some(line);
                        break;
                    }
                    announced.push(line);
                }
                Err(RecvTimeoutError::Timeout) => {
                    kill_and_wait(&mut child);
                    return Err(Error::NotReady {
                        name: options.name.clone(),
                        start,
                        waited: options.ready_within,
                        tail: tail(&log_path, TAIL_LINES),
                        log: log_path,
                    });
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = exit_status(&mut child);
                    return Err(Error::Exited {
                        name: options.name.clone(),
                        start,
                        status,
                        tail: tail(&log_path, TAIL_LINES),
                        log: log_path,
                    });
                }
            }
        }
        self.announced = announced;
        self.child = Some(child);
        Ok(())
    }

    /// SIGKILL: no shutdown code runs, task leases are left to expire. Nothing to do if
    /// the process is not running.
    pub fn kill(&mut self) -> Result<(), Error> {
        self.url = None;
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let stop_error = |action, source| Error::Stop {
            name: self.options.name.clone(),
            action,
            source,
        };
        child
            .kill()
            .map_err(|source| stop_error("SIGKILL", source))?;
        child
            .wait()
            .map_err(|source| stop_error("waiting for its end", source))?;
        Ok(())
    }

    /// SIGTERM, then waits until the process has ended (a server drains first).
    pub fn terminate(&mut self) -> Result<ExitStatus, Error> {
        self.url = None;
        let Some(mut child) = self.child.take() else {
            return Err(Error::NotRunning {
                name: self.options.name.clone(),
            });
        };
        let stop_error = |action, source| Error::Stop {
            name: self.options.name.clone(),
            action,
            source,
        };
        let pid = i32::try_from(child.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw)
            .ok_or_else(|| stop_error("SIGTERM", std::io::Error::other("no such process id")))?;
        if let Err(errno) = rustix::process::kill_process(pid, rustix::process::Signal::TERM) {
            kill_and_wait(&mut child);
            return Err(stop_error("SIGTERM", errno.into()));
        }
        child
            .wait()
            .map_err(|source| stop_error("waiting for its end", source))
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            kill_and_wait(&mut child);
        }
        if !self.options.keep_nodes {
            LocalProvider::kill_everything_under(&self.nodes_dir());
        }
        if std::thread::panicking() {
            for start in 1..=self.starts {
                eprintln!(
                    "--- {} start {start} (last lines of its log) ---\n{}",
                    self.options.name,
                    tail(&self.options.log_path(start), TAIL_LINES)
                );
            }
        }
    }
}

/// A new (empty) log file, as two handles that append: one for the process's standard
/// error, one for what it prints on standard output once it runs.
fn open_log(path: &Path) -> std::io::Result<(File, File)> {
    File::create(path)?;
    let log = OpenOptions::new().append(true).open(path)?;
    let copy = log.try_clone()?;
    Ok((log, copy))
}

/// The process's output lines, one at a time, until the receiver is dropped (the
/// process runs); the lines after that go to `log`, so a process printing more never
/// writes to a closed pipe. The channel closes when the process closes its output.
fn read_lines(stdout: ChildStdout, mut log: File) -> Receiver<String> {
    // A rendezvous channel: a line is either taken by the reader or written to the log.
    let (sender, receiver) = mpsc::sync_channel::<String>(0);
    std::thread::spawn(move || {
        let mut sender = Some(sender);
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let unread = match &sender {
                Some(open) => open.send(line).err().map(|closed| closed.0),
                None => Some(line),
            };
            if let Some(line) = unread {
                sender = None;
                let _ = writeln!(log, "{line}");
            }
        }
    });
    receiver
}

/// The exit status of a process that closed its output, killed if it has not ended
/// within [`EXIT_WITHIN`].
fn exit_status(child: &mut Child) -> String {
    let deadline = Instant::now() + EXIT_WITHIN;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.to_string(),
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(None) => {
                kill_and_wait(child);
                return format!("closed its output but still ran after {EXIT_WITHIN:?}");
            }
            Err(error) => return format!("unknown: {error}"),
        }
    }
}

fn kill_and_wait(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// The last `lines` lines of the file at `path` (empty if it cannot be read).
fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read(path)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
