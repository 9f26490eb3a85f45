//! Hardware types and image types (docs/coopr-format.md §2.2): named machine shapes and
//! OS images, each mapped per provider to that provider's own identifiers.
//!
//! The two kinds have the same fields and differ only in the name they carry and the
//! settings read from their map, so both are one generic struct, [`ProviderMapped`].

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use super::common::{EntityMeta, Extra, Origin};
use crate::names::{HardwareTypeName, ImageTypeName, ProviderName};

/// Per-provider settings: free-form strings (`flavor`, `image`, `sshuser`, cost…).
pub type ProviderMap = IndexMap<ProviderName, IndexMap<String, Value>>;

/// A named entity that only maps each provider to its settings: a [`HardwareType`]
/// or an [`ImageType`], told apart by the type of its name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderMapped<Name> {
    pub name: Name,
    #[serde(flatten)]
    pub meta: EntityMeta,
    pub providermap: ProviderMap,
    #[serde(flatten)]
    pub extra: Extra,
    #[serde(skip)]
    pub origin: Origin,
}

/// A machine shape; the solver reads each provider's `flavor`.
pub type HardwareType = ProviderMapped<HardwareTypeName>;

/// An OS image; each provider's `image` and `sshuser` are read.
pub type ImageType = ProviderMapped<ImageTypeName>;

impl<Name> ProviderMapped<Name> {
    pub fn new(name: Name) -> Self {
        Self {
            name,
            meta: EntityMeta::default(),
            providermap: ProviderMap::new(),
            extra: Extra::new(),
            origin: Origin::none(),
        }
    }

    /// A provider's setting `key`, if it is a string.
    fn setting(&self, provider: &str, key: &str) -> Option<&str> {
        self.providermap.get(provider)?.get(key)?.as_str()
    }
}

impl HardwareType {
    /// The provider's size id: the only key the solver reads.
    pub fn flavor(&self, provider: &str) -> Option<&str> {
        self.setting(provider, "flavor")
    }
}

impl ImageType {
    pub fn image(&self, provider: &str) -> Option<&str> {
        self.setting(provider, "image")
    }

    pub fn sshuser(&self, provider: &str) -> Option<&str> {
        self.setting(provider, "sshuser")
    }
}
