//! Import a Coopr bundle: every problem is listed before anything is saved. With
//! problems (or a bad file) the call fails with one field problem per finding, so
//! the report reaches the page with or without JavaScript; otherwise the catalog
//! is replaced (unless only checking) and the page shows what was imported.

use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-import-catalog")]
pub async fn import_catalog(
    csrf: String,
    bundle: String,
    check_only: Option<String>,
) -> Result<String, UiError> {
    use crate::error::FieldProblem;

    let caller = super::caller::admin_checked(&csrf).await?;
    let value: serde_json::Value = serde_json::from_str(bundle.trim()).map_err(|error| {
        UiError::field("bundle", format!("the file is not valid JSON: {error}"))
    })?;
    let dry_run = check_only.is_some();
    let report = crate::session::service()?
        .import_catalog(&caller, value, dry_run)
        .await?;
    if !report.errors.is_empty() {
        return Err(UiError::Invalid {
            message: format!(
                "the bundle has {} problem(s); nothing was saved",
                report.errors.len()
            ),
            problems: report
                .errors
                .into_iter()
                .map(|problem| FieldProblem {
                    field: "bundle".to_owned(),
                    message: if problem.path.is_empty() {
                        problem.message
                    } else {
                        format!("{}: {}", problem.path, problem.message)
                    },
                })
                .collect(),
        });
    }
    let counts: Vec<String> = report
        .counts
        .iter()
        .map(|(kind, count)| format!("{count} {kind}"))
        .collect();
    let url = format!(
        "/admin/catalog?{}={}&warnings={}",
        if report.applied {
            "imported"
        } else {
            "checked"
        },
        crate::query::encode_value(&counts.join(", ")),
        report.warnings.len()
    );
    leptos_axum::redirect(&url);
    Ok(url)
}
