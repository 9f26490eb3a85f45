//! Catalog validation (docs/coopr-format.md §3): every problem at once, each an error or
//! a warning with a path such as `clustertemplates.hadoop.constraints.layout.mustcoexist[1]`.
//!
//! Corral refuses an import with any error; warnings are shown and accepted.
//! Templates with `extends`/`includes` are checked in resolved form, under their
//! own path. Checks live in small submodules by subject.

mod contradictions;
mod cycles;
mod entities;
mod macro_refs;
mod report;
mod templates;

pub use macro_refs::check_macro_syntax;
pub use report::{Finding, Report, Severity};

use super::resolve::resolve_all;
use super::Catalog;

/// Checks the whole catalog.
pub fn validate(catalog: &Catalog) -> Report {
    let mut report = Report::default();
    entities::check_providers(catalog, &mut report);
    entities::check_machine_types(catalog, &mut report);
    entities::check_services(catalog, &mut report);
    macro_refs::check_services(catalog, &mut report);
    for (name, partial) in &catalog.partialtemplates {
        entities::check_key(
            &mut report,
            "partialtemplates",
            name.as_str(),
            partial.name.as_str(),
        );
        templates::check_partial(catalog, partial, &mut report);
    }
    for (name, template) in &catalog.clustertemplates {
        let base = format!("clustertemplates.{name}");
        entities::check_key(
            &mut report,
            "clustertemplates",
            name.as_str(),
            template.name.as_str(),
        );
        let (resolved, errors) = resolve_all(catalog, name.as_str());
        for error in &errors {
            report.error(error.path(), error.message());
        }
        let Some(resolved) = resolved else {
            continue;
        };
        let mut checker = templates::TemplateChecker::new(catalog, &resolved, &base, &mut report);
        checker.check_all();
        contradictions::check(&resolved, &base, &mut report);
        cycles::check(catalog, &resolved, &base, &mut report);
        macro_refs::check_template(catalog, &resolved, &base, &mut report);
    }
    report.dedup();
    report
}

#[cfg(test)]
mod tests;
