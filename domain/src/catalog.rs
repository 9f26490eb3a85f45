//! The admin catalog: providers, hardware and image types, services, cluster and
//! partial templates (docs/coopr-format.md §1–§3).
//!
//! Entities are typed views over Coopr's JSON that keep every unknown key (`extra`
//! at each level) and the JSON they were imported from (`origin`), so Coopr
//! catalogs go through Corral unchanged. [`coopr`] reads and writes that JSON,
//! [`corral`] is the same model normalised, [`Catalog::resolved_template`] merges
//! `extends`/`includes`, and [`validate`] reports every problem at once.
//!
//! Persist entities with [`coopr::entity_to_value`] and read them back with
//! [`coopr::entity_from_value`] (or serde's `Deserialize`, which does the same):
//! that round trip is lossless. Serde's `Serialize` writes the typed form only
//! (unknown keys included, original key order and spelling not).

pub mod automator;
pub mod coopr;
pub mod corral;
pub mod form_fields;
pub mod healing;
pub mod health;
pub mod parameters;

mod common;
mod lease;
mod machine;
mod provider;
mod resolve;
mod service;
mod template;
pub mod validate;

use indexmap::IndexMap;

pub use common::{Count, EntityMeta, Extra, Link, Origin, TemplateRef, UNBOUNDED};
pub use lease::{DurationMs, Lease, LeaseError};
pub use machine::{HardwareType, ImageType, ProviderMap, ProviderMapped};
pub use provider::{
    Provider, DOCKER_PROVIDER, EC2_PROVIDER, EXEC_PROVIDER, LOCAL_PROVIDER, SSH_POOL_PROVIDER,
    SUPPORTED_PROVIDER_TYPES,
};
pub use resolve::ResolveError;
pub use service::{ActionSpec, Dependencies, DependencyStage, Provisioner, Service, ServiceAction};
pub use template::{
    Administration, ClusterTemplate, Compatibility, Constraints, DefaultService, Defaults,
    LayoutConstraints, LeaseDuration, PartialTemplate, Quantities, ServiceConstraint,
    SizeConstraint, DEFAULT_DNS_SUFFIX,
};

use crate::names::{HardwareTypeName, ImageTypeName, ProviderName, ServiceName, TemplateName};

/// Every entity of one tenant's catalog, keyed by name, in import order.
///
/// Keys must equal the entities' own names; the `insert` methods keep that so.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalog {
    pub providers: IndexMap<ProviderName, Provider>,
    pub hardwaretypes: IndexMap<HardwareTypeName, HardwareType>,
    pub imagetypes: IndexMap<ImageTypeName, ImageType>,
    pub services: IndexMap<ServiceName, Service>,
    pub clustertemplates: IndexMap<TemplateName, ClusterTemplate>,
    pub partialtemplates: IndexMap<TemplateName, PartialTemplate>,
    /// Unknown top-level keys of an imported bundle.
    pub extra: Extra,
}

impl Catalog {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn provider(&self, name: &str) -> Option<&Provider> {
        self.providers.get(name)
    }

    pub fn hardwaretype(&self, name: &str) -> Option<&HardwareType> {
        self.hardwaretypes.get(name)
    }

    pub fn imagetype(&self, name: &str) -> Option<&ImageType> {
        self.imagetypes.get(name)
    }

    pub fn service(&self, name: &str) -> Option<&Service> {
        self.services.get(name)
    }

    pub fn clustertemplate(&self, name: &str) -> Option<&ClusterTemplate> {
        self.clustertemplates.get(name)
    }

    pub fn partialtemplate(&self, name: &str) -> Option<&PartialTemplate> {
        self.partialtemplates.get(name)
    }

    /// Services answering to `name`: the service so named, if any, then every
    /// service that `provides` it, in catalog order.
    pub fn providers_of<'a, 'n>(&'a self, name: &'n str) -> impl Iterator<Item = &'a Service> + 'n
    where
        'a: 'n,
    {
        self.services
            .values()
            .filter(move |service| service.answers_to(name))
    }

    /// True if `name` is a service or an alias some service provides.
    pub fn is_service_or_alias(&self, name: &str) -> bool {
        self.providers_of(name).next().is_some()
    }

    /// Replaces (or adds) an entity, keyed by its name; returns the previous one.
    pub fn insert_provider(&mut self, provider: Provider) -> Option<Provider> {
        self.providers.insert(provider.name.clone(), provider)
    }

    pub fn insert_hardwaretype(&mut self, hardwaretype: HardwareType) -> Option<HardwareType> {
        self.hardwaretypes
            .insert(hardwaretype.name.clone(), hardwaretype)
    }

    pub fn insert_imagetype(&mut self, imagetype: ImageType) -> Option<ImageType> {
        self.imagetypes.insert(imagetype.name.clone(), imagetype)
    }

    pub fn insert_service(&mut self, service: Service) -> Option<Service> {
        self.services.insert(service.name.clone(), service)
    }

    pub fn insert_clustertemplate(&mut self, template: ClusterTemplate) -> Option<ClusterTemplate> {
        self.clustertemplates
            .insert(template.name.clone(), template)
    }

    pub fn insert_partialtemplate(&mut self, template: PartialTemplate) -> Option<PartialTemplate> {
        self.partialtemplates
            .insert(template.name.clone(), template)
    }

    /// Number of entities of all kinds.
    pub fn len(&self) -> usize {
        self.providers.len()
            + self.hardwaretypes.len()
            + self.imagetypes.len()
            + self.services.len()
            + self.clustertemplates.len()
            + self.partialtemplates.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The six entity kinds, named as in Coopr's bundle keys and catalog folders (also
/// their serde names, the same words as [`EntityKind::key`]).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum EntityKind {
    #[serde(rename = "providers")]
    Provider,
    #[serde(rename = "hardwaretypes")]
    HardwareType,
    #[serde(rename = "imagetypes")]
    ImageType,
    #[serde(rename = "services")]
    Service,
    #[serde(rename = "clustertemplates")]
    ClusterTemplate,
    #[serde(rename = "partialtemplates")]
    PartialTemplate,
}

impl EntityKind {
    pub const ALL: [EntityKind; 6] = [
        EntityKind::Provider,
        EntityKind::HardwareType,
        EntityKind::ImageType,
        EntityKind::Service,
        EntityKind::ClusterTemplate,
        EntityKind::PartialTemplate,
    ];

    /// The bundle key and folder name: `providers`, `hardwaretypes`…
    pub fn key(self) -> &'static str {
        match self {
            EntityKind::Provider => "providers",
            EntityKind::HardwareType => "hardwaretypes",
            EntityKind::ImageType => "imagetypes",
            EntityKind::Service => "services",
            EntityKind::ClusterTemplate => "clustertemplates",
            EntityKind::PartialTemplate => "partialtemplates",
        }
    }

    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.key() == key)
    }
}

#[cfg(test)]
mod entity_kind_tests {
    use super::EntityKind;

    #[test]
    fn entity_kinds_serialise_as_their_keys() {
        for kind in EntityKind::ALL {
            let json = serde_json::to_value(kind).expect("serialises");
            assert_eq!(json, serde_json::Value::from(kind.key()));
            assert_eq!(serde_json::from_value::<EntityKind>(json).ok(), Some(kind));
        }
    }
}
