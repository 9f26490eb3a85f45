//! Hardware types and image types (docs/coopr-format.md §2.2): named machine shapes and
//! OS images, each mapped per provider to that provider's own identifiers.

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use super::common::{EntityMeta, Extra, Origin};
use crate::names::{HardwareTypeName, ImageTypeName, ProviderName};

/// Per-provider settings: free-form strings (`flavor`, `image`, `sshuser`, cost…).
pub type ProviderMap = IndexMap<ProviderName, IndexMap<String, Value>>;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HardwareType {
    pub name: HardwareTypeName,
    #[serde(flatten)]
    pub meta: EntityMeta,
    pub providermap: ProviderMap,
    #[serde(flatten)]
    pub extra: Extra,
    #[serde(skip)]
    pub origin: Origin,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImageType {
    pub name: ImageTypeName,
    #[serde(flatten)]
    pub meta: EntityMeta,
    pub providermap: ProviderMap,
    #[serde(flatten)]
    pub extra: Extra,
    #[serde(skip)]
    pub origin: Origin,
}

fn setting<'a>(map: &'a ProviderMap, provider: &str, key: &str) -> Option<&'a str> {
    map.get(provider)?.get(key)?.as_str()
}

impl HardwareType {
    pub fn new(name: HardwareTypeName) -> Self {
        Self {
            name,
            meta: EntityMeta::default(),
            providermap: ProviderMap::new(),
            extra: Extra::new(),
            origin: Origin::none(),
        }
    }

    /// The provider's size id: the only key the solver reads.
    pub fn flavor(&self, provider: &str) -> Option<&str> {
        setting(&self.providermap, provider, "flavor")
    }
}

impl ImageType {
    pub fn new(name: ImageTypeName) -> Self {
        Self {
            name,
            meta: EntityMeta::default(),
            providermap: ProviderMap::new(),
            extra: Extra::new(),
            origin: Origin::none(),
        }
    }

    pub fn image(&self, provider: &str) -> Option<&str> {
        setting(&self.providermap, provider, "image")
    }

    pub fn sshuser(&self, provider: &str) -> Option<&str> {
        setting(&self.providermap, provider, "sshuser")
    }
}
