//! Checks on one template's own fields: compatibility, defaults, constraints and
//! lease (docs/coopr-format.md §3 errors 4–7).

use super::entities::duplicates;
use super::Report;
use crate::catalog::{
    Catalog, ClusterTemplate, Compatibility, Count, Defaults, LeaseDuration, PartialTemplate,
    UNBOUNDED,
};
use crate::names::ServiceName;

pub(super) fn check_partial(catalog: &Catalog, partial: &PartialTemplate, report: &mut Report) {
    let base = format!("partialtemplates.{}", partial.name);
    check_compatibility(catalog, &partial.compatibility, &base, report);
    check_default_references(
        catalog,
        &partial.defaults,
        &partial.compatibility,
        &base,
        report,
    );
    // Kept for export, but a merge never reads them (§2.5).
    for key in [
        "extends",
        "includes",
        "constraints",
        "administration",
        "links",
    ] {
        if partial.extra.contains_key(key) {
            report.warning(
                format!("{base}.{key}"),
                format!("ignored: a partial template contributes only compatibility and defaults, not {key}"),
            );
        }
    }
}

/// Every compatibility entry names an existing entity of its kind.
fn check_compatibility(catalog: &Catalog, compat: &Compatibility, base: &str, report: &mut Report) {
    let path = format!("{base}.compatibility");
    for (index, service) in compat.services.iter().enumerate() {
        if catalog.service(service.as_str()).is_none() {
            report.error(
                format!("{path}.services[{index}]"),
                format!("unknown service \"{service}\""),
            );
        }
    }
    for (index, hardware) in compat.hardwaretypes.iter().enumerate() {
        if catalog.hardwaretype(hardware.as_str()).is_none() {
            report.error(
                format!("{path}.hardwaretypes[{index}]"),
                format!("unknown hardware type \"{hardware}\""),
            );
        }
    }
    for (index, image) in compat.imagetypes.iter().enumerate() {
        if catalog.imagetype(image.as_str()).is_none() {
            report.error(
                format!("{path}.imagetypes[{index}]"),
                format!("unknown image type \"{image}\""),
            );
        }
    }
    duplicates(
        report,
        &format!("{path}.services"),
        &compat.services,
        "service",
    );
    duplicates(
        report,
        &format!("{path}.hardwaretypes"),
        &compat.hardwaretypes,
        "hardware type",
    );
    duplicates(
        report,
        &format!("{path}.imagetypes"),
        &compat.imagetypes,
        "image type",
    );
}

/// Defaults exist, lie inside non-empty compatibility lists, and (types) can be
/// used with the default provider.
fn check_default_references(
    catalog: &Catalog,
    defaults: &Defaults,
    compat: &Compatibility,
    base: &str,
    report: &mut Report,
) {
    let path = format!("{base}.defaults");
    for (index, service) in defaults.service_names().enumerate() {
        let at = format!("{path}.services[{index}]");
        if catalog.service(service.as_str()).is_none() {
            report.error(at, format!("unknown service \"{service}\""));
        } else if !compat.services.is_empty() && !compat.services.contains(service) {
            report.error(
                at,
                format!("default service \"{service}\" is not in compatibility.services"),
            );
        }
    }
    let names: Vec<&ServiceName> = defaults.service_names().collect();
    duplicates(report, &format!("{path}.services"), &names, "service");
    let provider = defaults.provider.as_ref().and_then(|name| {
        let found = catalog.provider(name.as_str());
        if found.is_none() {
            report.error(
                format!("{path}.provider"),
                format!("unknown provider \"{name}\""),
            );
        }
        found
    });
    if let Some(hardware) = &defaults.hardwaretype {
        let at = format!("{path}.hardwaretype");
        match catalog.hardwaretype(hardware.as_str()) {
            None => report.error(at, format!("unknown hardware type \"{hardware}\"")),
            Some(found) => {
                if !compat.hardwaretypes.is_empty() && !compat.hardwaretypes.contains(hardware) {
                    report.error(
                        at.clone(),
                        format!(
                            "default hardware type \"{hardware}\" is not in compatibility.hardwaretypes"
                        ),
                    );
                }
                if let Some(provider) = provider {
                    if found.flavor(provider.name.as_str()).is_none() {
                        report.error(
                            at,
                            format!(
                                "hardware type \"{hardware}\" has no flavor for provider \"{}\"",
                                provider.name
                            ),
                        );
                    }
                }
            }
        }
    }
    if let Some(image) = &defaults.imagetype {
        let at = format!("{path}.imagetype");
        match catalog.imagetype(image.as_str()) {
            None => report.error(at, format!("unknown image type \"{image}\"")),
            Some(found) => {
                if !compat.imagetypes.is_empty() && !compat.imagetypes.contains(image) {
                    report.error(
                        at.clone(),
                        format!(
                            "default image type \"{image}\" is not in compatibility.imagetypes"
                        ),
                    );
                }
                if let Some(provider) = provider {
                    if found.image(provider.name.as_str()).is_none() {
                        report.error(
                            at,
                            format!(
                                "image type \"{image}\" has no image for provider \"{}\"",
                                provider.name
                            ),
                        );
                    }
                }
            }
        }
    }
}

/// Checks one (resolved) cluster template, reporting under `base`.
pub(super) struct TemplateChecker<'a> {
    catalog: &'a Catalog,
    template: &'a ClusterTemplate,
    base: &'a str,
    report: &'a mut Report,
}

impl<'a> TemplateChecker<'a> {
    pub fn new(
        catalog: &'a Catalog,
        template: &'a ClusterTemplate,
        base: &'a str,
        report: &'a mut Report,
    ) -> Self {
        Self {
            catalog,
            template,
            base,
            report,
        }
    }

    pub fn check_all(&mut self) {
        let template = self.template;
        check_compatibility(
            self.catalog,
            &template.compatibility,
            self.base,
            self.report,
        );
        check_default_references(
            self.catalog,
            &template.defaults,
            &template.compatibility,
            self.base,
            self.report,
        );
        self.check_default_dependencies();
        self.check_constraints();
        if let Some(lease) = template.lease() {
            self.check_lease(lease);
        }
        if let Err(problems) = crate::catalog::healing::Healing::of(template) {
            let at = format!(
                "{}.administration.{}",
                self.base,
                crate::catalog::healing::FIELD
            );
            for (path, message) in problems {
                let at = if path.is_empty() {
                    at.clone()
                } else {
                    format!("{at}.{path}")
                };
                self.report.error(at, message);
            }
        }
    }

    /// Default services' `requires` are met within the defaults, and no two
    /// default services conflict (§3 error 6).
    fn check_default_dependencies(&mut self) {
        let defaults: Vec<_> = self
            .template
            .defaults
            .service_names()
            .filter_map(|name| self.catalog.service(name.as_str()))
            .collect();
        for (index, name) in self.template.defaults.service_names().enumerate() {
            let Some(service) = self.catalog.service(name.as_str()) else {
                continue;
            };
            let at = format!("{}.defaults.services[{index}]", self.base);
            let deps = &service.dependencies;
            let mut reported = Vec::new();
            for required in deps.install.requires.iter().chain(&deps.runtime.requires) {
                let met = defaults
                    .iter()
                    .any(|other| other.answers_to(required.as_str()));
                if !met && !reported.contains(&required) {
                    reported.push(required);
                    self.report.error(
                        at.clone(),
                        format!(
                            "service \"{name}\" requires \"{required}\", which no default service provides"
                        ),
                    );
                }
            }
            for conflict in &deps.conflicts {
                for other in &defaults {
                    if other.name != *name && other.answers_to(conflict.as_str()) {
                        self.report.error(
                            at.clone(),
                            format!(
                                "service \"{name}\" conflicts with default service \"{}\"",
                                other.name
                            ),
                        );
                    }
                }
            }
        }
    }

    fn check_constraints(&mut self) {
        let Some(constraints) = &self.template.constraints else {
            return;
        };
        let path = format!("{}.constraints", self.base);
        if let Some(size) = &constraints.size {
            let at = format!("{path}.size");
            if let Some(min) = size.min {
                if min.value < 1 {
                    self.report
                        .error(format!("{at}.min"), format!("size min {min} is below 1"));
                }
            }
            self.check_range(&at, size.min, size.max);
            if let Some(step) = size.step {
                if step.value < 1 {
                    self.report
                        .error(format!("{at}.step"), format!("size step {step} is below 1"));
                }
            }
        }
        for (group_key, groups) in [
            ("mustcoexist", &constraints.layout.mustcoexist),
            ("cantcoexist", &constraints.layout.cantcoexist),
        ] {
            for (index, group) in groups.iter().enumerate() {
                let at = format!("{path}.layout.{group_key}[{index}]");
                for service in group {
                    if self.catalog.service(service.as_str()).is_none() {
                        self.report
                            .error(at.clone(), format!("unknown service \"{service}\""));
                    }
                }
                duplicates(self.report, &at, group, "service");
                if group_key == "cantcoexist" && group.len() >= 3 {
                    self.report.warning(
                        at.clone(),
                        format!(
                            "a cantcoexist group of {} services only bars all of them together; any two may still share a node",
                            group.len()
                        ),
                    );
                }
                if group_key == "cantcoexist" && group.len() == 1 {
                    self.report.warning(
                        at,
                        format!(
                            "a cantcoexist group of one bars \"{}\" from every node",
                            group[0]
                        ),
                    );
                }
            }
        }
        for (service, constraint) in &constraints.services {
            let at = format!("{path}.services.{service}");
            if self.catalog.service(service.as_str()).is_none() {
                self.report
                    .error(at.clone(), format!("unknown service \"{service}\""));
            }
            for (index, hardware) in constraint.hardwaretypes.iter().enumerate() {
                if self.catalog.hardwaretype(hardware.as_str()).is_none() {
                    self.report.error(
                        format!("{at}.hardwaretypes[{index}]"),
                        format!("unknown hardware type \"{hardware}\""),
                    );
                }
            }
            for (index, image) in constraint.imagetypes.iter().enumerate() {
                if self.catalog.imagetype(image.as_str()).is_none() {
                    self.report.error(
                        format!("{at}.imagetypes[{index}]"),
                        format!("unknown image type \"{image}\""),
                    );
                }
            }
            if let Some(quantities) = &constraint.quantities {
                self.check_range(&format!("{at}.quantities"), quantities.min, quantities.max);
            }
        }
    }

    /// No negatives, and min ≤ max unless max is unbounded.
    fn check_range(&mut self, at: &str, min: Option<Count>, max: Option<Count>) {
        for (key, count) in [("min", min), ("max", max)] {
            if let Some(count) = count.filter(|count| count.value < 0) {
                self.report
                    .error(format!("{at}.{key}"), format!("{key} {count} is negative"));
            }
        }
        if let (Some(min), Some(max)) = (min, max) {
            if max.value != UNBOUNDED && max.value >= 0 && min.value > max.value {
                self.report.error(
                    at.to_owned(),
                    format!("min {min} is greater than max {max}"),
                );
            }
        }
    }

    /// Each value parses; a finite max is at least the initial lease (0 = unlimited,
    /// so an unlimited initial lease with a finite max is refused, as in Coopr).
    fn check_lease(&mut self, lease: &LeaseDuration) {
        let at = format!("{}.administration.leaseduration", self.base);
        let mut parsed = [None, None];
        for (slot, (key, value)) in [
            ("initial", &lease.initial),
            ("max", &lease.max),
            ("step", &lease.step),
            ("grace", &lease.grace),
        ]
        .into_iter()
        .enumerate()
        {
            let Some(value) = value else { continue };
            match value.duration() {
                Ok(duration) => {
                    if let Some(cell) = parsed.get_mut(slot) {
                        *cell = Some(duration);
                    }
                }
                Err(err) => self.report.error(format!("{at}.{key}"), err.to_string()),
            }
        }
        if let [initial, Some(max)] = parsed {
            let initial = initial.unwrap_or_default();
            if !max.is_unlimited() && (initial.is_unlimited() || initial > max) {
                let initial_text = if initial.is_unlimited() {
                    "unlimited".to_owned()
                } else {
                    initial.to_string()
                };
                self.report.error(
                    at,
                    format!("initial lease ({initial_text}) exceeds max lease ({max})"),
                );
            }
        }
    }
}
