//! The planner's normalised view of services: what each one provides, what it
//! depends on at install time and at run time, and which actions it defines.
//!
//! It is deliberately smaller than the catalog's service entity, so the planner can
//! be tested with hand-written graphs and stays independent of import details.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

pub use crate::catalog::ServiceAction;
use crate::catalog::{Catalog, DependencyStage, Service};
use crate::names::ServiceName;

/// Position of an action in [`ServiceAction::ALL`], for dense per-action tables.
pub(crate) fn action_index(action: ServiceAction) -> usize {
    ServiceAction::ALL
        .iter()
        .position(|candidate| *candidate == action)
        .unwrap_or(0)
}

/// `requires` (must be on the cluster) and `uses` (ordering only) of one stage.
/// The planner treats both the same: a dependency not on the cluster is dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DependencyLists {
    pub requires: BTreeSet<ServiceName>,
    pub uses: BTreeSet<ServiceName>,
}

impl DependencyLists {
    /// `requires ∪ uses`.
    pub fn all(&self) -> impl Iterator<Item = &ServiceName> {
        self.requires.union(&self.uses)
    }
}

/// What the planner needs to know about one service.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ServiceNode {
    /// Aliases this service offers to dependents.
    pub provides: BTreeSet<ServiceName>,
    /// Orders installs (and removals, reversed).
    pub install: DependencyLists,
    /// Orders initialize and start (and stop, reversed).
    pub runtime: DependencyLists,
    /// Actions with an automator spec; a step exists only if defined here.
    pub actions: BTreeSet<ServiceAction>,
}

impl ServiceNode {
    pub fn defines(&self, action: ServiceAction) -> bool {
        self.actions.contains(&action)
    }

    /// The planner's view of a catalog service.
    pub fn from_catalog(service: &Service) -> Self {
        let names = |list: &[ServiceName]| list.iter().cloned().collect::<BTreeSet<_>>();
        let lists = |stage: &DependencyStage| DependencyLists {
            requires: names(&stage.requires),
            uses: names(&stage.uses),
        };
        Self {
            provides: names(&service.dependencies.provides),
            install: lists(&service.dependencies.install),
            runtime: lists(&service.dependencies.runtime),
            actions: service.provisioner.actions.keys().copied().collect(),
        }
    }
}

/// Every service the planner may meet, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct ServiceGraph {
    services: BTreeMap<ServiceName, ServiceNode>,
}

impl ServiceGraph {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds or replaces a service.
    pub fn insert(&mut self, name: ServiceName, node: ServiceNode) {
        self.services.insert(name, node);
    }

    pub fn get(&self, name: &str) -> Option<&ServiceNode> {
        self.services.get(name)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&ServiceName, &ServiceNode)> {
        self.services.iter()
    }

    /// Every service of a catalog.
    pub fn from_catalog(catalog: &Catalog) -> Self {
        Self::from_services(catalog.services.values())
    }

    /// The given catalog services (for example those a cluster pinned).
    pub fn from_services<'a>(services: impl IntoIterator<Item = &'a Service>) -> Self {
        services
            .into_iter()
            .map(|service| (service.name.clone(), ServiceNode::from_catalog(service)))
            .collect()
    }
}

impl FromIterator<(ServiceName, ServiceNode)> for ServiceGraph {
    fn from_iter<I: IntoIterator<Item = (ServiceName, ServiceNode)>>(iter: I) -> Self {
        Self {
            services: iter.into_iter().collect(),
        }
    }
}

/// Which dependency lists a rule reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DepKind {
    Install,
    Runtime,
}

/// The dependencies of the services on one cluster, resolved to indices into a
/// sorted service list: aliases replaced by their providers, absent services dropped.
#[derive(Debug)]
pub(crate) struct ResolvedDeps {
    pub names: Vec<ServiceName>,
    install: Vec<Vec<usize>>,
    runtime: Vec<Vec<usize>>,
    defined: Vec<[bool; 6]>,
}

impl ResolvedDeps {
    /// Resolves every dependency among `cluster` services. Fails with the first
    /// cluster service missing from `graph`.
    pub fn new(graph: &ServiceGraph, cluster: &BTreeSet<ServiceName>) -> Result<Self, ServiceName> {
        let names: Vec<ServiceName> = cluster.iter().cloned().collect();
        let mut nodes = Vec::with_capacity(names.len());
        for name in &names {
            nodes.push(graph.get(name.as_str()).ok_or_else(|| name.clone())?);
        }
        let index = |name: &str| {
            names
                .binary_search_by(|probe| probe.as_str().cmp(name))
                .ok()
        };
        let mut providers: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (position, node) in nodes.iter().enumerate() {
            for alias in &node.provides {
                providers.entry(alias.as_str()).or_default().push(position);
            }
        }
        // An alias means every cluster service providing it; a service that merely
        // shares the alias's name is then ignored, as in Coopr.
        let resolve = |owner: usize, lists: &DependencyLists| -> Vec<usize> {
            let mut out = BTreeSet::new();
            for dep in lists.all() {
                match providers.get(dep.as_str()) {
                    Some(found) => out.extend(found.iter().copied()),
                    None => out.extend(index(dep.as_str())),
                }
            }
            out.remove(&owner);
            out.into_iter().collect()
        };
        let install = nodes
            .iter()
            .enumerate()
            .map(|(i, node)| resolve(i, &node.install))
            .collect();
        let runtime = nodes
            .iter()
            .enumerate()
            .map(|(i, node)| resolve(i, &node.runtime))
            .collect();
        let defined = nodes
            .iter()
            .map(|node| ServiceAction::ALL.map(|action| node.defines(action)))
            .collect();
        Ok(Self {
            names,
            install,
            runtime,
            defined,
        })
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.names
            .binary_search_by(|probe| probe.as_str().cmp(name))
            .ok()
    }

    pub fn defines(&self, service: usize, action: ServiceAction) -> bool {
        self.defined[service][action_index(action)]
    }

    pub fn direct(&self, service: usize, kind: DepKind) -> &[usize] {
        match kind {
            DepKind::Install => &self.install[service],
            DepKind::Runtime => &self.runtime[service],
        }
    }

    /// The services whose `action` task must be ordered against `service`'s: each
    /// direct dependency that defines `action`, and for one that does not, its own
    /// dependencies in its place (recursively).
    pub fn effective(&self, service: usize, kind: DepKind, action: ServiceAction) -> Vec<usize> {
        let mut out = BTreeSet::new();
        let mut seen = BTreeSet::from([service]);
        let mut stack: Vec<usize> = self.direct(service, kind).to_vec();
        while let Some(dep) = stack.pop() {
            if !seen.insert(dep) {
                continue;
            }
            if self.defines(dep, action) {
                out.insert(dep);
            } else {
                stack.extend_from_slice(self.direct(dep, kind));
            }
        }
        out.into_iter().collect()
    }

    /// `roots` plus everything they transitively depend on at run time.
    pub fn runtime_closure(&self, roots: &BTreeSet<usize>) -> BTreeSet<usize> {
        let mut out = roots.clone();
        let mut stack: Vec<usize> = roots.iter().copied().collect();
        while let Some(service) = stack.pop() {
            for &dep in &self.runtime[service] {
                if out.insert(dep) {
                    stack.push(dep);
                }
            }
        }
        out
    }

    /// `roots` plus everything that transitively depends on them at run time.
    pub fn runtime_dependents_closure(&self, roots: &BTreeSet<usize>) -> BTreeSet<usize> {
        let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); self.len()];
        for (service, deps) in self.runtime.iter().enumerate() {
            for &dep in deps {
                dependents[dep].push(service);
            }
        }
        let mut out = roots.clone();
        let mut stack: Vec<usize> = roots.iter().copied().collect();
        while let Some(service) = stack.pop() {
            for &dependent in &dependents[service] {
                if out.insert(dependent) {
                    stack.push(dependent);
                }
            }
        }
        out
    }

    /// Resolves a name given by a user (a service or an alias) to cluster services.
    pub fn resolve_name(&self, graph: &ServiceGraph, name: &str) -> Vec<usize> {
        let providers: Vec<usize> = self
            .names
            .iter()
            .enumerate()
            .filter(|(_, service)| {
                graph
                    .get(service.as_str())
                    .is_some_and(|node| node.provides.contains(name))
            })
            .map(|(i, _)| i)
            .collect();
        if providers.is_empty() {
            self.index_of(name).into_iter().collect()
        } else {
            providers
        }
    }
}
