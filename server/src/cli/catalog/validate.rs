//! `corral catalog validate PATH`: every problem with its path, then one summary
//! line per entity kind; exit 1 if anything is an error.

use std::path::Path;
use std::process::ExitCode;

use domain::catalog::validate::{validate, Report, Severity};
use domain::catalog::{Catalog, EntityKind};

use super::input::load_or_report;

pub fn run(path: &Path) -> anyhow::Result<ExitCode> {
    let Some(input) = load_or_report(path)? else {
        return Ok(ExitCode::FAILURE);
    };
    let report = validate(&input.catalog);
    let mut text = String::new();
    for problem in &report.problems {
        text.push_str(&format!("{problem}\n"));
    }
    for line in summary(&input.catalog, &report) {
        text.push_str(&line);
        text.push('\n');
    }
    super::print_out(&text)?;
    if report.has_errors() {
        let errors = report.errors().count();
        eprintln!(
            "error: {} is not a valid catalog: {errors} error{}",
            path.display(),
            if errors == 1 { "" } else { "s" }
        );
        Ok(ExitCode::FAILURE)
    } else {
        Ok(ExitCode::SUCCESS)
    }
}

/// `services: 53 ok`, `providers: 8 ok, 8 warnings`,
/// `clustertemplates: 15, 3 with errors, 1 warning` — kinds with no entities left out.
pub fn summary(catalog: &Catalog, report: &Report) -> Vec<String> {
    EntityKind::ALL
        .into_iter()
        .filter_map(|kind| {
            let names = names_of(catalog, kind);
            if names.is_empty() {
                return None;
            }
            let prefix = |name: &str| format!("{}.{name}", kind.key());
            let with_errors = names
                .iter()
                .filter(|name| {
                    report
                        .under(&prefix(name))
                        .any(|problem| problem.severity == Severity::Error)
                })
                .count();
            let warnings = report
                .under(kind.key())
                .filter(|problem| problem.severity == Severity::Warning)
                .count();
            let mut line = if with_errors == 0 {
                format!("{}: {} ok", kind.key(), names.len())
            } else {
                format!("{}: {}, {with_errors} with errors", kind.key(), names.len())
            };
            if warnings > 0 {
                line.push_str(&format!(
                    ", {warnings} warning{}",
                    if warnings == 1 { "" } else { "s" }
                ));
            }
            Some(line)
        })
        .collect()
}

fn names_of(catalog: &Catalog, kind: EntityKind) -> Vec<&str> {
    match kind {
        EntityKind::Provider => catalog.providers.keys().map(|n| n.as_str()).collect(),
        EntityKind::HardwareType => catalog.hardwaretypes.keys().map(|n| n.as_str()).collect(),
        EntityKind::ImageType => catalog.imagetypes.keys().map(|n| n.as_str()).collect(),
        EntityKind::Service => catalog.services.keys().map(|n| n.as_str()).collect(),
        EntityKind::ClusterTemplate => catalog
            .clustertemplates
            .keys()
            .map(|n| n.as_str())
            .collect(),
        EntityKind::PartialTemplate => catalog
            .partialtemplates
            .keys()
            .map(|n| n.as_str())
            .collect(),
    }
}
