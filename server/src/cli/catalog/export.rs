//! `corral catalog export`: the signed-in tenant's catalog written as one bundle
//! (to a file or standard output) or as a folder-per-kind directory, Coopr's
//! layout, which `corral catalog import` reads back.

use std::fs;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context};
use domain::catalog::{coopr, Catalog};
use serde_json::Value;

use super::convert::{bundle_text, convert, render, report_written, write_files};
use super::input::Shape;
use super::{Format, Layout};

pub async fn run(
    out: Option<&Path>,
    layout: Layout,
    format: Option<Format>,
) -> anyhow::Result<ExitCode> {
    match layout {
        Layout::Bundle => {
            let bundle = fetch().await?;
            write_bundle(bundle, format, out)?;
        }
        Layout::Directory => {
            let Some(dir) = out else {
                bail!("--layout directory needs --out DIR");
            };
            // Checked before asking the server, so a wrong target costs nothing.
            check_target(dir)?;
            let catalog = decode(fetch().await?)?;
            write_directory(&in_format(catalog, format), dir)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn fetch() -> anyhow::Result<Value> {
    super::super::remote::signed_in()?.catalog().await
}

/// Without `--format` the bundle is written as the server gave it, as the
/// export always did; with it, rewritten in that format.
fn write_bundle(bundle: Value, format: Option<Format>, out: Option<&Path>) -> anyhow::Result<()> {
    let text = match format {
        None => serde_json::to_string_pretty(&bundle)? + "\n",
        Some(format) => bundle_text(&convert(&decode(bundle)?, format))?,
    };
    match out {
        Some(path) => {
            fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
        }
        None => super::print_out(&text),
    }
}

fn write_directory(catalog: &Catalog, dir: &Path) -> anyhow::Result<()> {
    let files = render(catalog, Shape::Files)?;
    write_files(dir, &files)?;
    report_written(catalog.len(), files.len(), dir)
}

/// The directory must be new or empty: files of entities deleted since an earlier
/// export would otherwise stay beside the new ones, and an import of the directory
/// would bring them back.
fn check_target(dir: &Path) -> anyhow::Result<()> {
    match fs::read_dir(dir) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => {
            Err(err).with_context(|| format!("cannot use {} as a directory", dir.display()))
        }
        Ok(mut entries) => {
            if entries.next().is_some() {
                bail!(
                    "{} is not empty; export into a new or empty directory (stale entity \
                     files would be mixed in)",
                    dir.display()
                );
            }
            Ok(())
        }
    }
}

/// The server's bundle as a catalog; it wrote it, so a failure here means the
/// server runs another version of Corral.
fn decode(bundle: Value) -> anyhow::Result<Catalog> {
    coopr::import_bundle_value(bundle)
        .map_err(|error| anyhow::anyhow!("cannot read the server's catalog: {error}"))
}

fn in_format(catalog: Catalog, format: Option<Format>) -> Catalog {
    match format {
        Some(format) => convert(&catalog, format),
        None => catalog,
    }
}
