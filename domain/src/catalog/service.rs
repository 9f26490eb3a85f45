//! Services (docs/coopr-format.md §2.3): dependencies on other services or aliases, and
//! the automator action to run for each lifecycle stage.

use std::fmt;

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use super::common::{EntityMeta, Extra, Link, Origin};
use crate::names::ServiceName;

/// The service field marking a service that keeps data ([`Service::is_stateful`]).
pub const STATEFUL_FIELD: &str = "stateful";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Service {
    pub name: ServiceName,
    #[serde(flatten)]
    pub meta: EntityMeta,
    pub dependencies: Dependencies,
    pub provisioner: Provisioner,
    pub links: Vec<Link>,
    #[serde(flatten)]
    pub extra: Extra,
    #[serde(skip)]
    pub origin: Origin,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Dependencies {
    /// Aliases this service offers.
    pub provides: Vec<ServiceName>,
    /// Services barred from the same cluster; unknown names are legal.
    pub conflicts: Vec<ServiceName>,
    /// Orders install and remove.
    pub install: DependencyStage,
    /// Orders initialize, start and stop.
    pub runtime: DependencyStage,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DependencyStage {
    /// Must be on the cluster (a service or an alias).
    pub requires: Vec<ServiceName>,
    /// Ordering only, when present; unknown names are legal.
    pub uses: Vec<ServiceName>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl DependencyStage {
    /// `requires` then `uses`: everything this stage orders after.
    pub fn all(&self) -> impl Iterator<Item = &ServiceName> {
        self.requires.iter().chain(&self.uses)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Provisioner {
    pub actions: IndexMap<ServiceAction, ActionSpec>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The lifecycle stages a service may define an action for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ServiceAction {
    Install,
    Configure,
    Initialize,
    Start,
    Stop,
    Remove,
}

impl ServiceAction {
    pub const ALL: [ServiceAction; 6] = [
        ServiceAction::Install,
        ServiceAction::Configure,
        ServiceAction::Initialize,
        ServiceAction::Start,
        ServiceAction::Stop,
        ServiceAction::Remove,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ServiceAction::Install => "install",
            ServiceAction::Configure => "configure",
            ServiceAction::Initialize => "initialize",
            ServiceAction::Start => "start",
            ServiceAction::Stop => "stop",
            ServiceAction::Remove => "remove",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|action| action.as_str() == raw)
    }
}

impl fmt::Display for ServiceAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One action: which automator runs it and with what input.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActionSpec {
    /// The automator: `shell`, `chef-solo`, `docker`…
    #[serde(rename = "type")]
    pub automator: String,
    /// Automator input; values are strings in practice (nested data as JSON text).
    pub fields: IndexMap<String, Value>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl ActionSpec {
    pub fn new(automator: impl Into<String>) -> Self {
        Self {
            automator: automator.into(),
            fields: IndexMap::new(),
            extra: Extra::new(),
        }
    }
}

impl Service {
    pub fn new(name: ServiceName) -> Self {
        Self {
            name,
            meta: EntityMeta::default(),
            dependencies: Dependencies::default(),
            provisioner: Provisioner::default(),
            links: Vec::new(),
            extra: Extra::new(),
            origin: Origin::none(),
        }
    }

    pub fn action(&self, action: ServiceAction) -> Option<&ActionSpec> {
        self.provisioner.actions.get(&action)
    }

    /// Whether the service keeps data on its node that a new node would not have
    /// (`"stateful": true`, a Corral extension kept in the extra fields so Coopr JSON
    /// round-trips it): such a node is only replaced when the user accepts the loss.
    pub fn is_stateful(&self) -> bool {
        self.extra.get(STATEFUL_FIELD).and_then(Value::as_bool) == Some(true)
    }

    /// True if this service answers to `name`: its own name or an alias it provides.
    pub fn answers_to(&self, name: &str) -> bool {
        self.name.as_str() == name
            || self
                .dependencies
                .provides
                .iter()
                .any(|alias| alias.as_str() == name)
    }
}
