//! What the create form offers: the tenant's templates and providers, and its
//! quota use.

use leptos::prelude::*;

use super::CreateFormChoices;
use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "create-choices")]
pub async fn create_choices() -> Result<CreateFormChoices, UiError> {
    use engine::service::{PageRequest, MAX_PAGE};

    use super::QuotaUse;

    let caller = crate::session::caller().await?;
    let service = crate::session::service()?;
    let all = PageRequest {
        offset: 0,
        limit: MAX_PAGE,
    };
    let templates = service
        .list_entities(&caller, "clustertemplates", all)
        .await?
        .items
        .into_iter()
        .map(|entity| template_choice(&entity.name, &entity.body))
        .collect();
    let providers = service
        .list_entities(&caller, "providers", all)
        .await?
        .items
        .into_iter()
        .map(|entity| entity.name)
        .collect();
    let tenant = service.tenant(&caller, caller.tenant_id()).await?;
    // Counted in the database: a tenant may have more clusters than a page holds.
    let (clusters, nodes) = service.cluster_usage(&caller).await?;
    let quota = QuotaUse {
        clusters,
        max_clusters: tenant.max_clusters,
        nodes,
        max_nodes: tenant.max_nodes,
    };
    Ok(CreateFormChoices {
        templates,
        providers,
        quota,
    })
}

/// Reads what the form needs from a template's Coopr JSON.
#[cfg(feature = "ssr")]
fn template_choice(name: &str, body: &serde_json::Value) -> super::TemplateChoice {
    use serde_json::Value;

    let strings = |value: Option<&Value>| -> Vec<String> {
        value
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
    let default_services = strings(body.pointer("/defaults/services"));
    let optional_services = strings(body.pointer("/compatibility/services"))
        .into_iter()
        .filter(|service| !default_services.contains(service))
        .collect();
    let bound = |key: &str| {
        body.pointer(&format!("/constraints/size/{key}"))
            .and_then(|value| {
                value
                    .as_u64()
                    .or_else(|| value.as_str().and_then(|raw| raw.parse().ok()))
            })
            .and_then(|value| u32::try_from(value).ok())
    };
    super::TemplateChoice {
        name: name.to_owned(),
        description: body
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        default_services,
        optional_services,
        min_size: bound("min"),
        max_size: bound("max"),
        hardwaretypes: strings(body.pointer("/compatibility/hardwaretypes")),
        default_hardwaretype: text(body.pointer("/defaults/hardwaretype")),
        imagetypes: strings(body.pointer("/compatibility/imagetypes")),
        default_imagetype: text(body.pointer("/defaults/imagetype")),
        default_provider: text(body.pointer("/defaults/provider")),
        parameters: body.get("parameters").cloned().unwrap_or(Value::Null),
    }
}
