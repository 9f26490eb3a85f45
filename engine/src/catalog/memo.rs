//! Catalogs parsed once and kept, for the views that need one per cluster.
//!
//! A page of 50 clusters needs, for each, its lease limits (from the template in the
//! cluster's catalog snapshot) and what of the tenant's current catalog it is behind.
//! Parsing every snapshot and comparing every entity again on each request was most of
//! the cluster list's time: profiled under `bench http --clusters 2000`, 38 % of the
//! server's samples were in the comparison and 13 % in the lease limits, against 5 %
//! for the rows and their JSON. Clusters built from one catalog revision hold the same
//! snapshot text, so a handful of parses serve thousands of clusters.
//!
//! - A snapshot is kept by its text: the same text always parses to the same catalog,
//!   so an entry is never stale.
//! - A tenant's current catalog is kept with its [`CatalogStamp`] and read again when
//!   the stamp moved: every edit appends a revision, whichever server makes it, so one
//!   aggregate over the tenant's revisions says whether the kept catalog still holds.
//! - What a snapshot is behind a current catalog is kept by the two entries' ids and
//!   the template's name.
//! - A resolved template (extends and includes merged) is kept on its catalog's entry.
//!
//! Every table is bounded (`quick_cache`, S3-FIFO eviction), so a server whose clusters
//! hold thousands of distinct snapshots keeps the ones in use.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use domain::catalog::coopr::{import_bundle, ImportError};
use domain::catalog::{Catalog, ClusterTemplate, EntityKind, ResolveError};
use domain::names::TemplateName;
use domain::upgrade::{drift, DriftKind};
use quick_cache::sync::Cache;

use super::{from_revisions, CatalogError};
use crate::store::catalog::CatalogStamp;
use crate::store::Store;

/// Distinct snapshot texts kept (a cluster list's page rarely holds more than a few).
const SNAPSHOTS: usize = 256;
/// Tenants whose current catalog is kept.
const TENANTS: usize = 256;
/// (snapshot, current catalog, template) comparisons kept.
const COMPARISONS: usize = 4096;
/// Resolved templates kept per catalog.
const TEMPLATES: usize = 64;

/// The kept catalogs of one server (shared by its requests).
pub struct CatalogMemo {
    snapshots: Cache<String, Arc<KeptCatalog>>,
    current: Cache<String, Arc<CurrentCatalog>>,
    behind: Cache<(u64, u64, String), Arc<[MovedEntity]>>,
    /// Ids of kept catalogs, so a comparison names its two sides without their text.
    next_id: AtomicU64,
}

/// A parsed catalog with the templates resolved from it so far.
pub struct KeptCatalog {
    id: u64,
    pub catalog: Catalog,
    templates: Cache<String, Result<Arc<ClusterTemplate>, ResolveError>>,
}

/// A tenant's current catalog, as of `stamp`, with each entity's revision.
pub struct CurrentCatalog {
    stamp: CatalogStamp,
    pub kept: KeptCatalog,
    revisions: HashMap<(String, String), i64>,
}

/// An entity of a cluster's snapshot whose definition moved on (or went).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MovedEntity {
    pub kind: EntityKind,
    pub name: String,
    pub drift: DriftKind,
}

impl Default for CatalogMemo {
    fn default() -> Self {
        Self {
            snapshots: Cache::new(SNAPSHOTS),
            current: Cache::new(TENANTS),
            behind: Cache::new(COMPARISONS),
            next_id: AtomicU64::new(0),
        }
    }
}

impl std::fmt::Debug for CatalogMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CatalogMemo")
            .field("snapshots", &self.snapshots.len())
            .field("tenants", &self.current.len())
            .field("comparisons", &self.behind.len())
            .finish()
    }
}

impl CatalogMemo {
    fn kept(&self, catalog: Catalog) -> KeptCatalog {
        KeptCatalog {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            catalog,
            templates: Cache::new(TEMPLATES),
        }
    }

    /// The catalog a cluster's snapshot text holds, parsed once per distinct text.
    pub fn snapshot(&self, text: &str) -> Result<Arc<KeptCatalog>, ImportError> {
        self.snapshots
            .get_or_insert_with(text, || Ok(Arc::new(self.kept(import_bundle(text)?))))
    }

    /// The tenant's current catalog: the kept one while the tenant's stamp holds,
    /// else read and kept anew.
    pub async fn current(
        &self,
        store: &Store,
        tenant_id: &str,
    ) -> Result<Arc<CurrentCatalog>, CatalogError> {
        let stamp = store.catalog_stamp(tenant_id).await?;
        if let Some(kept) = self.current.get(tenant_id) {
            if kept.stamp == stamp {
                return Ok(kept);
            }
        }
        // Read after the stamp: an edit landing in between makes the kept catalog newer
        // than its stamp, which the next request sees as moved and reads again.
        let revisions = store.current_catalog(tenant_id).await?;
        let catalog = from_revisions(&revisions)?;
        let current = Arc::new(CurrentCatalog {
            stamp,
            kept: self.kept(catalog),
            revisions: revisions
                .into_iter()
                .map(|revision| ((revision.kind, revision.name), revision.version))
                .collect(),
        });
        self.current
            .insert(tenant_id.to_owned(), Arc::clone(&current));
        Ok(current)
    }

    /// What of `current` the `snapshot` of a cluster of `template` is behind (empty
    /// when the cluster runs the current definitions). Without a template (a name that
    /// does not parse) the other entities are still compared.
    pub fn behind(
        &self,
        snapshot: &KeptCatalog,
        current: &CurrentCatalog,
        template: Option<&TemplateName>,
    ) -> Arc<[MovedEntity]> {
        let name = template.map_or("", TemplateName::as_str);
        let key = (snapshot.id, current.kept.id, name.to_owned());
        let Ok(moved) = self
            .behind
            .get_or_insert_with::<_, std::convert::Infallible>(&key, || {
                let resolved = template.and_then(|name| current.kept.template(name).ok());
                Ok(drift(
                    &snapshot.catalog,
                    &current.kept.catalog,
                    resolved.as_deref(),
                )
                .into_iter()
                .map(|entity| MovedEntity {
                    kind: entity.kind,
                    name: entity.name,
                    drift: entity.drift,
                })
                .collect())
            });
        moved
    }
}

impl KeptCatalog {
    /// The template `name` resolved (extends and includes merged), once per catalog.
    pub fn template(&self, name: &TemplateName) -> Result<Arc<ClusterTemplate>, ResolveError> {
        // A failure is kept too: the catalog will not change under this entry.
        let Ok(resolved) = self
            .templates
            .get_or_insert_with::<_, std::convert::Infallible>(name.as_str(), || {
                Ok(self.catalog.resolved_template(name).map(Arc::new))
            });
        resolved
    }
}

impl CurrentCatalog {
    /// The current revision of the entity `name` of `kind` (its bundle key).
    pub fn revision(&self, kind: &str, name: &str) -> Option<i64> {
        self.revisions
            .get(&(kind.to_owned(), name.to_owned()))
            .copied()
    }

    /// The names and current revisions of the entities of `kind` (its bundle key).
    pub fn revisions_of<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = (&'a str, i64)> {
        self.revisions
            .iter()
            .filter(move |((entity_kind, _), _)| entity_kind == kind)
            .map(|((_, name), version)| (name.as_str(), *version))
    }

    /// How many entities of `kind` (its bundle key) the catalog has.
    pub fn count(&self, kind: &str) -> u64 {
        self.revisions_of(kind).count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::CATALOG_JSON;
    use crate::store::tenants::DEFAULT_TENANT_ID;

    fn web_stack() -> TemplateName {
        TemplateName::parse("web-stack".to_owned()).unwrap()
    }

    /// The demo catalog with service `base` described otherwise.
    fn base_edited() -> String {
        CATALOG_JSON.replace("every node: checks", "every node checks")
    }

    #[test]
    fn one_text_is_parsed_once() {
        let memo = CatalogMemo::default();
        let first = memo.snapshot(CATALOG_JSON).unwrap();
        // The same text in another allocation: kept by what it says.
        let copy = CATALOG_JSON.to_owned();
        let again = memo.snapshot(&copy).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        let other = memo.snapshot(&base_edited()).unwrap();
        assert!(!Arc::ptr_eq(&first, &other));
        assert_ne!(first.id, other.id);
    }

    #[test]
    fn a_text_that_is_no_catalog_is_refused_and_not_kept() {
        let memo = CatalogMemo::default();
        assert!(memo.snapshot("{not json").is_err());
        assert_eq!(memo.snapshots.len(), 0);
    }

    #[test]
    fn a_resolved_template_is_kept_and_so_is_a_missing_one() {
        let memo = CatalogMemo::default();
        let kept = memo.snapshot(CATALOG_JSON).unwrap();
        let first = kept.template(&web_stack()).unwrap();
        assert!(Arc::ptr_eq(&first, &kept.template(&web_stack()).unwrap()));
        let missing = TemplateName::parse("gone".to_owned()).unwrap();
        assert!(kept.template(&missing).is_err());
        assert!(kept.template(&missing).is_err());
    }

    #[tokio::test]
    async fn the_current_catalog_is_read_again_when_an_edit_moved_its_stamp() {
        let db = crate::testing::TestDatabase::sqlite();
        let store = Store::open(&db.url).await.unwrap();
        let import = |text: String, at_ms| {
            let store = store.clone();
            async move {
                let catalog = import_bundle(&text).unwrap();
                super::super::import(&store, DEFAULT_TENANT_ID, &catalog, None, at_ms)
                    .await
                    .unwrap();
            }
        };
        import(CATALOG_JSON.to_owned(), 1).await;
        let memo = CatalogMemo::default();
        let first = memo.current(&store, DEFAULT_TENANT_ID).await.unwrap();
        let again = memo.current(&store, DEFAULT_TENANT_ID).await.unwrap();
        assert!(Arc::ptr_eq(&first, &again), "read again without an edit");
        assert_eq!(first.revision("services", "base"), Some(1));
        assert_eq!(first.revision("services", "nope"), None);
        assert_eq!(first.count("clustertemplates"), 4);
        assert_eq!(first.count("services"), 19);

        // A cluster built from the first catalog runs its current definitions...
        let template = first.kept.template(&web_stack()).unwrap();
        let layout = domain::layout::Layout {
            template: web_stack(),
            nodes: Vec::new(),
        };
        let kept = super::super::snapshot(&first.kept.catalog, &template, "local", &layout);
        let text = domain::catalog::coopr::export_bundle(&kept).to_string();
        let snapshot = memo.snapshot(&text).unwrap();
        assert!(memo
            .behind(&snapshot, &first, Some(&web_stack()))
            .is_empty());

        // ...until an edit, which the next read sees.
        import(base_edited(), 2).await;
        let edited = memo.current(&store, DEFAULT_TENANT_ID).await.unwrap();
        assert!(!Arc::ptr_eq(&first, &edited), "an edit went unseen");
        assert_eq!(edited.revision("services", "base"), Some(2));
        let behind = memo.behind(&snapshot, &edited, Some(&web_stack()));
        assert_eq!(
            &behind[..],
            [MovedEntity {
                kind: EntityKind::Service,
                name: "base".to_owned(),
                drift: DriftKind::Changed,
            }]
        );
        assert!(Arc::ptr_eq(
            &behind,
            &memo.behind(&snapshot, &edited, Some(&web_stack()))
        ));
    }
}
