//! `corral catalog ...`: offline commands over catalog files — validate, convert
//! between Coopr's JSON and Corral's normalised form, solve a layout, plan a create —
//! and `import`/`export`, which send a bundle to or fetch one from the signed-in
//! server (`corral login`).
//!
//! The offline ones read files only: no runtime, database or server. Exit codes: 0
//! ok, 1 for an invalid catalog or an unsatisfiable request, 2 for usage errors
//! (clap's).

mod convert;
mod input;
mod resources;
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
    /// Replace your tenant's catalog on the server with a Coopr bundle file, and
    /// upload the plugin resources its services run (`scripts/` and `files/` beside
    /// the file: scripts, playbooks, manifests).
    Import {
        path: PathBuf,
        /// Only check the bundle and print the report.
        #[arg(long)]
        dry_run: bool,
        /// Folder of scripts to upload and stage as plugin resources (default: the
        /// `scripts` folder beside the bundle, if there is one).
        #[arg(long)]
        scripts: Option<PathBuf>,
    },
    /// Write your tenant's catalog on the server as a Coopr bundle.
    Export {
        /// File to write (default: standard output).
        #[arg(long)]
        out: Option<PathBuf>,
    },
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
        } => super::block_on(import(path, dry_run, scripts)),
        CatalogCommand::Export { out } => super::block_on(export(out)),
    }
}

async fn import(
    path: PathBuf,
    dry_run: bool,
    scripts: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let bundle: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let client = super::remote::Client::signed_in()?;
    let report = client
        .post(
            &format!("/api/v1/catalog/import?dry_run={dry_run}"),
            &bundle,
        )
        .await?;
    for warning in report["warnings"].as_array().into_iter().flatten() {
        println!(
            "warning: {}: {}",
            warning["path"].as_str().unwrap_or_default(),
            warning["message"].as_str().unwrap_or_default()
        );
    }
    let counts: Vec<String> = report["counts"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(kind, count)| format!("{count} {kind}"))
        .collect();
    let verdict = if report["applied"] == true {
        "imported"
    } else {
        "valid (nothing saved)"
    };
    println!("{}: {verdict}: {}", path.display(), counts.join(", "));
    let beside = |kind: &str| {
        path.parent()
            .map(|dir| dir.join(kind))
            .filter(|dir| dir.is_dir())
    };
    if let Some(dir) = scripts.or(beside("scripts")) {
        resources::upload(&client, &dir, "scripts", dry_run).await?;
    }
    if let Some(dir) = beside("files") {
        resources::upload(&client, &dir, "files", dry_run).await?;
    }
    Ok(ExitCode::SUCCESS)
}

async fn export(out: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let client = super::remote::Client::signed_in()?;
    let bundle = client.get("/api/v1/catalog").await?;
    let text = serde_json::to_string_pretty(&bundle)? + "\n";
    match out {
        Some(path) => std::fs::write(&path, text)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => print_out(&text)?,
    }
    Ok(ExitCode::SUCCESS)
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
