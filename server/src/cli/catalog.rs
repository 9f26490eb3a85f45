//! `corral catalog ...`: offline commands over catalog files — validate, convert
//! between Coopr's JSON and Corral's normalised form, solve a layout, plan a create —
//! and `import`/`export`, which send a catalog (bundle file or folder-per-kind
//! directory) to the signed-in server (`corral login`) or fetch it in either form,
//! and `rollout`, which upgrades a template's clusters to its current revision.
//!
//! The offline ones read files only: no runtime, database or server. Exit codes: 0
//! ok, 1 for an invalid catalog or an unsatisfiable request, 2 for usage errors
//! (clap's).

mod convert;
mod export;
mod import;
mod input;
mod local_files;
mod resources;
mod rollout;
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
    /// Replace your tenant's catalog on the server with a catalog — a bundle file or
    /// a directory with a folder per kind (Coopr's layout) — and upload the plugin
    /// resources its services run (`scripts/` and `files/` inside the directory, or
    /// beside the bundle file). All or nothing: if any file is wrong, nothing changes.
    Import {
        /// A bundle JSON file, or a directory with a folder per kind.
        path: PathBuf,
        /// Only check the catalog and the resources, and print the report.
        #[arg(long)]
        dry_run: bool,
        /// Folder of scripts to upload and stage as plugin resources (default: the
        /// `scripts` folder inside the directory or beside the bundle, if there is one).
        #[arg(long)]
        scripts: Option<PathBuf>,
    },
    /// Write your tenant's catalog on the server as a bundle file or a directory.
    Export {
        /// Where to write: the bundle file (default: standard output), or the
        /// directory for `--layout directory` (created; must be new or empty).
        #[arg(long, required_if_eq("layout", "directory"))]
        out: Option<PathBuf>,
        /// One bundle file, or a directory with a folder per kind and a file per entity.
        #[arg(long, value_enum, default_value_t = Layout::Bundle)]
        layout: Layout,
        /// Rewrite in this format (default: as the server stores the catalog).
        #[arg(long, value_enum)]
        format: Option<Format>,
    },
    /// Roll the template's current revision out across your clusters built from it:
    /// list those behind (with what each upgrade does; pinned ones are passed over),
    /// then upgrade them, at most --max-parallel at a time, stopping at the first that
    /// fails; `show ID` prints one rollout.
    Rollout(rollout::RolloutArgs),
}

/// How a catalog is laid out on disk (see docs/catalog.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Layout {
    /// One file with every entity, as Coopr's `GET /export` gives.
    Bundle,
    /// A folder per kind with one file per entity, as Coopr's published catalog.
    Directory,
}

/// The two catalog formats (see docs/catalog.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Corral's normalised form: leases as text, plain counts, default services as names.
    Corral,
    /// Coopr's JSON as Coopr's writer emits it: leases in milliseconds.
    Coopr,
}

/// What a cluster is asked for: a template, a size and services, as `cluster create`
/// and `catalog solve` both take them.
#[derive(Debug, Args)]
pub struct ClusterShape {
    /// The cluster template to lay out.
    #[arg(long)]
    pub template: String,
    /// Number of nodes.
    #[arg(long)]
    pub size: u32,
    /// Services or aliases to run (default: the template's default services).
    #[arg(long, value_delimiter = ',')]
    pub services: Option<Vec<String>>,
    /// Provider (default: the template's): `local`, `docker`, a pool...
    #[arg(long)]
    pub provider: Option<String>,
    /// The only hardware type nodes may get.
    #[arg(long, alias = "hardware")]
    pub hardwaretype: Option<String>,
    /// The only image type nodes may get.
    #[arg(long, alias = "image")]
    pub imagetype: Option<String>,
}

#[derive(Debug, Args)]
pub struct SolveArgs {
    pub path: PathBuf,
    #[command(flatten)]
    pub cluster: ClusterShape,
}

pub fn run(args: CatalogArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        CatalogCommand::Validate { path } => validate::run(&path),
        CatalogCommand::Convert { path, to, out } => convert::run(&path, to, &out),
        CatalogCommand::Solve(args) => solve::run_solve(&args),
        CatalogCommand::Plan(args) => solve::run_plan(&args),
        CatalogCommand::Import {
            path,
            dry_run,
            scripts,
        } => super::block_on(import::run(&path, dry_run, scripts)),
        CatalogCommand::Export {
            out,
            layout,
            format,
        } => super::block_on(export::run(out.as_deref(), layout, format)),
        CatalogCommand::Rollout(args) => super::block_on(rollout::run(args)),
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
