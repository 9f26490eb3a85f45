//! `corral catalog import PATH`: replaces the signed-in tenant's catalog with a
//! bundle file or a folder-per-kind directory (Coopr's layout), and uploads the
//! plugin resources its services run.
//!
//! All or nothing: everything that can be checked here (every entity file decodes,
//! the catalog validates, every resource file reads and is acceptable) is checked
//! before the server is contacted, and the server checks the catalog again with a
//! dry run before anything is written. See [`apply`] for the order of the writes.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use api_types::ImportReport;
use domain::catalog::coopr;
use domain::catalog::validate::validate;
use serde_json::Value;

use super::super::remote::Client;
use super::input::{load_or_report, Input, Shape};
use super::local_files::{entry_kind, EntryKind};
use super::resources::{self, Resource};

pub async fn run(path: &Path, dry_run: bool, scripts: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let Some(input) = load_whole_catalog(path)? else {
        return Ok(ExitCode::FAILURE);
    };
    if !report_local_errors(path, &input) {
        return Ok(ExitCode::FAILURE);
    }
    let mut resources = read_resources(path, scripts.as_deref())?;
    // What the server gets is the decoded catalog written back as one bundle:
    // reading and writing Coopr JSON keeps it as it was, and a directory becomes
    // the same bundle its files would make.
    let bundle = coopr::export_bundle(&input.catalog);
    let client = super::super::remote::signed_in()?;
    let checked = post_import(&client, path, &bundle, true).await?;
    resources::mark_staged(&client, &mut resources).await?;
    if dry_run {
        print_report(path, &checked);
        print_resources(&resources, Some("would be uploaded and staged"));
        return Ok(ExitCode::SUCCESS);
    }
    apply(&client, path, &bundle, &resources).await?;
    Ok(ExitCode::SUCCESS)
}

/// The writes, once everything is checked, ordered so a failure part way leaves
/// nothing that nodes or clusters see: new resource versions are uploaded first but
/// not staged (an unstaged version is inert), then the catalog is imported, and
/// only then are the new versions staged. A refused upload leaves the catalog and
/// the staged resources as they were; only a failure while staging, after the
/// catalog is in, leaves something to redo, and the error says so.
async fn apply(
    client: &Client,
    path: &Path,
    bundle: &Value,
    resources: &[Resource],
) -> anyhow::Result<()> {
    let uploaded = resources::upload(client, resources).await?;
    let report = post_import(client, path, bundle, false).await?;
    print_report(path, &report);
    print_resources(resources, None);
    resources::stage(client, &uploaded).await
}

/// Reads `path`, which must be a whole catalog: importing replaces the tenant's
/// catalog, so one entity file alone would delete every other entity.
fn load_whole_catalog(path: &Path) -> anyhow::Result<Option<Input>> {
    let input = load_or_report(path)?;
    let one_entity = !path.is_dir()
        && input
            .as_ref()
            .is_some_and(|input| input.shape == Shape::Files);
    if one_entity {
        bail!(
            "{}: is one entity, but an import replaces the whole catalog; give a bundle \
             file or a directory with a folder per kind",
            path.display()
        );
    }
    Ok(input)
}

/// Validates the catalog here, where each problem can be traced to its file; prints
/// the errors and returns false if there are any. Warnings are left to the server's
/// report.
fn report_local_errors(path: &Path, input: &Input) -> bool {
    let report = validate(&input.catalog);
    let errors: Vec<_> = report.errors().collect();
    for problem in &errors {
        match input.origins.file_of(&problem.path) {
            Some(file) => eprintln!("error: {file}: {}: {}", problem.path, problem.message),
            None => eprintln!("error: {}: {}", problem.path, problem.message),
        }
    }
    if errors.is_empty() {
        return true;
    }
    eprintln!(
        "error: {} is not a valid catalog: {} error{}; nothing was sent to the server",
        path.display(),
        errors.len(),
        if errors.len() == 1 { "" } else { "s" }
    );
    false
}

/// The resource folders of the import: `scripts/` and `files/` inside a directory,
/// or beside a bundle file; `--scripts` names the scripts folder instead.
fn read_resources(path: &Path, scripts: Option<&Path>) -> anyhow::Result<Vec<Resource>> {
    let base = if path.is_dir() {
        Some(path)
    } else {
        path.parent()
    };
    // The folders are looked at without following links: a `scripts` link to another
    // directory would upload whatever is there.
    let folder = |kind: &str| -> anyhow::Result<Option<PathBuf>> {
        let Some(dir) = base.map(|dir| dir.join(kind)) else {
            return Ok(None);
        };
        Ok((entry_kind(&dir)? == Some(EntryKind::Dir)).then_some(dir))
    };
    let mut found = Vec::new();
    let scripts_dir = match scripts {
        Some(dir) => Some(dir.to_path_buf()),
        None => folder("scripts")?,
    };
    if let Some(dir) = scripts_dir {
        found.extend(resources::read(&dir, "scripts")?);
    }
    if let Some(dir) = folder("files")? {
        found.extend(resources::read(&dir, "files")?);
    }
    Ok(found)
}

async fn post_import(
    client: &Client,
    path: &Path,
    bundle: &Value,
    dry_run: bool,
) -> anyhow::Result<ImportReport> {
    client
        .import_catalog(bundle, dry_run)
        .await
        .with_context(|| {
            format!(
                "the server refused {}; the catalog is unchanged",
                path.display()
            )
        })
}

fn print_report(path: &Path, report: &ImportReport) {
    for warning in &report.warnings {
        println!("warning: {}: {}", warning.path, warning.message);
    }
    let counts: Vec<String> = report
        .counts
        .iter()
        .map(|(kind, count)| format!("{count} {kind}"))
        .collect();
    let verdict = if report.applied {
        "imported"
    } else {
        "valid (nothing saved)"
    };
    println!("{}: {verdict}: {}", path.display(), counts.join(", "));
}

/// One line per resource already staged, and, given `pending`, one per resource
/// that is not (the dry run's `would be uploaded and staged`).
fn print_resources(resources: &[Resource], pending: Option<&str>) {
    for resource in resources {
        if resource.staged_already {
            println!("{}: staged already", resource.label());
        } else if let Some(pending) = pending {
            println!("{}: {pending}", resource.label());
        }
    }
}
