//! `corral catalog ...`: offline commands over catalog files — validate, convert
//! between Coopr's JSON and Corral's normalised form, solve a layout, plan a create.
//!
//! They read files only: no runtime, database or server. Exit codes: 0 ok, 1 for an
//! invalid catalog or an unsatisfiable request, 2 for usage errors (clap's).

mod convert;
mod input;
mod solve;
mod validate;

use std::io::{ErrorKind, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};

#[derive(Debug, Args)]
pub struct CatalogArgs {
    #[command(subcommand)]
    pub command: CatalogCommand,
}

#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// Check a catalog (bundle file, entity file or folder-per-kind directory).
    Validate {
        /// A bundle JSON file, one entity file, or a directory with a folder per kind.
        path: PathBuf,
    },
    /// Rewrite a catalog in the other format.
    Convert {
        path: PathBuf,
        /// The format to write.
        #[arg(long, value_enum)]
        to: Format,
        /// Directory to write into (created if missing).
        #[arg(long)]
        out: PathBuf,
    },
    /// Print the layout a template gives at a size, as JSON.
    Solve(SolveArgs),
    /// Print the task DAG that creates the solved cluster, as JSON.
    Plan(SolveArgs),
}

/// The two catalog formats (see docs/catalog.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Corral's normalised form: leases as text, plain counts, default services as names.
    Corral,
    /// Coopr's JSON as Coopr's writer emits it: leases in milliseconds.
    Coopr,
}

#[derive(Debug, Args)]
pub struct SolveArgs {
    pub path: PathBuf,
    /// The cluster template to lay out.
    #[arg(long)]
    pub template: String,
    /// Number of nodes.
    #[arg(long)]
    pub size: u32,
    /// Services or aliases to run (default: the template's default services).
    #[arg(long, value_delimiter = ',')]
    pub services: Option<Vec<String>>,
    /// Provider (default: the template's).
    #[arg(long)]
    pub provider: Option<String>,
    /// The only hardware type nodes may get.
    #[arg(long)]
    pub hardwaretype: Option<String>,
    /// The only image type nodes may get.
    #[arg(long)]
    pub imagetype: Option<String>,
}

pub fn run(args: CatalogArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        CatalogCommand::Validate { path } => validate::run(&path),
        CatalogCommand::Convert { path, to, out } => convert::run(&path, to, &out),
        CatalogCommand::Solve(args) => solve::run_solve(&args),
        CatalogCommand::Plan(args) => solve::run_plan(&args),
    }
}

/// Writes command output; a closed pipe (`corral catalog plan ... | head`) ends
/// the output quietly instead of panicking as `println!` would.
fn print_out(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(err) if err.kind() == ErrorKind::BrokenPipe => Ok(()),
        result => result.context("cannot write to standard output"),
    }
}
