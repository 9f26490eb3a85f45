//! Corral's benchmarks, run in release mode:
//! `cargo run --release -p bench -- fanout --nodes 200`, `… -- latency --runs 50`,
//! `… -- queue --backend sqlite|postgres --tasks 20000`, `… -- scaleout --nodes 200`,
//! `… -- bundle`, `… -- solver`, `… -- create --nodes 1000`, `… -- fairness --nodes 1000`,
//! `… -- http --rate 200 [--clusters 2000]`, `… -- automators --runs 3`,
//! `… -- upgrade --nodes 200`, `… -- shell` and `… -- soak --minutes 60`.
//!
//! Each subcommand prints one `key=value` line so runs can be compared and tracked.

mod automators;
mod browser;
mod create;
mod fairness;
mod fanout;
mod http;
mod latency;
mod pages;
mod queue;
mod scaleout;
mod served;
mod shell;
mod soak;
mod upgrade;
mod usage;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("automators") => automators::run(&args[1..]),
        Some("fanout") => fanout::Options::parse(&args[1..]).and_then(fanout::run),
        Some("latency") => latency::Options::parse(&args[1..]).and_then(latency::run),
        Some("queue") => queue::Options::parse(&args[1..]).and_then(queue::run),
        Some("scaleout") => fanout::Options::parse(&args[1..]).and_then(scaleout::run),
        Some("bundle") => browser::run(browser::BUNDLE, &args[1..]),
        Some("solver") => browser::run(browser::SOLVER, &args[1..]),
        Some("create") => create::run(&args[1..]),
        Some("fairness") => fairness::run(&args[1..]),
        Some("http") => http::run(&args[1..]),
        Some("pages") => pages::run(&args[1..]),
        Some("upgrade") => upgrade::run(&args[1..]),
        Some("shell") => shell::run(&args[1..]),
        Some("soak") => soak::run(&args[1..]),
        _ => Err(BenchError::Usage(
            "usage: bench fanout [--nodes N] | bench latency [--runs N] \
             | bench queue [--backend sqlite|postgres] [--tasks N] \
             | bench scaleout [--nodes N] | bench bundle | bench solver \
             | bench create [--nodes N] | bench fairness [--nodes N] \
             | bench http [--rate N] [--clusters N] | bench pages [--nodes N] \
             | bench automators [--runs N] | bench upgrade [--nodes N] | bench shell \
             | bench soak [--minutes N]"
                .to_owned(),
        )),
    };
    match result {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("bench: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Reads `FLAG N` pairs: the single positive-number option each subcommand takes.
pub fn parse_count(args: &[String], flag: &str, default: usize) -> Result<usize, BenchError> {
    let mut count = default;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg != flag {
            return Err(BenchError::Usage(format!("unknown argument {arg:?}")));
        }
        count = args
            .next()
            .and_then(|value| value.parse().ok())
            .filter(|count| *count > 0)
            .ok_or_else(|| BenchError::Usage(format!("{flag} needs a positive number")))?;
    }
    Ok(count)
}

/// The `corral` binary the benchmarks that run it use: `CORRAL_BIN`, else the one next
/// to this benchmark (it must carry the browser bundle for `bundle`: build it with
/// scripts/build.sh).
pub fn corral_binary() -> Result<std::path::PathBuf, BenchError> {
    let corral = match std::env::var_os("CORRAL_BIN") {
        Some(path) => std::path::PathBuf::from(path),
        None => std::env::current_exe()?.with_file_name("corral"),
    };
    if corral.is_file() {
        Ok(corral)
    } else {
        Err(BenchError::Usage(format!(
            "no corral binary at {} (build it with scripts/build.sh, or set CORRAL_BIN)",
            corral.display()
        )))
    }
}

/// Runs `body` on a 2-thread runtime with a scratch directory for nodes, and kills
/// every node process under it however the run ends.
pub fn run_in_scratch_dir<F, Fut>(prefix: &str, body: F) -> Result<String, BenchError>
where
    F: FnOnce(std::path::PathBuf) -> Fut,
    Fut: std::future::Future<Output = Result<String, BenchError>>,
{
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let base = tempfile::Builder::new().prefix(prefix).tempdir()?;
    let base_path = base.path().canonicalize()?;
    let _sweep = Sweep(base_path.clone());
    runtime.block_on(body(base_path))
}

/// Kills every node process under a base directory however a run ends.
pub struct Sweep(pub std::path::PathBuf);

impl Drop for Sweep {
    fn drop(&mut self) {
        engine::provider::LocalProvider::kill_everything_under(&self.0);
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Provider(#[from] engine::provider::ProviderError),
    #[error("{0}")]
    Ssh(#[from] engine::ssh::SshError),
    #[error("{0}")]
    Store(#[from] engine::store::StoreError),
    #[error("{0}")]
    Queue(#[from] engine::queue::QueueError),
    /// A call of the API failed (refused, unreachable, or an answer not of its view).
    #[error("{0:#}")]
    Api(#[from] anyhow::Error),
    #[error("{0}")]
    Failed(String),
}
