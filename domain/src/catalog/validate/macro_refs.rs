//! Macros in templates (docs/coopr-format.md §3 error 9 and a warning): every `%…%` in
//! config strings and link URLs must parse, and the services they name should be
//! compatible.
//!
//! The grammar belongs to [`crate::macros`]; [`check_macro_syntax`] is the one
//! place validation calls it.

use serde_json::Value;

use super::Report;
use crate::catalog::{Catalog, ClusterTemplate, DefaultService};

/// Checks the macro syntax of one string; the error says what does not parse.
pub fn check_macro_syntax(text: &str) -> Result<(), String> {
    crate::macros::check_syntax(text).map_err(|err| err.problem.to_string())
}

pub(super) fn check_template(
    catalog: &Catalog,
    template: &ClusterTemplate,
    base: &str,
    report: &mut Report,
) {
    let mut strings = Vec::new();
    for (key, value) in &template.defaults.config {
        collect_strings(value, format!("{base}.defaults.config.{key}"), &mut strings);
    }
    for (index, service) in template.defaults.services.iter().enumerate() {
        if let DefaultService::Configured {
            config: Some(config),
            ..
        } = service
        {
            collect_strings(
                config,
                format!("{base}.defaults.services[{index}].config"),
                &mut strings,
            );
        }
    }
    for (index, link) in template.links.iter().enumerate() {
        check_link_scheme(&format!("{base}.links[{index}].url"), &link.url, report);
        strings.push((format!("{base}.links[{index}].url"), link.url.as_str()));
    }
    for (path, text) in strings {
        if let Err(problem) = check_macro_syntax(text) {
            report.error(path, problem);
            continue;
        }
        for service in named_services(text) {
            if catalog.service(service).is_none() {
                report.warning(
                    path.clone(),
                    format!("macro names service \"{service}\", which does not exist"),
                );
            } else if !template.compatibility.services.is_empty()
                && !template
                    .compatibility
                    .services
                    .iter()
                    .any(|compatible| compatible.as_str() == service)
            {
                report.warning(
                    path.clone(),
                    format!(
                        "macro names service \"{service}\", which is not compatible with this template"
                    ),
                );
            }
        }
    }
}

/// Corral expands macros in action fields and service link URLs too (§6), so
/// their syntax is checked here rather than failing a task later.
pub(super) fn check_services(catalog: &Catalog, report: &mut Report) {
    for (name, service) in &catalog.services {
        let mut strings = Vec::new();
        for (action, spec) in &service.provisioner.actions {
            for (key, value) in &spec.fields {
                collect_strings(
                    value,
                    format!("services.{name}.provisioner.actions.{action}.fields.{key}"),
                    &mut strings,
                );
            }
        }
        for (index, link) in service.links.iter().enumerate() {
            check_link_scheme(
                &format!("services.{name}.links[{index}].url"),
                &link.url,
                report,
            );
            strings.push((
                format!("services.{name}.links[{index}].url"),
                link.url.as_str(),
            ));
        }
        for (path, text) in strings {
            if let Err(problem) = check_macro_syntax(text) {
                report.error(path, problem);
            }
        }
    }
}

/// Links become `href`s on the cluster's pages: only web URLs are allowed.
fn check_link_scheme(path: &str, url: &str, report: &mut Report) {
    if !crate::catalog::Link::is_web_url(url) {
        report.error(
            path.to_owned(),
            format!("link URL {url:?} must start with http:// or https://"),
        );
    }
}

fn collect_strings<'v>(value: &'v Value, path: String, out: &mut Vec<(String, &'v str)>) {
    match value {
        Value::String(text) => out.push((path, text)),
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                collect_strings(item, format!("{path}[{index}]"), out);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                collect_strings(item, format!("{path}.{key}"), out);
            }
        }
        _ => {}
    }
}

/// Services named by `…service.<name>` inside the `%…%` of `text`.
fn named_services(text: &str) -> Vec<&str> {
    const MARK: &str = "service.";
    let mut names = Vec::new();
    // Odd pieces between `%` signs are macro bodies (`%%` gives an empty one).
    for body in text.split('%').skip(1).step_by(2) {
        let mut rest = body;
        while let Some(at) = rest.find(MARK) {
            let after = &rest[at + MARK.len()..];
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
                .unwrap_or(after.len());
            let name = &after[..end];
            if !name.is_empty() && !names.contains(&name) {
                names.push(name);
            }
            rest = &after[end..];
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::named_services;

    #[test]
    fn finds_service_names_in_macros_only() {
        assert_eq!(
            named_services(
                "x service.no %join(map(host.service.zk-server,'$:2181'),',')% and %ip.access_v4.service.nn[0]%:80 100%% %num.service.zk-server%"
            ),
            ["zk-server", "nn"]
        );
        assert!(named_services("plain text").is_empty());
    }
}
