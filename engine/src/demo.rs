//! The demo catalog (`demo/` at the repository root): a `local` provider, hardware and
//! image types, services that really run on local nodes (a key-value store, a web app,
//! a load balancer, Stackato-style roles) and the templates `web-stack`, `kv-cluster`
//! and `paas`. It is compiled into the binary so a first start needs no files: the
//! server loads it into the default tenant when that tenant's catalog is empty.

use sha2::{Digest, Sha256};

use crate::catalog::CatalogError;
use crate::resources::{ResourceError, ResourceFiles, ResourceKind, Upload};
use crate::store::audit::AuditEntry;
use crate::store::{Store, StoreError};
use domain::catalog::coopr::{import_bundle, ImportError};
use domain::catalog::Catalog;

/// The catalog bundle, in Coopr's JSON.
pub const CATALOG_JSON: &str = include_str!("../../demo/catalog.json");

/// The plugin resources (kind `scripts`) the demo services run.
pub const SCRIPTS: [(&str, &[u8]); 2] = [
    (
        "corral-demo.sh",
        include_bytes!("../../demo/scripts/corral-demo.sh"),
    ),
    (
        "corral-demo.py",
        include_bytes!("../../demo/scripts/corral-demo.py"),
    ),
];

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("the built-in demo catalog does not decode: {0}")]
    Decode(#[from] ImportError),
    #[error("loading the demo catalog: {0}")]
    Catalog(#[from] CatalogError),
    #[error("uploading the demo scripts: {0}")]
    Resource(#[from] ResourceError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The demo catalog, decoded.
pub fn catalog() -> Result<Catalog, DemoError> {
    Ok(import_bundle(CATALOG_JSON)?)
}

/// What [`load_if_empty`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Loaded {
    /// The tenant already had a catalog; nothing changed.
    Skipped,
    /// The demo catalog and its scripts are the tenant's now.
    Loaded { templates: Vec<String> },
}

/// Loads the demo catalog into `tenant_id` if its catalog is empty: uploads and stages
/// the scripts (unless the same bytes are staged already), imports the catalog and
/// writes an audit entry. A tenant with any catalog entity is left alone.
pub async fn load_if_empty(
    store: &Store,
    resources: &ResourceFiles,
    tenant_id: &str,
    now_ms: i64,
) -> Result<Loaded, DemoError> {
    if !crate::catalog::load(store, tenant_id).await?.is_empty() {
        return Ok(Loaded::Skipped);
    }
    let catalog = catalog()?;
    // Scripts first: a catalog whose scripts are missing would fail at bootstrap.
    install_scripts(store, resources, tenant_id, now_ms).await?;
    crate::catalog::import(store, tenant_id, &catalog, None, now_ms).await?;
    let templates: Vec<String> = catalog
        .clustertemplates
        .keys()
        .map(|name| name.to_string())
        .collect();
    let entry = AuditEntry {
        id: uuid::Uuid::new_v4().to_string(),
        tenant_id: tenant_id.to_owned(),
        actor_id: None,
        actor_name: "corral".to_owned(),
        action: "catalog.demo".to_owned(),
        target_kind: "catalog".to_owned(),
        target: "demo".to_owned(),
        address: None,
        before_json: None,
        after_json: serde_json::to_string(&serde_json::json!({
            "templates": templates, "entities": catalog.len(),
        }))
        .ok(),
        at_ms: now_ms,
    };
    store.append_audit(&entry).await?;
    Ok(Loaded::Loaded { templates })
}

/// Uploads and stages each demo script whose bytes differ from the staged version.
pub async fn install_scripts(
    store: &Store,
    resources: &ResourceFiles,
    tenant_id: &str,
    now_ms: i64,
) -> Result<(), DemoError> {
    let staged = resources.staged(store, tenant_id).await?;
    for (name, bytes) in SCRIPTS {
        let sha = hex_sha256(bytes);
        let current = staged
            .iter()
            .any(|r| r.kind == ResourceKind::Scripts && r.name == name && r.sha256 == sha);
        if current {
            continue;
        }
        let upload = Upload {
            tenant_id,
            kind: ResourceKind::Scripts,
            name,
            author_id: None,
        };
        let version = resources.upload(store, &upload, bytes, now_ms).await?;
        resources
            .stage(
                store,
                tenant_id,
                ResourceKind::Scripts,
                name,
                version.version,
            )
            .await?;
    }
    Ok(())
}

fn hex_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_demo_catalog_is_valid() {
        let catalog = catalog().unwrap();
        let report = domain::catalog::validate::validate(&catalog);
        assert!(!report.has_errors(), "{report}");
        for template in ["web-stack", "kv-cluster", "paas"] {
            assert!(catalog.clustertemplate(template).is_some(), "{template}");
        }
    }

    #[test]
    fn every_script_a_service_names_is_embedded() {
        let catalog = catalog().unwrap();
        for service in catalog.services.values() {
            for action in service.provisioner.actions.values() {
                if let Some(script) = action.fields.get("script").and_then(|v| v.as_str()) {
                    assert!(
                        SCRIPTS.iter().any(|(name, _)| *name == script),
                        "{} names {script}",
                        service.name
                    );
                }
            }
        }
    }
}
