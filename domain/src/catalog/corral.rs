//! Corral's own catalog JSON: the Coopr model, normalised.
//!
//! Same entities and keys as Coopr's bundle, so one decoder reads both, but
//! written one way only: leases as strings (`"7d"`, `"90m"`, `"0"` = unlimited),
//! counts as plain integers, no unbounded `2147483647` (absent means unbounded),
//! default services as bare names with their config under `defaults.config`.
//! Unknown keys are kept, as everywhere. [`to_coopr_shape`] goes back to what
//! Coopr's own writer emits (leases in milliseconds).

use serde_json::Value;

use super::coopr::{self, ImportError};
use super::{
    Catalog, ClusterTemplate, Count, DefaultService, EntityMeta, Lease, LeaseDuration, Origin,
    Quantities, SizeConstraint, UNBOUNDED,
};

/// Reads a bundle in Corral's form (or Coopr's, which it normalises).
pub fn import_bundle(text: &str) -> Result<Catalog, ImportError> {
    coopr::import_bundle(text).map(|catalog| normalise(&catalog))
}

/// Writes the bundle in Corral's normalised form.
pub fn export_bundle(catalog: &Catalog) -> Value {
    coopr::export_bundle(&normalise(catalog))
}

/// The catalog in Corral's form; remembered Coopr JSON is dropped, so export
/// writes the normalised typed form.
pub fn normalise(catalog: &Catalog) -> Catalog {
    convert(catalog, LeaseForm::Text)
}

/// The catalog as Coopr's writer shapes it: leases in milliseconds, plain counts.
pub fn to_coopr_shape(catalog: &Catalog) -> Catalog {
    convert(catalog, LeaseForm::Millis)
}

#[derive(Clone, Copy)]
enum LeaseForm {
    Text,
    Millis,
}

fn convert(catalog: &Catalog, form: LeaseForm) -> Catalog {
    let mut out = catalog.clone();
    for provider in out.providers.values_mut() {
        plain_meta(&mut provider.meta);
        provider.origin = Origin::none();
    }
    for hardware in out.hardwaretypes.values_mut() {
        plain_meta(&mut hardware.meta);
        hardware.origin = Origin::none();
    }
    for image in out.imagetypes.values_mut() {
        plain_meta(&mut image.meta);
        image.origin = Origin::none();
    }
    for service in out.services.values_mut() {
        plain_meta(&mut service.meta);
        service.origin = Origin::none();
    }
    for template in out.clustertemplates.values_mut() {
        convert_template(template, form);
    }
    for partial in out.partialtemplates.values_mut() {
        plain_meta(&mut partial.meta);
        flatten_default_services(&mut partial.defaults);
        partial.origin = Origin::none();
    }
    out
}

fn convert_template(template: &mut ClusterTemplate, form: LeaseForm) {
    plain_meta(&mut template.meta);
    template.origin = Origin::none();
    flatten_default_services(&mut template.defaults);
    if let Some(constraints) = &mut template.constraints {
        if let Some(size) = &mut constraints.size {
            plain_size(size);
        }
        for constraint in constraints.services.values_mut() {
            if let Some(quantities) = &mut constraint.quantities {
                plain_quantities(quantities);
            }
        }
    }
    if let Some(lease) = template
        .administration
        .as_mut()
        .and_then(|admin| admin.leaseduration.as_mut())
    {
        convert_lease(lease, form);
    }
}

fn plain_meta(meta: &mut EntityMeta) {
    meta.version = meta.version.map(plain);
}

fn plain(count: Count) -> Count {
    Count::new(count.value)
}

fn plain_size(size: &mut SizeConstraint) {
    size.min = size.min.map(plain);
    size.max = size.max.filter(|max| max.value != UNBOUNDED).map(plain);
    size.step = size.step.map(plain);
}

fn plain_quantities(quantities: &mut Quantities) {
    quantities.min = quantities.min.map(plain);
    quantities.max = quantities
        .max
        .filter(|max| max.value != UNBOUNDED)
        .map(plain);
}

/// `{"name", "config"}` default services become names, their config moving to
/// `defaults.config[name]` (an explicit entry there wins, as in Coopr). Entries
/// with unknown keys of their own stay objects so nothing is lost.
fn flatten_default_services(defaults: &mut super::Defaults) {
    for service in &mut defaults.services {
        let DefaultService::Configured {
            name,
            config,
            extra,
        } = service
        else {
            continue;
        };
        if !extra.is_empty() {
            continue;
        }
        if let Some(config) = config.as_ref().filter(|config| !config.is_null()) {
            defaults
                .config
                .entry(name.as_str().to_owned())
                .or_insert_with(|| config.clone());
        }
        *service = DefaultService::Name(name.clone());
    }
}

/// Unparseable values are left as written for validation to report.
fn convert_lease(lease: &mut LeaseDuration, form: LeaseForm) {
    for slot in [&mut lease.initial, &mut lease.max, &mut lease.step] {
        let Some(value) = slot else { continue };
        let Ok(duration) = value.duration() else {
            continue;
        };
        *value = match form {
            LeaseForm::Text => Lease::Text(format_lease(duration.millis())),
            LeaseForm::Millis => Lease::from_millis(duration.millis()),
        };
    }
}

/// The largest whole unit: `"7d"`, `"36h"`, `"90m"`, `"45s"`, else milliseconds.
pub fn format_lease(ms: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "m"),
        (1_000, "s"),
    ];
    if ms == 0 {
        return "0".to_owned();
    }
    UNITS
        .iter()
        .find(|(unit, _)| ms.is_multiple_of(*unit))
        .map_or_else(
            || ms.to_string(),
            |(unit, suffix)| format!("{}{suffix}", ms / unit),
        )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::catalog::coopr::import_bundle_value;

    fn coopr_bundle() -> Value {
        json!({"clustertemplates": [{
            "name": "t", "version": "2",
            "defaults": {"services": ["a", {"name": "b", "config": {"port": "80"}}],
                         "provider": "p", "config": {"a": {"x": 1}}},
            "constraints": {"size": {"min": "1", "max": 2147483647},
                            "services": {"a": {"quantities": {"min": "2", "max": "2147483647"}}}},
            "administration": {"leaseduration": {"initial": 604800000, "max": "30d", "step": "5400000", "note": "kept"}}
        }]})
    }

    #[test]
    fn normalises_leases_counts_and_default_services() {
        let catalog = import_bundle_value(coopr_bundle()).unwrap();
        let corral = export_bundle(&catalog);
        assert_eq!(
            corral["clustertemplates"][0],
            json!({
                "name": "t", "version": 2,
                "compatibility": {"hardwaretypes": [], "imagetypes": [], "services": []},
                "defaults": {"services": ["a", "b"], "provider": "p",
                             "config": {"a": {"x": 1}, "b": {"port": "80"}}},
                "constraints": {"size": {"min": 1},
                                "layout": {"mustcoexist": [], "cantcoexist": []},
                                "services": {"a": {"quantities": {"min": 2}}}},
                "administration": {"leaseduration": {"initial": "7d", "max": "30d", "step": "90m", "note": "kept"}},
                "links": []
            })
        );
    }

    #[test]
    fn converts_both_ways_without_changing_meaning() {
        let catalog = import_bundle_value(coopr_bundle()).unwrap();
        let corral = normalise(&catalog);
        let text = serde_json::to_string(&export_bundle(&catalog)).unwrap();
        assert_eq!(import_bundle(&text).unwrap(), corral);
        let back = to_coopr_shape(&corral);
        let lease = back.clustertemplates["t"].lease().unwrap();
        assert_eq!(lease.initial, Some(Lease::Millis(604_800_000)));
        assert_eq!(lease.step, Some(Lease::Millis(5_400_000)));
        assert_eq!(normalise(&back), corral);
        let original = &catalog.clustertemplates["t"];
        let converted = &back.clustertemplates["t"];
        assert_eq!(original.size().max_nodes(), converted.size().max_nodes());
        assert_eq!(
            original.service_constraint("a").unwrap().max_nodes(),
            converted.service_constraint("a").unwrap().max_nodes()
        );
        assert_eq!(
            original.defaults.effective_config(),
            converted.defaults.effective_config()
        );
    }

    #[test]
    fn formats_leases_in_the_largest_whole_unit() {
        let cases = [
            (0, "0"),
            (1_500, "1500"),
            (45_000, "45s"),
            (5_400_000, "90m"),
            (129_600_000, "36h"),
            (604_800_000, "7d"),
        ];
        for (ms, text) in cases {
            assert_eq!(format_lease(ms), text);
            assert_eq!(
                Lease::Text(text.into()).duration().map(|d| d.millis()),
                Ok(ms)
            );
        }
    }
}
