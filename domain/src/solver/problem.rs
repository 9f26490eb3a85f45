//! The solver's normalised input: one cluster request with every catalog lookup done.
//!
//! The catalog model is richer (aliases, providers, partial templates); by the time a
//! request reaches the solver those are resolved into plain candidate lists and
//! per-service constraints, so the solver never touches the catalog.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::layout::NodeLayout;
use crate::names::{HardwareTypeName, ImageTypeName, ProviderName, ServiceName, TemplateName};

/// One cluster layout request, normalised.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayoutProblem {
    pub template: TemplateName,
    /// Requested node count.
    pub size: u32,
    pub size_bounds: SizeBounds,
    /// Services on the cluster, aliases and defaults already resolved.
    pub services: Vec<ServiceName>,
    pub hardware: TypeCandidates<HardwareTypeName>,
    pub images: TypeCandidates<ImageTypeName>,
    pub layout: LayoutGroups,
    /// `constraints.services`; an entry makes its service *constrained* (§4 stage 1)
    /// even when it sets nothing. Entries for services not on the cluster are ignored.
    pub service_constraints: BTreeMap<ServiceName, ServiceConstraint>,
}

/// `constraints.size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizeBounds {
    pub min: u32,
    /// `None` = unbounded.
    pub max: Option<u32>,
    /// Only `min + k * step` (at least 1).
    #[serde(default = "one")]
    pub step: u32,
}

fn one() -> u32 {
    1
}

impl Default for SizeBounds {
    fn default() -> Self {
        Self {
            min: 1,
            max: None,
            step: 1,
        }
    }
}

impl SizeBounds {
    pub fn contains(&self, size: u32) -> bool {
        size >= self.min && self.max.is_none_or(|max| size <= max) && self.on_step(size)
    }

    /// Whether `size` is one of `min + k * step` (sizes below `min` are not).
    pub fn on_step(&self, size: u32) -> bool {
        size >= self.min && (size - self.min).is_multiple_of(self.step.max(1))
    }

    /// The largest allowed size at most `size`, if any.
    pub fn step_down(&self, size: u32) -> Option<u32> {
        let size = self.max.map_or(size, |max| size.min(max));
        (size >= self.min).then(|| size - (size - self.min) % self.step.max(1))
    }

    /// The smallest allowed size at least `size`, if any.
    pub fn step_up(&self, size: u32) -> Option<u32> {
        let size = size.max(self.min);
        let step = self.step.max(1);
        let up = size.checked_add((step - (size - self.min) % step) % step)?;
        self.max.is_none_or(|max| up <= max).then_some(up)
    }
}

/// Hardware or image types a node may get.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypeCandidates<T> {
    /// Usable types in preference order: the preferred one first, then the rest in
    /// name order (Coopr picks the smallest name when it has several).
    pub candidates: Vec<T>,
    /// The template default. When set it must be `candidates[0]`; the solver first
    /// tries it alone (Coopr's answer) and falls back to the other candidates only
    /// when that cannot satisfy the request. A type named in the request is binding:
    /// pass it as the only candidate.
    pub preferred: Option<T>,
    /// Types that were considered but cannot be used, kept to explain failures.
    pub unusable: Vec<UnusableType<T>>,
}

impl<T> TypeCandidates<T> {
    /// Candidates with no preference, in the given order.
    pub fn any_of(candidates: Vec<T>) -> Self {
        Self {
            candidates,
            preferred: None,
            unusable: Vec::new(),
        }
    }
}

/// A type that was considered and excluded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnusableType<T> {
    pub name: T,
    pub why: Unusable,
}

/// Why a hardware or image type cannot be used on this cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unusable {
    /// Outside the template's compatibility list.
    NotCompatible,
    /// No `flavor` (hardware) or `image` (image type) for the provider.
    NotOnProvider(ProviderName),
    /// Not a known type.
    Unknown,
}

/// `constraints.layout`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayoutGroups {
    pub must_coexist: Vec<Vec<ServiceName>>,
    pub cant_coexist: Vec<Vec<ServiceName>>,
}

/// `constraints.services.<s>`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceConstraint {
    /// Minimum nodes carrying the service. Corral places every service at least once,
    /// so 0 behaves as 1.
    pub min: u32,
    /// `None` = unbounded.
    pub max: Option<u32>,
    /// Allowed hardware types; empty = any.
    pub hardware: Vec<HardwareTypeName>,
    /// Allowed image types; empty = any.
    pub images: Vec<ImageTypeName>,
}

/// Nodes of a live cluster that a new solve must keep.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Existing {
    /// The cluster's current nodes; their numbers, hardware and images never change.
    pub nodes: Vec<NodeLayout>,
    /// May new services be placed onto these nodes (add services)? When false the
    /// existing nodes are kept exactly as they are (add nodes).
    pub extend_nodes: bool,
    /// Largest total node count the request allows. `LayoutProblem::size` is the smallest;
    /// the solver uses the fewest nodes in between that work. `None` = exactly
    /// `LayoutProblem::size`.
    pub grow_up_to: Option<u32>,
}
