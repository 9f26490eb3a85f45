//! `corral catalog convert PATH --to corral|coopr --out DIR`: the same catalog in
//! the other form, laid out like the input (a bundle stays one file, entity files
//! stay one file per entity in a folder per kind).

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
    let files = match input.shape {
        Shape::Files => coopr::export_files(&converted),
        Shape::Bundle { file_name } => {
            let mut text = serde_json::to_string_pretty(&coopr::export_bundle(&converted))
                .context("cannot write the bundle as JSON")?;
            text.push('\n');
            vec![(file_name, text)]
        }
    };
    for (relative, text) in &files {
        let target = out.join(relative);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        fs::write(&target, text).with_context(|| format!("cannot write {}", target.display()))?;
    }
    super::print_out(&format!(
        "wrote {} entit{} in {} file{} to {}\n",
        converted.len(),
        if converted.len() == 1 { "y" } else { "ies" },
        files.len(),
        if files.len() == 1 { "" } else { "s" },
        out.display()
    ))?;
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
