//! Cluster templates and partial templates (docs/coopr-format.md §2.4, §2.5): what a
//! cluster may hold, what it holds by default, how its services must be laid out, and its
//! lease.

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use super::common::{Count, EntityMeta, Extra, Link, Origin, TemplateRef};
use super::lease::{DurationMs, Lease, LeaseError};
use super::parameters::Parameters;
use crate::names::{
    GroupName, HardwareTypeName, ImageTypeName, ProviderName, ServiceName, TemplateName,
};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClusterTemplate {
    pub name: TemplateName,
    #[serde(flatten)]
    pub meta: EntityMeta,
    pub compatibility: Compatibility,
    pub defaults: Defaults,
    /// Absent and empty differ when merging (§2.5), so absence is kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constraints: Option<Constraints>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub administration: Option<Administration>,
    /// Corral's extension: what the user may choose at create time (Coopr templates
    /// have none, and none is written for them).
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub parameters: Parameters,
    /// Corral's extension: the tenant groups whose members may see and use the
    /// template (tenant admins see every template); empty means every user of the
    /// tenant.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupName>,
    pub links: Vec<Link>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extends: Option<TemplateRef>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub includes: Vec<TemplateRef>,
    #[serde(flatten)]
    pub extra: Extra,
    #[serde(skip)]
    pub origin: Origin,
}

/// A reusable template fragment merged in through `includes`. Only its
/// compatibility and defaults take part in a merge; anything else it carries is
/// kept in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartialTemplate {
    pub name: TemplateName,
    #[serde(flatten)]
    pub meta: EntityMeta,
    pub compatibility: Compatibility,
    pub defaults: Defaults,
    /// Config keys of an immutable partial may not be set again by a later member.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub immutable: Option<bool>,
    #[serde(flatten)]
    pub extra: Extra,
    #[serde(skip)]
    pub origin: Origin,
}

/// Whitelists; an empty list allows everything of its kind.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Compatibility {
    pub hardwaretypes: Vec<HardwareTypeName>,
    pub imagetypes: Vec<ImageTypeName>,
    pub services: Vec<ServiceName>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Defaults {
    pub services: Vec<DefaultService>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<ProviderName>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hardwaretype: Option<HardwareTypeName>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub imagetype: Option<ImageTypeName>,
    #[serde(rename = "dnsSuffix", skip_serializing_if = "Option::is_none")]
    pub dns_suffix: Option<String>,
    /// Free-form; string values may hold macros.
    pub config: IndexMap<String, Value>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// Host name suffix when a template sets none.
pub const DEFAULT_DNS_SUFFIX: &str = "local";

/// A default service: a bare name, or `{"name", "config"}` whose config belongs
/// under `defaults.config[name]`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum DefaultService {
    Name(ServiceName),
    Configured {
        name: ServiceName,
        #[serde(skip_serializing_if = "Option::is_none")]
        config: Option<Value>,
        #[serde(flatten)]
        extra: Extra,
    },
}

impl DefaultService {
    pub fn name(&self) -> &ServiceName {
        match self {
            DefaultService::Name(name) | DefaultService::Configured { name, .. } => name,
        }
    }
}

impl Defaults {
    pub fn service_names(&self) -> impl Iterator<Item = &ServiceName> {
        self.services.iter().map(DefaultService::name)
    }

    /// `config` with each object-form default service's config under its name, as
    /// Coopr's writer flattens it (an explicit `config[name]` wins).
    pub fn effective_config(&self) -> IndexMap<String, Value> {
        let mut config = self.config.clone();
        for service in &self.services {
            if let DefaultService::Configured {
                name,
                config: Some(extra_config),
                ..
            } = service
            {
                config
                    .entry(name.as_str().to_owned())
                    .or_insert_with(|| extra_config.clone());
            }
        }
        config
    }

    pub fn dns_suffix_or_default(&self) -> &str {
        self.dns_suffix.as_deref().unwrap_or(DEFAULT_DNS_SUFFIX)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Constraints {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<SizeConstraint>,
    pub layout: LayoutConstraints,
    /// Per-service constraints; entries for services not on the cluster are ignored.
    pub services: IndexMap<ServiceName, ServiceConstraint>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SizeConstraint {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<Count>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<Count>,
    /// Corral's extension: only sizes `min + k * step` (`step: 2` from `min: 1` gives
    /// the odd sizes a quorum needs). Coopr keeps it as an unknown key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<Count>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl SizeConstraint {
    /// Distance between allowed sizes (default 1; below 1 reads as 1, validation
    /// reports it).
    pub fn step_nodes(&self) -> u32 {
        nodes_or(self.step, 1).max(1)
    }

    /// Fewest nodes (default 1; negatives read as 0).
    pub fn min_nodes(&self) -> u32 {
        nodes_or(self.min, 1)
    }

    /// Most nodes, `None` = unbounded.
    pub fn max_nodes(&self) -> Option<u32> {
        bounded_nodes(self.max)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LayoutConstraints {
    /// Groups whose members, when on the cluster, are always placed together.
    pub mustcoexist: Vec<Vec<ServiceName>>,
    /// Groups that may never be complete on one node.
    pub cantcoexist: Vec<Vec<ServiceName>>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ServiceConstraint {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quantities: Option<Quantities>,
    /// Allowed hardware types; empty = any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hardwaretypes: Vec<HardwareTypeName>,
    /// Allowed image types; empty = any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub imagetypes: Vec<ImageTypeName>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl ServiceConstraint {
    /// Fewest nodes carrying the service (default 0).
    pub fn min_nodes(&self) -> u32 {
        nodes_or(self.quantities.as_ref().and_then(|q| q.min), 0)
    }

    /// Most nodes carrying the service, `None` = unbounded.
    pub fn max_nodes(&self) -> Option<u32> {
        bounded_nodes(self.quantities.as_ref().and_then(|q| q.max))
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Quantities {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<Count>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<Count>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Administration {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaseduration: Option<LeaseDuration>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// Lease lengths; each 0 (or absent) means unlimited.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LeaseDuration {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial: Option<Lease>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<Lease>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<Lease>,
    /// How long an expired cluster waits, its services stopped, before it is deleted;
    /// absent (or 0) = no grace: deleted at expiry. Corral's own field, not Coopr's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grace: Option<Lease>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl LeaseDuration {
    /// The first lease; absent = unlimited.
    pub fn initial_duration(&self) -> Result<DurationMs, LeaseError> {
        duration_or_unlimited(self.initial.as_ref())
    }

    /// The longest total lease; absent = unlimited.
    pub fn max_duration(&self) -> Result<DurationMs, LeaseError> {
        duration_or_unlimited(self.max.as_ref())
    }

    /// How much one extension adds; absent = unlimited.
    pub fn step_duration(&self) -> Result<DurationMs, LeaseError> {
        duration_or_unlimited(self.step.as_ref())
    }

    /// The grace after expiry; `None` when there is none (absent or 0).
    pub fn grace_duration(&self) -> Result<Option<DurationMs>, LeaseError> {
        // 0 reads as "unlimited" elsewhere; an unlimited grace would never delete, so
        // 0 (or absent) means no grace here.
        let grace = duration_or_unlimited(self.grace.as_ref())?;
        Ok((!grace.is_unlimited()).then_some(grace))
    }
}

fn duration_or_unlimited(lease: Option<&Lease>) -> Result<DurationMs, LeaseError> {
    lease.map_or(Ok(DurationMs::UNLIMITED), Lease::duration)
}

/// A count of nodes, or `default` when absent. Negatives read as 0 (validation
/// reports them) and counts past `u32::MAX` as `u32::MAX`.
fn nodes_or(count: Option<Count>, default: u32) -> u32 {
    count.map_or(default, |count| clamp_u32(count.value))
}

/// A largest count of nodes; `None` when absent or Coopr's unbounded marker.
fn bounded_nodes(max: Option<Count>) -> Option<u32> {
    max.and_then(Count::bounded).map(clamp_u32)
}

fn clamp_u32(value: i64) -> u32 {
    u32::try_from(value.max(0)).unwrap_or(u32::MAX)
}

impl ClusterTemplate {
    pub fn new(name: TemplateName) -> Self {
        Self {
            name,
            meta: EntityMeta::default(),
            compatibility: Compatibility::default(),
            defaults: Defaults::default(),
            constraints: None,
            administration: None,
            parameters: Parameters::new(),
            groups: Vec::new(),
            links: Vec::new(),
            extends: None,
            includes: Vec::new(),
            extra: Extra::new(),
            origin: Origin::none(),
        }
    }

    /// Whether a member of `groups` may see and use the template: a template limited to
    /// no group is open to every user of its tenant. Ask the resolved template (a child
    /// inherits its parent's groups); tenant admins pass over this (the caller knows).
    pub fn open_to<'a>(&self, groups: impl IntoIterator<Item = &'a GroupName>) -> bool {
        self.groups.is_empty() || groups.into_iter().any(|group| self.groups.contains(group))
    }

    /// Size bounds with Coopr's defaults (1, unbounded).
    pub fn size(&self) -> SizeConstraint {
        self.constraints
            .as_ref()
            .and_then(|c| c.size.clone())
            .unwrap_or_default()
    }

    /// The constraint on `service`, if the template has one.
    pub fn service_constraint(&self, service: &str) -> Option<&ServiceConstraint> {
        self.constraints.as_ref()?.services.get(service)
    }

    pub fn layout(&self) -> Option<&LayoutConstraints> {
        self.constraints.as_ref().map(|c| &c.layout)
    }

    pub fn lease(&self) -> Option<&LeaseDuration> {
        self.administration.as_ref()?.leaseduration.as_ref()
    }

    /// True if it needs [`crate::catalog::Catalog::resolved_template`] to be usable.
    pub fn has_parents(&self) -> bool {
        self.extends.is_some() || !self.includes.is_empty()
    }
}

impl PartialTemplate {
    pub fn new(name: TemplateName) -> Self {
        Self {
            name,
            meta: EntityMeta::default(),
            compatibility: Compatibility::default(),
            defaults: Defaults::default(),
            immutable: None,
            extra: Extra::new(),
            origin: Origin::none(),
        }
    }

    pub fn is_immutable(&self) -> bool {
        self.immutable.unwrap_or(false)
    }
}
