//! What the catalog says a node is made with on a provider: the image type's `image`
//! and `sshuser`, the hardware type's `flavor` and limits (`memory_mb`, `cpus`, `nice`),
//! all from their provider map entries for the provider's name, and the provider's own
//! settings. Create steps and `corral provider test` build their specs here.

use domain::catalog::{Catalog, HardwareType};
use domain::names::{HardwareTypeName, ImageTypeName};

pub(crate) use crate::provider::provider_settings;
use crate::provider::{NodeSpec, ResourceLimits};

/// `base` (the node's id, tenant and cluster) completed from `catalog` for a node of
/// `hardware` and `image` on the provider named `provider`.
pub(crate) fn node_spec(
    catalog: &Catalog,
    provider: &str,
    base: NodeSpec,
    hardware: &HardwareTypeName,
    image: &ImageTypeName,
) -> NodeSpec {
    let hardware_type = catalog.hardwaretype(hardware.as_str());
    let image_type = catalog.imagetype(image.as_str());
    NodeSpec {
        image: image_type
            .and_then(|image| image.image(provider))
            .map(str::to_owned),
        ssh_user: image_type
            .and_then(|image| image.sshuser(provider))
            .map(str::to_owned),
        flavor: hardware_type
            .and_then(|hardware| hardware.flavor(provider))
            .map(str::to_owned),
        limits: hardware_type.map_or_else(ResourceLimits::default, |hardware| {
            hardware_limits(hardware, provider)
        }),
        provider: provider_settings(catalog, provider),
        hardwaretype: Some(hardware.clone()),
        imagetype: Some(image.clone()),
        ..base
    }
}

/// Limits `hardware` asks of `provider`: `memory_mb`, `cpus` and `nice` in its provider
/// map entry (previews check them against the operator's maxima with the same reading).
pub(crate) fn hardware_limits(hardware: &HardwareType, provider: &str) -> ResourceLimits {
    // A number, or a string holding one (Coopr's catalogs write both).
    let setting = |key: &str| {
        hardware
            .providermap
            .get(provider)
            .and_then(|fields| fields.get(key))
            .and_then(|value| {
                value
                    .as_f64()
                    .or_else(|| value.as_str().and_then(|text| text.parse().ok()))
            })
            .filter(|number| number.is_finite() && *number >= 0.0)
    };
    // Whole units: the settings are small positive numbers, so the casts are exact.
    let memory_mb = setting("memory_mb").map(|mb| mb as u64);
    ResourceLimits {
        max_virtual_memory_kib: memory_mb.map(|mb| mb.saturating_mul(1024)),
        nice: setting("nice").map(|nice| nice.min(19.0) as u8),
        memory_mb,
        cpu_millis: setting("cpus").map(|cpus| (cpus * 1000.0).round() as u64),
    }
}
