//! The demo catalog (`demo/` at the repository root): a `local` provider, hardware and
//! image types, services that really run on local nodes (a key-value store, a web app,
//! a load balancer, Stackato-style roles) and the templates `web-stack`, `kv-cluster`,
//! `paas` and `kv-automated` (its services written as an Ansible playbook and a Puppet
//! manifest). It is compiled into the binary so a first start needs no files: the
//! server loads it into the default tenant when that tenant's catalog is empty.

use api_types::AuditAction;
use sha2::{Digest, Sha256};

use crate::catalog::CatalogError;
use crate::resources::{ResourceError, ResourceFiles, ResourceKind, Upload};
use crate::store::audit::AuditEntry;
use crate::store::{Store, StoreError};
use domain::catalog::coopr::{import_bundle, ImportError};
use domain::catalog::Catalog;

/// The catalog bundle, in Coopr's JSON.
pub const CATALOG_JSON: &str = include_str!("../../demo/catalog.json");

/// The plugin resources the demo services run: scripts, and the Ansible playbook and
/// Puppet manifest of `kv-automated` (kind `files`).
pub const RESOURCES: [(ResourceKind, &str, &[u8]); 4] = [
    (
        ResourceKind::Scripts,
        "corral-demo.sh",
        include_bytes!("../../demo/scripts/corral-demo.sh"),
    ),
    (
        ResourceKind::Scripts,
        "corral-demo.py",
        include_bytes!("../../demo/scripts/corral-demo.py"),
    ),
    (
        ResourceKind::Files,
        "kv.yml",
        include_bytes!("../../demo/files/kv.yml"),
    ),
    (
        ResourceKind::Files,
        "lb.pp",
        include_bytes!("../../demo/files/lb.pp"),
    ),
];

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("the built-in demo catalog does not decode: {0}")]
    Decode(#[from] ImportError),
    #[error("loading the demo catalog: {0}")]
    Catalog(#[from] CatalogError),
    #[error("uploading the demo's plugin resources: {0}")]
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
    // Resources first: a catalog whose resources are missing would fail at bootstrap.
    install_resources(store, resources, tenant_id, now_ms).await?;
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
        action: AuditAction::CatalogDemo,
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

/// Uploads and stages each demo resource whose bytes differ from the staged version.
pub async fn install_resources(
    store: &Store,
    resources: &ResourceFiles,
    tenant_id: &str,
    now_ms: i64,
) -> Result<(), DemoError> {
    let staged = resources.staged(store, tenant_id).await?;
    for (kind, name, bytes) in RESOURCES {
        let sha = hex_sha256(bytes);
        let current = staged
            .iter()
            .any(|r| r.kind == kind && r.name == name && r.sha256 == sha);
        if current {
            continue;
        }
        let upload = Upload {
            tenant_id,
            kind,
            name,
            author_id: None,
        };
        let version = resources.upload(store, &upload, bytes, now_ms).await?;
        resources
            .stage(store, tenant_id, kind, name, version.version)
            .await?;
    }
    Ok(())
}

fn hex_sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
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
        for template in ["web-stack", "kv-cluster", "paas", "kv-automated"] {
            assert!(catalog.clustertemplate(template).is_some(), "{template}");
        }
    }

    fn solve(template: &str, size: u32) -> Result<domain::layout::Layout, String> {
        let catalog = catalog().unwrap();
        let name = domain::names::TemplateName::parse(template).unwrap();
        let template = catalog.resolved_template(&name).unwrap();
        domain::solver::solve_request(
            &catalog,
            &template,
            &domain::solver::SolveRequest::of_size(size),
        )
        .map_err(|error| error.to_string())
    }

    fn count(layout: &domain::layout::Layout, service: &str) -> usize {
        layout
            .nodes
            .iter()
            .filter(|node| node.services.iter().any(|s| s.as_str() == service))
            .count()
    }

    #[test]
    fn kv_cluster_takes_odd_sizes_only() {
        for size in [1, 3, 5, 7] {
            assert_eq!(
                count(&solve("kv-cluster", size).unwrap(), "kv"),
                size as usize
            );
        }
        let even = solve("kv-cluster", 4).unwrap_err();
        assert!(
            even.contains("size 4 is not allowed") && even.contains("3 and 5"),
            "{even}"
        );
        assert!(solve("kv-cluster", 9).is_err());
    }

    #[test]
    fn web_stack_spreads_lb_kv_and_apps() {
        assert!(solve("web-stack", 2)
            .unwrap_err()
            .contains("nearest size that works: 3"));
        for size in 3..=12 {
            let layout = solve("web-stack", size).unwrap();
            assert_eq!(count(&layout, "lb"), 1);
            assert_eq!(count(&layout, "kv"), 1);
            assert_eq!(count(&layout, "app"), size as usize - 2);
            assert_eq!(count(&layout, "base"), size as usize);
        }
    }

    #[test]
    fn paas_keeps_one_core_node_and_scales_routers_and_deas() {
        for size in 1..=10 {
            let layout = solve("paas", size).unwrap();
            assert_eq!(count(&layout, "base"), size as usize);
            for single in ["primary", "controller", "health-manager", "stager", "redis"] {
                assert_eq!(count(&layout, single), 1, "{single} at {size}");
            }
            let core = layout
                .nodes
                .iter()
                .find(|node| node.services.iter().any(|s| s.as_str() == "primary"))
                .unwrap();
            for role in ["controller", "health-manager"] {
                assert!(core.services.iter().any(|s| s.as_str() == role));
            }
            assert!(count(&layout, "router") >= 1 && count(&layout, "dea") >= 1);
        }
        assert!(solve("paas", 11).is_err());
    }

    #[test]
    fn every_action_is_valid_shell() {
        // Action args are pasted into a shell command: a stray quote breaks the step.
        for service in catalog().unwrap().services.values() {
            for (action, spec) in &service.provisioner.actions {
                let text = spec
                    .fields
                    .get("args")
                    .or_else(|| spec.fields.get("run"))
                    .and_then(|value| value.as_str())
                    .unwrap_or_default();
                // Each macro becomes one quoted word when expanded: stand in a plain one.
                let plain: String = text
                    .split('%')
                    .enumerate()
                    .map(|(index, piece)| if index % 2 == 0 { piece } else { "x" })
                    .collect();
                let status = std::process::Command::new("/bin/sh")
                    .args(["-n", "-c", &format!("set -- {plain}")])
                    .status()
                    .unwrap();
                assert!(status.success(), "{} {action}: {text}", service.name);
            }
        }
    }

    #[test]
    fn every_resource_a_service_names_is_embedded() {
        let embedded = |kind: ResourceKind, wanted: &str| {
            RESOURCES
                .iter()
                .any(|(k, name, _)| *k == kind && *name == wanted)
        };
        let catalog = catalog().unwrap();
        for service in catalog.services.values() {
            for action in service.provisioner.actions.values() {
                if let Some(script) = action.fields.get("script").and_then(|v| v.as_str()) {
                    assert!(
                        embedded(ResourceKind::Scripts, script),
                        "{} names {script}",
                        service.name
                    );
                }
                for field in ["playbook", "manifest"] {
                    if let Some(path) = action.fields.get(field).and_then(|v| v.as_str()) {
                        let name = path.strip_prefix("files/").unwrap();
                        assert!(
                            embedded(ResourceKind::Files, name),
                            "{} names {path}",
                            service.name
                        );
                    }
                }
            }
        }
    }
}
