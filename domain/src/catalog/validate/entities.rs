//! Checks on single entities: providers, hardware and image types, services.

use std::collections::HashSet;

use super::Report;
use crate::catalog::automator::AutomatorType;
use crate::catalog::service::STATEFUL_FIELD;
use crate::catalog::{Catalog, ProviderMap, Service, SUPPORTED_PROVIDER_TYPES};
use crate::names::ServiceName;

/// A map key must be the entity's own name (only hand-built catalogs can differ).
pub(super) fn check_key(report: &mut Report, kind: &str, key: &str, name: &str) {
    if key != name {
        report.error(
            format!("{kind}.{key}"),
            format!("entity is named \"{name}\" but filed under \"{key}\""),
        );
    }
}

pub(super) fn check_providers(catalog: &Catalog, report: &mut Report) {
    for (key, provider) in &catalog.providers {
        check_key(report, "providers", key.as_str(), provider.name.as_str());
        if provider.providertype.trim().is_empty() {
            report.error(
                format!("providers.{key}.providertype"),
                "provider type is empty",
            );
        } else if !provider.is_supported_type() {
            report.warning(
                format!("providers.{key}.providertype"),
                format!(
                    "provider type \"{}\" cannot be driven by Corral (supported: {})",
                    provider.providertype,
                    SUPPORTED_PROVIDER_TYPES.join(", ")
                ),
            );
        }
    }
}

pub(super) fn check_machine_types(catalog: &Catalog, report: &mut Report) {
    for (key, hardware) in &catalog.hardwaretypes {
        check_key(
            report,
            "hardwaretypes",
            key.as_str(),
            hardware.name.as_str(),
        );
        check_providermap(
            catalog,
            report,
            &format!("hardwaretypes.{key}"),
            &hardware.providermap,
        );
        check_prices(report, &format!("hardwaretypes.{key}"), hardware);
    }
    for (key, image) in &catalog.imagetypes {
        check_key(report, "imagetypes", key.as_str(), image.name.as_str());
        check_providermap(
            catalog,
            report,
            &format!("imagetypes.{key}"),
            &image.providermap,
        );
    }
}

/// A hardware type's `price_per_hour`, and each provider mapping's, must be a
/// non-negative finite number (docs/cost.md): a price that does not read would
/// otherwise count as none and hide a cost.
fn check_prices(report: &mut Report, base: &str, hardware: &crate::catalog::HardwareType) {
    use crate::cost::{price_of_value, PRICE_FIELD};
    if let Some(Err(problem)) = hardware.extra.get(PRICE_FIELD).map(price_of_value) {
        report.error(format!("{base}.{PRICE_FIELD}"), problem);
    }
    for (provider, settings) in &hardware.providermap {
        if let Some(Err(problem)) = settings.get(PRICE_FIELD).map(price_of_value) {
            report.error(
                format!("{base}.providermap.{provider}.{PRICE_FIELD}"),
                problem,
            );
        }
    }
}

fn check_providermap(catalog: &Catalog, report: &mut Report, base: &str, map: &ProviderMap) {
    for provider in map.keys() {
        if catalog.provider(provider.as_str()).is_none() {
            report.warning(
                format!("{base}.providermap.{provider}"),
                format!("unknown provider \"{provider}\""),
            );
        }
    }
}

pub(super) fn check_services(catalog: &Catalog, report: &mut Report) {
    for (key, service) in &catalog.services {
        check_key(report, "services", key.as_str(), service.name.as_str());
        let base = format!("services.{key}.dependencies");
        let deps = &service.dependencies;
        for (stage_name, stage) in [("install", &deps.install), ("runtime", &deps.runtime)] {
            for (index, required) in stage.requires.iter().enumerate() {
                if !catalog.is_service_or_alias(required.as_str()) {
                    report.error(
                        format!("{base}.{stage_name}.requires[{index}]"),
                        format!("unknown service or alias \"{required}\""),
                    );
                }
            }
            warn_duplicates(
                report,
                &format!("{base}.{stage_name}.requires"),
                &stage.requires,
            );
            warn_duplicates(report, &format!("{base}.{stage_name}.uses"), &stage.uses);
        }
        warn_duplicates(report, &format!("{base}.provides"), &deps.provides);
        warn_duplicates(report, &format!("{base}.conflicts"), &deps.conflicts);
        check_actions(key.as_str(), service, report);
        if let Some(value) = service
            .extra
            .get(STATEFUL_FIELD)
            .filter(|value| !value.is_boolean())
        {
            report.error(
                format!("services.{key}.{STATEFUL_FIELD}"),
                format!("must be true or false, not {value}"),
            );
        }
        if let Err(problems) = super::super::health::HealthCheck::of(service) {
            for (path, message) in problems {
                let at = format!("services.{key}.{}", super::super::health::FIELD);
                let at = if path.is_empty() {
                    at
                } else {
                    format!("{at}.{path}")
                };
                report.error(at, message);
            }
        }
    }
}

/// Each action's fields as its automator takes them. An automator Corral does not run
/// (Coopr's `chef-solo`, `docker`) is one warning per service: the catalog is kept, and a
/// cluster that would run the service is refused before anything is made.
fn check_actions(key: &str, service: &Service, report: &mut Report) {
    let mut unsupported: Vec<(&str, Vec<&str>)> = Vec::new();
    for (action, spec) in &service.provisioner.actions {
        let base = format!("services.{key}.provisioner.actions.{action}");
        match AutomatorType::parse(&spec.automator) {
            Some(automator) => {
                for (path, message) in automator.check_fields(spec) {
                    report.error(format!("{base}.{path}"), message);
                }
            }
            None => match unsupported
                .iter_mut()
                .find(|(name, _)| *name == spec.automator)
            {
                Some((_, actions)) => actions.push(action.as_str()),
                None => unsupported.push((&spec.automator, vec![action.as_str()])),
            },
        }
    }
    for (automator, actions) in unsupported {
        report.warning(
            format!("services.{key}.provisioner.actions"),
            format!(
                "automator \"{automator}\" ({}) is not available here (automators: {}): \
                 clusters with this service are refused",
                actions.join(", "),
                AutomatorType::names()
            ),
        );
    }
}

fn warn_duplicates(report: &mut Report, path: &str, names: &[ServiceName]) {
    duplicates(report, path, names, "entry");
}

/// Warns at `path[i]` for every repeated entry of a list.
pub(super) fn duplicates<T: AsRef<str>>(report: &mut Report, path: &str, items: &[T], what: &str) {
    let mut seen = HashSet::new();
    for (index, item) in items.iter().enumerate() {
        if !seen.insert(item.as_ref()) {
            report.warning(
                format!("{path}[{index}]"),
                format!("duplicate {what} \"{}\"", item.as_ref()),
            );
        }
    }
}
