//! The parts of task views that the tasks of one job share, parsed once: the
//! cluster's catalog snapshot, the job's layouts, and the cluster's node rows.
//!
//! A fan-out over N nodes runs N tasks that each need every node's row and the whole
//! layout; read and parsed per task, that is N² work that soon costs more than the
//! steps. Nothing here can go stale unnoticed: a snapshot is reused only while the
//! cluster row holds the very same JSON, a job's layouts never change once submitted,
//! and node rows are reused only while the cluster's node version (bumped by every
//! node write after the write) is the one they were read under.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use domain::catalog::Catalog;
use domain::layout::Layout;

use crate::store::clusters::nodes::Node;

/// Entries kept per map; past it the map starts over (the jobs that matter refill it
/// on their next task).
const CAPACITY: usize = 256;

/// The layouts a job was submitted with.
#[derive(Debug)]
pub(crate) struct JobLayouts {
    pub from: Option<Arc<Layout>>,
    pub to: Option<Arc<Layout>>,
}

pub(crate) type NodeRows = Arc<BTreeMap<u32, Node>>;

#[derive(Default)]
pub(crate) struct ViewCache {
    /// Cluster id → the snapshot JSON and what it parsed to.
    catalogs: Mutex<HashMap<String, (String, Arc<Catalog>)>>,
    /// Job id → its layouts.
    layouts: Mutex<HashMap<String, Arc<JobLayouts>>>,
    /// Cluster id → its node rows and the node version they were read under.
    nodes: Mutex<HashMap<String, (i64, NodeRows)>>,
}

impl ViewCache {
    pub fn catalog(&self, cluster_id: &str, json: &str) -> Option<Arc<Catalog>> {
        lock(&self.catalogs)
            .get(cluster_id)
            .filter(|(cached, _)| cached == json)
            .map(|(_, catalog)| catalog.clone())
    }

    pub fn keep_catalog(&self, cluster_id: &str, json: &str, catalog: Arc<Catalog>) {
        insert(&self.catalogs, cluster_id, (json.to_owned(), catalog));
    }

    pub fn layouts(&self, job_id: &str) -> Option<Arc<JobLayouts>> {
        lock(&self.layouts).get(job_id).cloned()
    }

    pub fn keep_layouts(&self, job_id: &str, layouts: Arc<JobLayouts>) {
        insert(&self.layouts, job_id, layouts);
    }

    pub fn nodes(&self, cluster_id: &str, version: i64) -> Option<NodeRows> {
        lock(&self.nodes)
            .get(cluster_id)
            .filter(|(cached, _)| *cached == version)
            .map(|(_, nodes)| nodes.clone())
    }

    pub fn keep_nodes(&self, cluster_id: &str, version: i64, nodes: NodeRows) {
        insert(&self.nodes, cluster_id, (version, nodes));
    }
}

fn lock<T>(map: &Mutex<T>) -> MutexGuard<'_, T> {
    // Entries are replaced whole, so a panicking holder leaves the map consistent.
    map.lock().unwrap_or_else(PoisonError::into_inner)
}

fn insert<T>(map: &Mutex<HashMap<String, T>>, key: &str, value: T) {
    let mut map = lock(map);
    if map.len() >= CAPACITY && !map.contains_key(key) {
        map.clear();
    }
    map.insert(key.to_owned(), value);
}
