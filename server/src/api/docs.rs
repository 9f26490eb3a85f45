//! `/api/v1/docs`: a reference page rendered on the server from the OpenAPI
//! document, so it needs no script or CDN and cannot drift from the API.

use axum::response::Html;
use utoipa::openapi::path::{Operation, ParameterIn};
use utoipa::openapi::{PathItem, RefOr};

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn operations(item: &PathItem) -> Vec<(&'static str, &Operation)> {
    [
        ("GET", &item.get),
        ("POST", &item.post),
        ("PUT", &item.put),
        ("PATCH", &item.patch),
        ("DELETE", &item.delete),
    ]
    .into_iter()
    .filter_map(|(method, operation)| operation.as_ref().map(|operation| (method, operation)))
    .collect()
}

/// A schema as people name it: the referenced type, `list of` one, or plain JSON.
fn schema_name<T: serde::Serialize>(schema: &RefOr<T>) -> String {
    let value = serde_json::to_value(schema).unwrap_or_default();
    let reference = |value: &serde_json::Value| {
        value["$ref"]
            .as_str()
            .and_then(|location| location.rsplit('/').next())
            .map(str::to_owned)
    };
    if let Some(name) = reference(&value) {
        return name;
    }
    match (value["type"].as_str(), reference(&value["items"])) {
        (Some("array"), Some(item)) => format!("list of {item}"),
        _ => "JSON".to_owned(),
    }
}

/// Escapes `text` and shows its `code spans` as code.
fn prose(text: &str) -> String {
    escape(text)
        .split('`')
        .enumerate()
        .map(|(index, part)| {
            if index % 2 == 1 {
                format!("<code>{part}</code>")
            } else {
                part.to_owned()
            }
        })
        .collect()
}

fn render_operation(html: &mut String, method: &str, path: &str, operation: &Operation) {
    let summary = operation
        .summary
        .clone()
        .or_else(|| operation.description.clone())
        .unwrap_or_default();
    html.push_str(&format!(
        "<section class=\"endpoint\"><h3><span class=\"method {m}\">{method}</span> <code>{path}</code></h3><p>{summary}</p>",
        m = method.to_ascii_lowercase(),
        path = escape(path),
        summary = prose(&summary),
    ));
    if let Some(parameters) = &operation.parameters {
        html.push_str("<table><tr><th>Parameter</th><th>In</th><th>Description</th></tr>");
        for parameter in parameters {
            let place = match parameter.parameter_in {
                ParameterIn::Path => "path",
                ParameterIn::Query => "query",
                ParameterIn::Header => "header",
                ParameterIn::Cookie => "cookie",
            };
            html.push_str(&format!(
                "<tr><td><code>{}</code></td><td>{place}</td><td>{}</td></tr>",
                escape(&parameter.name),
                prose(parameter.description.as_deref().unwrap_or_default())
            ));
        }
        html.push_str("</table>");
    }
    if let Some(body) = &operation.request_body {
        let kinds: Vec<String> = body
            .content
            .iter()
            .map(|(content_type, content)| {
                let schema = content.schema.as_ref().map(schema_name).unwrap_or_default();
                format!("{} ({})", escape(&schema), escape(content_type))
            })
            .collect();
        html.push_str(&format!("<p>Body: {}</p>", kinds.join(", ")));
    }
    html.push_str("<ul class=\"responses\">");
    for (status, response) in &operation.responses.responses {
        let text = match response {
            RefOr::T(response) => {
                let schema = response
                    .content
                    .values()
                    .next()
                    .and_then(|content| content.schema.as_ref())
                    .map(schema_name);
                match schema {
                    Some(schema) if !response.description.is_empty() => {
                        format!("{}: {}", escape(&response.description), escape(&schema))
                    }
                    Some(schema) => escape(&schema),
                    None => escape(&response.description),
                }
            }
            RefOr::Ref(reference) => escape(&reference.ref_location),
        };
        html.push_str(&format!("<li><b>{status}</b> {text}</li>"));
    }
    html.push_str("</ul></section>");
}

/// The page's look, inline so the page needs no other file.
const STYLE: &str = "\
     body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#1c2330}\
     code{font:13px ui-monospace,monospace}.endpoint{border-top:1px solid #dde2ea;padding:.5rem 0}\
     .method{display:inline-block;min-width:4.5rem;font:600 12px ui-monospace,monospace;padding:2px 6px;border-radius:4px;background:#e8edf5}\
     .get{background:#dff3e4}.post{background:#dde9fb}.put,.patch{background:#fbf0d9}.delete{background:#fbe0de}\
     table{border-collapse:collapse;margin:.25rem 0}td,th{border:1px solid #dde2ea;padding:2px 8px;text-align:left}\
     h3{font-size:15px;margin:.5rem 0}";

/// The inline style carries the response's nonce, by which the pages' content security
/// policy allows it (`crate::http::csp`).
pub async fn page(nonce: Option<axum::Extension<crate::http::csp::CspNonce>>) -> Html<String> {
    let doc = super::document();
    let nonce = nonce.map(|axum::Extension(nonce)| nonce);
    let nonce = nonce
        .as_ref()
        .map(|nonce| nonce.as_str())
        .unwrap_or_default();
    let mut html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>Corral API reference</title><style nonce=\"{nonce}\">{STYLE}</style></head><body>"
    );
    html.push_str(&format!(
        "<h1>{}</h1><p>{}</p><p>Machine-readable: <a href=\"/api/v1/openapi.json\">/api/v1/openapi.json</a></p>",
        escape(&doc.info.title),
        prose(doc.info.description.as_deref().unwrap_or_default())
    ));
    let mut by_tag: std::collections::BTreeMap<String, Vec<(String, &'static str, Operation)>> =
        std::collections::BTreeMap::new();
    for (path, item) in &doc.paths.paths {
        for (method, operation) in operations(item) {
            let tag = operation
                .tags
                .as_ref()
                .and_then(|tags| tags.first().cloned())
                .unwrap_or_else(|| "other".to_owned());
            by_tag
                .entry(tag)
                .or_default()
                .push((path.clone(), method, operation.clone()));
        }
    }
    for (tag, endpoints) in &by_tag {
        html.push_str(&format!("<h2 id=\"{0}\">{0}</h2>", escape(tag)));
        for (path, method, operation) in endpoints {
            render_operation(&mut html, method, path, operation);
        }
    }
    html.push_str("</body></html>");
    Html(html)
}
