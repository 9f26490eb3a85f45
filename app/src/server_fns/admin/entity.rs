//! One catalog entity with every revision, for its page, the edit form and the
//! history diff.

use leptos::prelude::*;

use crate::error::UiError;
use crate::server_fns::admin::{EntityKind, EntityPage};

#[server(prefix = "/sfn", endpoint = "admin-entity")]
pub async fn entity(kind: EntityKind, name: String) -> Result<EntityPage, UiError> {
    let caller = super::caller::caller().await?;
    super::caller::require_admin(&caller)?;
    let service = crate::session::service()?;
    let entity = service.entity(&caller, kind.key(), &name).await?;
    let usernames = service.usernames(&caller).await.unwrap_or_default();
    let history = service
        .entity_history(&caller, kind.key(), &name)
        .await?
        .into_iter()
        .map(|revision| crate::server_fns::admin::RevisionRow {
            version: revision.version,
            author: revision
                .author_id
                .map(|id| usernames.get(&id).cloned().unwrap_or(id)),
            at_ms: revision.created_at_ms,
            body: revision.body.as_ref().map(pretty),
        })
        .collect();
    let description = entity
        .body
        .get("description")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut rest = entity.body.clone();
    if let serde_json::Value::Object(fields) = &mut rest {
        fields.remove("name");
        fields.remove("description");
    }
    let credentials = if kind == EntityKind::Provider {
        Some(
            service
                .provider_credentials(&caller, &name, engine::service::CredentialsOwner::Tenant)
                .await?,
        )
    } else {
        None
    };
    Ok(EntityPage {
        credentials,
        kind,
        name: entity.name,
        description,
        version: entity.version,
        body: pretty(&entity.body),
        rest: pretty(&rest),
        history,
    })
}

#[cfg(feature = "ssr")]
fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}
