//! The parts of task views that the tasks of one job share, read and parsed once: the
//! cluster's catalog snapshot, the job's plan, the cluster's node rows, and the
//! nodes as macros see them.
//!
//! A fan-out over N nodes runs N tasks that each need every node's row and the whole
//! layout; read and parsed per task, that is N² work (and N copies held at once) that
//! soon costs more than the steps. The tasks of a job start together, so a value
//! missing from the cache is loaded by the first task that asks while the others wait
//! for it, not by every one of them.
//!
//! Nothing here can go stale unnoticed: each value is kept under the version it was
//! read at and reused only by tasks that saw that version. A snapshot's version grows
//! with every write of it, a job's plan never changes once submitted, and the node
//! version is bumped by every node write, in the write's transaction.
//!
//! While a cluster's nodes are being created, nearly every task sees a new node
//! version; reading every row again for each would be N² rows over a create. A new
//! version's rows are built from the newest rows kept and the rows written since (see
//! `Store::nodes_changed_since`), sharing the unchanged rows.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex};

use domain::catalog::Catalog;
use domain::layout::Layout;
use domain::macros::MacroNode;
use tokio::sync::OnceCell;

use crate::store::clusters::nodes::Node;
use crate::sync::lock_unpoisoned;

/// Entries kept per map; past it the map starts over (the jobs that matter refill it
/// on their next task).
const CAPACITY: usize = 256;

/// What a job was submitted with: its layouts, and whether it is forced.
#[derive(Debug)]
pub(crate) struct JobPlan {
    pub from: Option<Arc<Layout>>,
    pub to: Option<Arc<Layout>>,
    /// A forced delete: failed teardown steps are passed over.
    pub forced: bool,
    /// Who asked for the job: whose own credentials its new machines may be made with.
    pub requested_by: Option<String>,
    /// The definitions the job's steps run instead of the cluster's snapshot (stops
    /// aside), and those its stops run: see `queue::ClusterEffects::catalog_json`.
    pub catalog: Option<Arc<Catalog>>,
    pub stop_catalog: Option<Arc<Catalog>>,
}

impl JobPlan {
    /// Whether the job moves services to other definitions than they run now (an
    /// upgrade, or its rollback): a service it starts must then answer its health check
    /// before the step counts as done.
    pub fn changes_definitions(&self) -> bool {
        self.catalog.is_some() || self.stop_catalog.is_some()
    }
}

/// A cluster's node rows by number; unchanged rows are shared between versions.
pub(crate) type NodeRows = Arc<BTreeMap<u32, Arc<Node>>>;

/// A value being loaded or loaded, and the version it is for.
struct Entry<T> {
    version: i64,
    value: Arc<OnceCell<Arc<T>>>,
}

type Map<T> = Mutex<HashMap<String, Entry<T>>>;

#[derive(Default)]
pub(crate) struct ViewCache {
    /// Cluster id → its parsed catalog snapshot, by snapshot version.
    catalogs: Map<Catalog>,
    /// Job id → its plan (version 0: it never changes).
    plans: Map<JobPlan>,
    /// Cluster id → its node rows, by node version.
    nodes: Map<BTreeMap<u32, Arc<Node>>>,
    /// Job id and layout → the nodes as macros see them, by node version.
    macro_nodes: Map<Arc<[MacroNode]>>,
}

impl ViewCache {
    /// The cluster's catalog snapshot as of `version`, parsed by `load` if no task has.
    pub async fn catalog<E, F>(
        &self,
        cluster_id: &str,
        version: i64,
        load: impl FnOnce() -> F,
    ) -> Result<Arc<Catalog>, E>
    where
        F: Future<Output = Result<Catalog, E>>,
    {
        get_or_load(&self.catalogs, cluster_id, version, |_| load()).await
    }

    pub async fn job_plan<E, F>(
        &self,
        job_id: &str,
        load: impl FnOnce() -> F,
    ) -> Result<Arc<JobPlan>, E>
    where
        F: Future<Output = Result<JobPlan, E>>,
    {
        get_or_load(&self.plans, job_id, 0, |_| load()).await
    }

    /// The cluster's node rows, read at node version `version` or later. `load` gets
    /// the rows kept for an older version, and that version, when there are some: it
    /// then need read only what was written since.
    pub async fn nodes<E, F>(
        &self,
        cluster_id: &str,
        version: i64,
        load: impl FnOnce(Option<(i64, NodeRows)>) -> F,
    ) -> Result<NodeRows, E>
    where
        F: Future<Output = Result<BTreeMap<u32, Arc<Node>>, E>>,
    {
        get_or_load(&self.nodes, cluster_id, version, load).await
    }

    /// The nodes of a job's layout as macros see them at node version `version`.
    pub async fn macro_nodes<E, F>(
        &self,
        key: &str,
        version: i64,
        load: impl FnOnce() -> F,
    ) -> Result<Arc<Arc<[MacroNode]>>, E>
    where
        F: Future<Output = Result<Arc<[MacroNode]>, E>>,
    {
        get_or_load(&self.macro_nodes, key, version, |_| load()).await
    }
}

/// The value kept for `key` at `version`, or what `load` returns, kept for the tasks
/// asking next. `load` is given the value it replaces (an older version's, with that
/// version) when that one had loaded. Concurrent callers for one key and version share
/// one `load`; if it fails, each waiting caller tries its own. A caller behind the kept
/// version (it read the version before a write another task has already seen) loads
/// without keeping.
async fn get_or_load<T, E, F>(
    map: &Map<T>,
    key: &str,
    version: i64,
    load: impl FnOnce(Option<(i64, Arc<T>)>) -> F,
) -> Result<Arc<T>, E>
where
    F: Future<Output = Result<T, E>>,
{
    let (cell, replaced) = {
        // Entries are replaced whole, so a panicking holder leaves the map consistent.
        let mut map = lock_unpoisoned(map);
        match map.get(key) {
            Some(entry) if entry.version == version => (Some(entry.value.clone()), None),
            Some(entry) if entry.version > version => (None, None),
            older => {
                let replaced = older.and_then(|entry| {
                    entry
                        .value
                        .get()
                        .map(|value| (entry.version, Arc::clone(value)))
                });
                if map.len() >= CAPACITY && !map.contains_key(key) {
                    map.clear();
                }
                let value = Arc::new(OnceCell::new());
                map.insert(
                    key.to_owned(),
                    Entry {
                        version,
                        value: value.clone(),
                    },
                );
                (Some(value), replaced)
            }
        }
    };
    match cell {
        Some(cell) => cell
            .get_or_try_init(|| async { load(replaced).await.map(Arc::new) })
            .await
            .cloned(),
        None => load(None).await.map(Arc::new),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn concurrent_askers_share_one_load_per_version() {
        let map: Arc<Map<String>> = Arc::default();
        let loads = Arc::new(AtomicUsize::new(0));
        let load = |text: &'static str| {
            let loads = loads.clone();
            move |_: Option<(i64, Arc<String>)>| async move {
                loads.fetch_add(1, Ordering::SeqCst);
                tokio::task::yield_now().await;
                Ok::<_, ()>(text.to_owned())
            }
        };
        let mut askers = tokio::task::JoinSet::new();
        for _ in 0..50 {
            let (map, load) = (map.clone(), load("v1"));
            askers.spawn(async move { get_or_load(&map, "c", 1, load).await });
        }
        while let Some(value) = askers.join_next().await {
            assert_eq!(*value.unwrap().unwrap(), "v1");
        }
        assert_eq!(loads.load(Ordering::SeqCst), 1);

        // A newer version replaces the value; an older asker loads its own, unkept.
        assert_eq!(*get_or_load(&map, "c", 2, load("v2")).await.unwrap(), "v2");
        assert_eq!(
            *get_or_load(&map, "c", 1, load("old")).await.unwrap(),
            "old"
        );
        assert_eq!(
            *get_or_load(&map, "c", 2, load("unused")).await.unwrap(),
            "v2"
        );
        assert_eq!(loads.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn a_failed_load_is_not_kept() {
        let map: Map<String> = Mutex::default();
        let failed = get_or_load(&map, "c", 1, |_| async { Err::<String, _>("db down") }).await;
        assert_eq!(failed, Err("db down"));
        let loaded = get_or_load(&map, "c", 1, |_| async { Ok::<_, &str>("v1".to_owned()) });
        assert_eq!(*loaded.await.unwrap(), "v1");
    }

    #[tokio::test]
    async fn a_newer_version_is_loaded_from_the_value_it_replaces() {
        let map: Map<String> = Mutex::default();
        let first = get_or_load(&map, "c", 1, |replaced| async move {
            assert!(replaced.is_none());
            Ok::<_, ()>("rows at 1".to_owned())
        });
        assert_eq!(*first.await.unwrap(), "rows at 1");
        let second = get_or_load(&map, "c", 3, |replaced| async move {
            let (version, rows) = replaced.expect("the rows kept at version 1");
            Ok::<_, ()>(format!("{rows} + changes since {version}"))
        });
        assert_eq!(*second.await.unwrap(), "rows at 1 + changes since 1");
        // A caller behind the kept version starts from nothing.
        let behind = get_or_load(&map, "c", 2, |replaced| async move {
            assert!(replaced.is_none());
            Ok::<_, ()>("rows at 2".to_owned())
        });
        assert_eq!(*behind.await.unwrap(), "rows at 2");
    }
}
