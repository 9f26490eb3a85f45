//! The tenant's catalog: every member reads it (users pick templates from it); only
//! admins change it. Each write is validated against the whole catalog with the
//! change applied, so a catalog in the store never has errors, and deleting an
//! entity something still uses is refused with the list of users.

use api_types::AuditAction;
use domain::catalog::coopr::{export_bundle, import_bundle_value};
use domain::catalog::validate::{validate, Report};
use domain::catalog::EntityKind;
use serde_json::Value;

use super::audit::{entity_audit_action, EntityChange};
use super::{
    import_problems, report_problems, AuditRecord, Caller, EntityView, ImportReport, Page,
    PageRequest, Problem, RevisionView, Service, ServiceError,
};
use crate::catalog::CatalogError;
use crate::store::catalog::{CatalogRevision, CatalogWrite};
use crate::store::now_ms;

pub fn parse_kind(raw: &str) -> Result<EntityKind, ServiceError> {
    EntityKind::from_key(raw).ok_or_else(|| {
        ServiceError::NotFound(format!(
            "catalog kind {raw:?} (use providers, hardwaretypes, imagetypes, services, \
             clustertemplates or partialtemplates)"
        ))
    })
}

fn parse_body(raw: Option<&str>) -> Option<Value> {
    raw.and_then(|body| serde_json::from_str(body).ok())
}

fn entity_view(revision: CatalogRevision) -> EntityView {
    EntityView {
        body: parse_body(revision.body_json.as_deref()).unwrap_or(Value::Null),
        kind: revision.kind,
        name: revision.name,
        version: revision.version,
        author_id: revision.author_id,
        created_at_ms: revision.created_at_ms,
    }
}

/// The bundle with `name` of `kind` replaced by `body` (or removed when `None`).
fn bundle_with(mut bundle: Value, kind: EntityKind, name: &str, body: Option<Value>) -> Value {
    if let Value::Object(map) = &mut bundle {
        let items = map
            .entry(kind.key())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(items) = items {
            items.retain(|item| item.get("name").and_then(Value::as_str) != Some(name));
            items.extend(body);
        }
    }
    bundle
}

fn errors_introduced(before: &Report, after: &Report) -> Vec<Problem> {
    after
        .errors()
        .filter(|problem| !before.errors().any(|old| old == *problem))
        .map(|problem| Problem {
            path: problem.path.clone(),
            message: problem.message.clone(),
        })
        .collect()
}

impl Service {
    pub async fn list_entities(
        &self,
        caller: &Caller,
        kind: &str,
        page: PageRequest,
    ) -> Result<Page<EntityView>, ServiceError> {
        let kind = parse_kind(kind)?;
        let hidden = self.hidden_of_kind(caller, kind).await?;
        if !hidden.is_empty() {
            // Some templates are limited to groups the caller is not in: page what is
            // left (a tenant's templates are few).
            let visible = self
                .store
                .current_catalog(caller.tenant_id())
                .await?
                .into_iter()
                .filter(|revision| revision.kind == kind.key() && !hidden.contains(&revision.name))
                .map(entity_view)
                .collect();
            return page.slice(visible);
        }
        let (revisions, total) = self
            .store
            .catalog_entities_window(caller.tenant_id(), kind.key(), page.window()?)
            .await?;
        Ok(page.of(revisions.into_iter().map(entity_view).collect(), total))
    }

    pub async fn entity(
        &self,
        caller: &Caller,
        kind: &str,
        name: &str,
    ) -> Result<EntityView, ServiceError> {
        let kind = parse_kind(kind)?;
        if self.hidden_of_kind(caller, kind).await?.contains(name) {
            return Err(ServiceError::NotFound(format!("{} {name:?}", kind.key())));
        }
        Ok(entity_view(
            self.store
                .catalog_entity(caller.tenant_id(), kind.key(), name)
                .await?,
        ))
    }

    /// Every revision of an entity, oldest first, deletions included.
    pub async fn entity_history(
        &self,
        caller: &Caller,
        kind: &str,
        name: &str,
    ) -> Result<Vec<RevisionView>, ServiceError> {
        let kind = parse_kind(kind)?;
        if self.hidden_of_kind(caller, kind).await?.contains(name) {
            return Err(ServiceError::NotFound(format!("{} {name:?}", kind.key())));
        }
        let revisions = self
            .store
            .catalog_history(caller.tenant_id(), kind.key(), name)
            .await?;
        if revisions.is_empty() {
            return Err(ServiceError::NotFound(format!("{} {name:?}", kind.key())));
        }
        Ok(revisions
            .into_iter()
            .map(|revision| RevisionView {
                body: parse_body(revision.body_json.as_deref()),
                version: revision.version,
                author_id: revision.author_id,
                created_at_ms: revision.created_at_ms,
            })
            .collect())
    }

    /// Creates or replaces an entity. The body is Coopr JSON whose `name` (when
    /// given) must equal `name`.
    pub async fn put_entity(
        &self,
        caller: &Caller,
        kind: &str,
        name: &str,
        mut body: Value,
    ) -> Result<EntityView, ServiceError> {
        caller.require_tenant_admin(caller.tenant_id())?;
        let kind = parse_kind(kind)?;
        let Value::Object(fields) = &mut body else {
            return Err(ServiceError::invalid("the body must be a JSON object"));
        };
        match fields.get("name") {
            None => {
                fields.insert("name".to_owned(), Value::String(name.to_owned()));
            }
            Some(Value::String(given)) if given == name => {}
            Some(other) => {
                return Err(ServiceError::Invalid {
                    message: format!("the body names {other}, the path {name:?}"),
                    details: vec![Problem {
                        path: "name".to_owned(),
                        message: "must equal the name in the path".to_owned(),
                    }],
                })
            }
        }
        let tenant_id = caller.tenant_id();
        let current = crate::catalog::load(&self.store, tenant_id).await?;
        let candidate = bundle_with(export_bundle(&current), kind, name, Some(body));
        let catalog = import_bundle_value(candidate).map_err(CatalogError::Import)?;
        let report = validate(&catalog);
        if report.has_errors() {
            return Err(CatalogError::Invalid(report).into());
        }
        // Stored as the catalog re-exports it, so reads and exports agree.
        let write = crate::catalog::writes_for(&catalog)
            .into_iter()
            .find(|write| write.kind == kind.key() && write.name == name)
            .ok_or_else(|| ServiceError::internal("the written entity vanished on re-export"))?;
        let before = self
            .store
            .catalog_entity(tenant_id, kind.key(), name)
            .await
            .ok()
            .and_then(|revision| revision.body_json);
        self.store
            .write_catalog(
                tenant_id,
                std::slice::from_ref(&write),
                Some(&caller.principal.user_id),
                now_ms(),
            )
            .await?;
        let change = if before.is_some() {
            EntityChange::Update
        } else {
            EntityChange::Create
        };
        let action = entity_audit_action(kind, change);
        let mut record = AuditRecord::new(tenant_id, action, kind.key(), name);
        record.before = before;
        record.after = write.body_json;
        self.audit(caller, record).await;
        self.entity(caller, kind.key(), name).await
    }

    /// Deletes an entity, unless other entities use it: then nothing changes and the
    /// error lists every use.
    pub async fn delete_entity(
        &self,
        caller: &Caller,
        kind: &str,
        name: &str,
    ) -> Result<(), ServiceError> {
        caller.require_tenant_admin(caller.tenant_id())?;
        let kind = parse_kind(kind)?;
        let tenant_id = caller.tenant_id();
        let existing = self
            .store
            .catalog_entity(tenant_id, kind.key(), name)
            .await?;
        let current = crate::catalog::load(&self.store, tenant_id).await?;
        let without = bundle_with(export_bundle(&current), kind, name, None);
        let catalog = import_bundle_value(without).map_err(CatalogError::Import)?;
        let uses = errors_introduced(&validate(&current), &validate(&catalog));
        if !uses.is_empty() {
            return Err(ServiceError::Invalid {
                message: format!(
                    "{} {name:?} is in use ({} reference(s)); change those first",
                    kind.key(),
                    uses.len()
                ),
                details: uses,
            });
        }
        self.store
            .write_catalog(
                tenant_id,
                &[CatalogWrite {
                    kind: kind.key().to_owned(),
                    name: name.to_owned(),
                    body_json: None,
                }],
                Some(&caller.principal.user_id),
                now_ms(),
            )
            .await?;
        let action = entity_audit_action(kind, EntityChange::Delete);
        let mut record = AuditRecord::new(tenant_id, action, kind.key(), name);
        record.before = existing.body_json;
        self.audit(caller, record).await;
        Ok(())
    }

    /// Validates a Coopr bundle and, unless `dry_run` or it has errors, replaces the
    /// tenant's catalog with it. The report lists every problem either way.
    pub async fn import_catalog(
        &self,
        caller: &Caller,
        bundle: Value,
        dry_run: bool,
    ) -> Result<ImportReport, ServiceError> {
        caller.require_tenant_admin(caller.tenant_id())?;
        let counts = match &bundle {
            Value::Object(map) => map
                .iter()
                .filter(|(key, _)| EntityKind::from_key(key).is_some())
                .map(|(key, items)| {
                    (
                        key.clone(),
                        Value::from(items.as_array().map_or(0, Vec::len)),
                    )
                })
                .collect(),
            _ => serde_json::Map::new(),
        };
        let catalog = match import_bundle_value(bundle) {
            Ok(catalog) => catalog,
            Err(error) => {
                return Ok(ImportReport {
                    applied: false,
                    errors: import_problems(&error),
                    warnings: Vec::new(),
                    counts,
                })
            }
        };
        let report = validate(&catalog);
        let mut result = ImportReport {
            applied: false,
            errors: report_problems(report.errors()),
            warnings: report_problems(report.warnings()),
            counts,
        };
        if dry_run || report.has_errors() {
            return Ok(result);
        }
        let before = crate::catalog::export(&self.store, caller.tenant_id()).await?;
        crate::catalog::import(
            &self.store,
            caller.tenant_id(),
            &catalog,
            Some(&caller.principal.user_id),
            now_ms(),
        )
        .await?;
        result.applied = true;
        let mut record = AuditRecord::new(
            caller.tenant_id(),
            AuditAction::CatalogImport,
            "catalog",
            "bundle",
        );
        record.before = Some(before.to_string());
        record.after = Some(export_bundle(&catalog).to_string());
        self.audit(caller, record).await;
        Ok(result)
    }

    /// The tenant's catalog as a Coopr bundle.
    pub async fn export_catalog(&self, caller: &Caller) -> Result<Value, ServiceError> {
        let mut bundle = crate::catalog::export(&self.store, caller.tenant_id()).await?;
        let hidden = self
            .hidden_of_kind(caller, EntityKind::ClusterTemplate)
            .await?;
        if let Some(Value::Array(templates)) = bundle.get_mut(EntityKind::ClusterTemplate.key()) {
            templates.retain(|template| {
                template
                    .get("name")
                    .and_then(Value::as_str)
                    .is_none_or(|name| !hidden.contains(name))
            });
        }
        Ok(bundle)
    }

    /// The entities of `kind` the caller may not see: cluster templates limited to
    /// groups the caller is not in (see [`Service::hidden_templates`]).
    async fn hidden_of_kind(
        &self,
        caller: &Caller,
        kind: EntityKind,
    ) -> Result<std::collections::BTreeSet<String>, ServiceError> {
        if kind != EntityKind::ClusterTemplate
            || caller.principal.can_administer_tenant(caller.tenant_id())
        {
            return Ok(std::collections::BTreeSet::new());
        }
        let catalog = crate::catalog::load(&self.store, caller.tenant_id()).await?;
        self.hidden_templates(caller, &catalog).await
    }
}
