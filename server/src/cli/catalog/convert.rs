//! `corral catalog convert PATH --to corral|coopr --out DIR`: the same catalog in
//! the other form, laid out like the input (a bundle stays one file, entity files
//! stay one file per entity in a folder per kind). Its writer also serves
//! `corral catalog export`.

use std::fs;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use domain::catalog::{coopr, corral, Catalog};

use super::input::{load_or_report, Shape};
use super::Format;

pub fn run(path: &Path, to: Format, out: &Path) -> anyhow::Result<ExitCode> {
    let Some(input) = load_or_report(path)? else {
        return Ok(ExitCode::FAILURE);
    };
    let converted = convert(&input.catalog, to);
    let files = render(&converted, input.shape)?;
    write_files(out, &files)?;
    report_written(converted.len(), files.len(), out)?;
    Ok(ExitCode::SUCCESS)
}

/// The catalog in `format`'s shape; either form is read the same way, so this
/// needs no knowledge of the input's form.
pub fn convert(catalog: &Catalog, format: Format) -> Catalog {
    match format {
        Format::Corral => corral::normalise(catalog),
        Format::Coopr => corral::to_coopr_shape(catalog),
    }
}

/// The files that lay `catalog` out as `shape`: (path under the output directory,
/// text).
pub fn render(catalog: &Catalog, shape: Shape) -> anyhow::Result<Vec<(String, String)>> {
    Ok(match shape {
        Shape::Files => coopr::export_files(catalog),
        Shape::Bundle { file_name } => vec![(file_name, bundle_text(catalog)?)],
    })
}

/// The whole catalog as one pretty-printed bundle, ending in a newline.
pub fn bundle_text(catalog: &Catalog) -> anyhow::Result<String> {
    let mut text = serde_json::to_string_pretty(&coopr::export_bundle(catalog))
        .context("cannot write the bundle as JSON")?;
    text.push('\n');
    Ok(text)
}

/// Writes each file under `out`, creating the folders it needs.
pub fn write_files(out: &Path, files: &[(String, String)]) -> anyhow::Result<()> {
    for (relative, text) in files {
        let target = out.join(relative);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        fs::write(&target, text).with_context(|| format!("cannot write {}", target.display()))?;
    }
    Ok(())
}

/// `wrote 92 entities in 92 files to DIR`.
pub fn report_written(entities: usize, files: usize, out: &Path) -> anyhow::Result<()> {
    super::print_out(&format!(
        "wrote {entities} entit{} in {files} file{} to {}\n",
        if entities == 1 { "y" } else { "ies" },
        if files == 1 { "" } else { "s" },
        out.display()
    ))
}
