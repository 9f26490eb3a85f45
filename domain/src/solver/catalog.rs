//! From a catalog template and a user's request to a solver [`LayoutProblem`], with the
//! pre-checks of docs/coopr-format.md §4: a provider, types with a flavor/image for it,
//! services that exist, are compatible, have their `requires` met and do not conflict.
//!
//! The template must already be resolved (`extends`/`includes` merged); this
//! module reads only its own fields.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::error::{Reason, Unsatisfiable};
use super::problem::{
    LayoutGroups, LayoutProblem, ServiceConstraint, SizeBounds, TypeCandidates, Unusable,
    UnusableType,
};
use crate::catalog::{Catalog, ClusterTemplate, Service};
use crate::names::{HardwareTypeName, ImageTypeName, ProviderName, ServiceName};

/// What a user asks of a template; anything left out comes from its defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SolveRequest {
    pub size: u32,
    /// Service or alias names; `None` = the template's default services.
    #[serde(default)]
    pub services: Option<Vec<String>>,
    #[serde(default)]
    pub provider: Option<ProviderName>,
    /// Binding when given: the only hardware type nodes may get.
    #[serde(default)]
    pub hardwaretype: Option<HardwareTypeName>,
    /// Binding when given: the only image type nodes may get.
    #[serde(default)]
    pub imagetype: Option<ImageTypeName>,
}

impl SolveRequest {
    pub fn of_size(size: u32) -> Self {
        Self {
            size,
            services: None,
            provider: None,
            hardwaretype: None,
            imagetype: None,
        }
    }
}

impl LayoutProblem {
    /// The normalised problem for `request` on `template`, or every pre-check that
    /// fails.
    pub fn from_catalog(
        catalog: &Catalog,
        template: &ClusterTemplate,
        request: &SolveRequest,
    ) -> Result<LayoutProblem, Unsatisfiable> {
        let mut reasons = Vec::new();
        let provider = request
            .provider
            .as_ref()
            .or(template.defaults.provider.as_ref());
        let provider = match provider {
            None => {
                reasons.push(Reason::NoProvider);
                None
            }
            Some(name) if catalog.provider(name.as_str()).is_none() => {
                reasons.push(Reason::UnknownProvider {
                    provider: name.as_str().to_owned(),
                });
                None
            }
            Some(name) => Some(name.clone()),
        };

        let hardware = candidates(
            catalog.hardwaretypes.keys(),
            &template.compatibility.hardwaretypes,
            request.hardwaretype.as_ref(),
            template.defaults.hardwaretype.as_ref(),
            |name| match &provider {
                Some(provider) => catalog
                    .hardwaretype(name.as_str())
                    .map(|h| h.flavor(provider.as_str()).is_some()),
                None => Some(true),
            },
            provider.as_ref(),
        );
        let images = candidates(
            catalog.imagetypes.keys(),
            &template.compatibility.imagetypes,
            request.imagetype.as_ref(),
            template.defaults.imagetype.as_ref(),
            |name| match &provider {
                Some(provider) => catalog
                    .imagetype(name.as_str())
                    .map(|i| i.image(provider.as_str()).is_some()),
                None => Some(true),
            },
            provider.as_ref(),
        );
        if hardware.candidates.is_empty() {
            reasons.push(Reason::NoHardware {
                detail: unusable_list(&hardware.unusable),
            });
        }
        if images.candidates.is_empty() {
            reasons.push(Reason::NoImages {
                detail: unusable_list(&images.unusable),
            });
        }

        let services = resolve_services(catalog, template, request, &mut reasons);
        check_dependencies(&services, &mut reasons);
        if !reasons.is_empty() {
            return Err(Unsatisfiable::new(reasons));
        }

        let size = template.size();
        let layout = template
            .layout()
            .map_or_else(LayoutGroups::default, |layout| LayoutGroups {
                must_coexist: layout.mustcoexist.clone(),
                cant_coexist: layout.cantcoexist.clone(),
            });
        let service_constraints: BTreeMap<ServiceName, ServiceConstraint> = template
            .constraints
            .iter()
            .flat_map(|constraints| constraints.services.iter())
            .map(|(name, constraint)| {
                (
                    name.clone(),
                    ServiceConstraint {
                        min: constraint.min_nodes(),
                        max: constraint.max_nodes(),
                        hardware: constraint.hardwaretypes.clone(),
                        images: constraint.imagetypes.clone(),
                    },
                )
            })
            .collect();
        Ok(LayoutProblem {
            template: template.name.clone(),
            size: request.size,
            size_bounds: SizeBounds {
                min: size.min_nodes(),
                max: size.max_nodes(),
                step: size.step_nodes(),
            },
            services: services
                .iter()
                .map(|service| service.name.clone())
                .collect(),
            hardware,
            images,
            layout,
            service_constraints,
        })
    }
}

/// Candidates for one type kind: the requested type alone, else every compatible
/// type the provider maps, the default first and the rest by name.
fn candidates<'c, T>(
    known: impl Iterator<Item = &'c T>,
    compatible: &[T],
    requested: Option<&T>,
    default: Option<&T>,
    on_provider: impl Fn(&T) -> Option<bool>,
    provider: Option<&ProviderName>,
) -> TypeCandidates<T>
where
    T: Clone + Ord + AsRef<str> + 'c,
{
    let considered: Vec<T> = match requested {
        Some(name) => vec![name.clone()],
        None => {
            let mut all: BTreeSet<T> = known.cloned().collect();
            all.extend(compatible.iter().cloned());
            all.into_iter().collect()
        }
    };
    let mut usable = Vec::new();
    let mut unusable = Vec::new();
    for name in considered {
        let why = match on_provider(&name) {
            None => Some(Unusable::Unknown),
            Some(_) if !compatible.is_empty() && !compatible.contains(&name) => {
                Some(Unusable::NotCompatible)
            }
            Some(false) => provider.cloned().map(Unusable::NotOnProvider),
            Some(true) => None,
        };
        match why {
            Some(why) => unusable.push(UnusableType { name, why }),
            None => usable.push(name),
        }
    }
    let preferred = match requested {
        Some(_) => None,
        None => default.filter(|name| usable.contains(name)).cloned(),
    };
    if let Some(preferred) = &preferred {
        usable.retain(|name| name != preferred);
        usable.insert(0, preferred.clone());
    }
    TypeCandidates {
        candidates: usable,
        preferred,
        unusable,
    }
}

fn unusable_list<T: AsRef<str>>(unusable: &[UnusableType<T>]) -> String {
    if unusable.is_empty() {
        return "the catalog has none".to_owned();
    }
    let parts: Vec<String> = unusable
        .iter()
        .map(|entry| {
            format!(
                "{} {}",
                entry.name.as_ref(),
                super::model::describe(&entry.why)
            )
        })
        .collect();
    parts.join(", ")
}

/// The cluster's services: requested names (or the defaults), aliases resolved to
/// the first compatible service providing them.
fn resolve_services<'c>(
    catalog: &'c Catalog,
    template: &ClusterTemplate,
    request: &SolveRequest,
    reasons: &mut Vec<Reason>,
) -> Vec<&'c Service> {
    let names: Vec<String> = match &request.services {
        Some(names) => names.clone(),
        None => template
            .defaults
            .service_names()
            .map(|name| name.as_str().to_owned())
            .collect(),
    };
    if names.is_empty() {
        reasons.push(Reason::NoServices);
    }
    let compatible = &template.compatibility.services;
    let allowed = |service: &Service| compatible.is_empty() || compatible.contains(&service.name);
    let mut resolved: Vec<&Service> = Vec::new();
    for name in names {
        let exact = catalog.service(&name);
        let providers = || catalog.services.values().filter(|s| s.answers_to(&name));
        let chosen = exact.or_else(|| {
            providers()
                .find(|service| allowed(service))
                .or_else(|| providers().next())
        });
        match chosen {
            None => reasons.push(Reason::UnknownService { service: name }),
            Some(service) if !allowed(service) => reasons.push(Reason::IncompatibleService {
                service: service.name.clone(),
            }),
            Some(service) => {
                if !resolved.iter().any(|known| known.name == service.name) {
                    resolved.push(service);
                }
            }
        }
    }
    resolved
}

/// `requires` met within the cluster, no `conflicts` on it.
fn check_dependencies(services: &[&Service], reasons: &mut Vec<Reason>) {
    let answers = |name: &ServiceName| {
        services
            .iter()
            .any(|service| service.answers_to(name.as_str()))
    };
    for service in services {
        let deps = &service.dependencies;
        let mut missing: BTreeSet<&ServiceName> = BTreeSet::new();
        for required in deps.install.requires.iter().chain(&deps.runtime.requires) {
            if !answers(required) {
                missing.insert(required);
            }
        }
        for required in missing {
            reasons.push(Reason::MissingRequirement {
                service: service.name.clone(),
                requires: required.clone(),
            });
        }
        for conflict in &deps.conflicts {
            for other in services.iter().filter(|other| other.name != service.name) {
                // Report each pair once, from the first side that names it.
                if other.answers_to(conflict.as_str()) && service.name < other.name
                    || other.answers_to(conflict.as_str())
                        && !other
                            .dependencies
                            .conflicts
                            .iter()
                            .any(|c| service.answers_to(c.as_str()))
                {
                    reasons.push(Reason::Conflict {
                        service: service.name.clone(),
                        other: other.name.clone(),
                    });
                }
            }
        }
    }
}
