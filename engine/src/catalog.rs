//! A tenant's catalog in the store, seen as `domain` types.
//!
//! Rows hold Coopr-format JSON per entity revision ([`crate::store::catalog`]); this
//! module turns them into a [`Catalog`] and back, refuses an import with validation
//! errors before anything is written, and cuts the pinned snapshot a cluster keeps of
//! the entities it was built from.

use std::collections::{BTreeMap, BTreeSet};

use domain::catalog::coopr::{export_bundle, import_bundle_value, ImportError};
use domain::catalog::validate::{validate, Report};
use domain::catalog::{Catalog, ClusterTemplate};
use domain::layout::Layout;
use serde_json::{Map, Value};

use crate::store::catalog::{CatalogRevision, CatalogWrite};
use crate::store::{Store, StoreError};

pub mod memo;

#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Stored or given JSON that is not a catalog.
    #[error(transparent)]
    Import(#[from] ImportError),
    /// The catalog decodes but breaks the rules (unknown references, bad constraints…).
    #[error("the catalog has {} error(s):\n{}", .0.errors().count(), errors_of(.0))]
    Invalid(Report),
}

fn errors_of(report: &Report) -> String {
    report
        .errors()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The tenant's current catalog.
pub async fn load(store: &Store, tenant_id: &str) -> Result<Catalog, CatalogError> {
    from_revisions(&store.current_catalog(tenant_id).await?)
}

/// The catalog the current `revisions` of a tenant make.
fn from_revisions(revisions: &[CatalogRevision]) -> Result<Catalog, CatalogError> {
    let mut bundle: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    for revision in revisions {
        let Some(body) = &revision.body_json else {
            continue;
        };
        let value: Value = serde_json::from_str(body).map_err(|error| StoreError::CorruptRow {
            table: "catalog_entities",
            reason: format!("{} {:?}: {error}", revision.kind, revision.name),
        })?;
        bundle.entry(&revision.kind).or_default().push(value);
    }
    let bundle: Map<String, Value> = bundle
        .into_iter()
        .map(|(kind, items)| (kind.to_owned(), Value::Array(items)))
        .collect();
    Ok(import_bundle_value(Value::Object(bundle))?)
}

/// Replaces the tenant's catalog with `catalog` in one transaction, after validating
/// it: with any validation error nothing is written. Returns the warnings.
pub async fn import(
    store: &Store,
    tenant_id: &str,
    catalog: &Catalog,
    author_id: Option<&str>,
    now_ms: i64,
) -> Result<Report, CatalogError> {
    let report = validate(catalog);
    if report.has_errors() {
        return Err(CatalogError::Invalid(report));
    }
    store
        .replace_catalog(tenant_id, &writes_for(catalog), author_id, now_ms)
        .await?;
    Ok(report)
}

/// The Coopr bundle of the tenant's current catalog.
pub async fn export(store: &Store, tenant_id: &str) -> Result<Value, CatalogError> {
    Ok(export_bundle(&load(store, tenant_id).await?))
}

/// One write per entity of `catalog`, bodies in Coopr's JSON.
pub fn writes_for(catalog: &Catalog) -> Vec<CatalogWrite> {
    let Value::Object(bundle) = export_bundle(catalog) else {
        return Vec::new();
    };
    let mut writes = Vec::with_capacity(catalog.len());
    for (kind, items) in bundle {
        let Value::Array(items) = items else {
            continue;
        };
        for item in items {
            let name = item
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            writes.push(CatalogWrite {
                kind: kind.clone(),
                name,
                body_json: Some(item.to_string()),
            });
        }
    }
    writes
}

/// The part of `catalog` a cluster built from `template` with `layout` on `provider`
/// depends on: the resolved template, the provider, and the services, hardware and
/// images it uses or may add. The cluster keeps this snapshot so later catalog edits do
/// not change it under its feet.
pub fn snapshot(
    catalog: &Catalog,
    template: &ClusterTemplate,
    provider: &str,
    layout: &Layout,
) -> Catalog {
    let mut snapshot = Catalog::new();
    snapshot.insert_clustertemplate(template.clone());
    if let Some(provider) = catalog.provider(provider) {
        snapshot.insert_provider(provider.clone());
    }
    let mut services: BTreeSet<&str> = template
        .compatibility
        .services
        .iter()
        .map(|name| name.as_str())
        .collect();
    for node in &layout.nodes {
        services.extend(node.services.iter().map(|name| name.as_str()));
        if let Some(hardware) = catalog.hardwaretype(node.hardwaretype.as_str()) {
            snapshot.insert_hardwaretype(hardware.clone());
        }
        if let Some(image) = catalog.imagetype(node.imagetype.as_str()) {
            snapshot.insert_imagetype(image.clone());
        }
    }
    for name in services {
        for service in catalog.providers_of(name) {
            snapshot.insert_service(service.clone());
        }
        if let Some(service) = catalog.service(name) {
            snapshot.insert_service(service.clone());
        }
    }
    snapshot
}
