//! Template resolution (docs/coopr-format.md §2.5): a cluster template merged with its
//! `extends` chain and its `includes` partials into one self-contained template.
//!
//! Merge order: the parent's resolved chain, then this template's includes in
//! order, then the template itself. Lists are unioned, later non-blank scalars win,
//! `constraints.services` and `parameters` are replaced per name, `size` comes from the last
//! member with constraints and `administration` from the last that sets it; config
//! merges per top-level key, except that keys of an immutable partial are final.

use indexmap::IndexMap;

use super::{
    Catalog, ClusterTemplate, Compatibility, Constraints, DefaultService, Defaults, Extra, Origin,
    PartialTemplate,
};
use crate::names::TemplateName;

/// Most templates an `extends` chain may climb above the template being resolved.
/// Coopr's catalogs use one or two. Without a bound, a long chain in an uploaded
/// catalog cost time cubic in its length (validation resolves every template, each
/// walking its whole chain and checking it for cycles): 2,000 templates took 12 s.
pub const MAX_EXTENDS_DEPTH: usize = 32;

/// Why a template cannot be resolved; `path` says where, in validation's form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error("clustertemplates.{0}: unknown cluster template \"{0}\"")]
    UnknownTemplate(String),
    #[error("{path}: extends unknown cluster template \"{name}\"")]
    MissingParent { path: String, name: TemplateName },
    #[error("{path}: includes unknown partial template \"{name}\"")]
    MissingPartial { path: String, name: TemplateName },
    #[error("{path}: extends cycle {}", chain_text(.chain))]
    Cycle {
        path: String,
        chain: Vec<TemplateName>,
    },
    #[error("{path}: config key \"{key}\" comes from immutable partial template \"{partial}\" and may not be set again")]
    ImmutableOverride {
        path: String,
        key: String,
        partial: TemplateName,
    },
    #[error("{path}: the extends chain is longer than {limit} templates")]
    TooDeep { path: String, limit: usize },
    #[error("{path}: no default services")]
    NoDefaultServices { path: String },
    #[error("{path}: no default provider")]
    NoDefaultProvider { path: String },
}

impl ResolveError {
    /// Where the problem is, e.g. `clustertemplates.web.includes[1]`.
    pub fn path(&self) -> String {
        match self {
            ResolveError::UnknownTemplate(name) => format!("clustertemplates.{name}"),
            ResolveError::MissingParent { path, .. }
            | ResolveError::MissingPartial { path, .. }
            | ResolveError::Cycle { path, .. }
            | ResolveError::TooDeep { path, .. }
            | ResolveError::ImmutableOverride { path, .. }
            | ResolveError::NoDefaultServices { path }
            | ResolveError::NoDefaultProvider { path } => path.clone(),
        }
    }

    /// The message without the path.
    pub fn message(&self) -> String {
        let full = self.to_string();
        let prefix = format!("{}: ", self.path());
        full.strip_prefix(&prefix).unwrap_or(&full).to_owned()
    }
}

fn chain_text(chain: &[TemplateName]) -> String {
    chain
        .iter()
        .map(TemplateName::as_str)
        .collect::<Vec<_>>()
        .join(" -> ")
}

impl Catalog {
    /// The template with `extends`/`includes` merged in (or as is, if it has
    /// neither), checked to have default services and a default provider.
    pub fn resolved_template(&self, name: &TemplateName) -> Result<ClusterTemplate, ResolveError> {
        let (resolved, mut errors) = resolve_all(self, name.as_str());
        match (resolved, errors.is_empty()) {
            (Some(template), true) => Ok(template),
            _ if !errors.is_empty() => Err(errors.remove(0)),
            _ => Err(ResolveError::UnknownTemplate(name.to_string())),
        }
    }
}

/// Resolves `name`, collecting every problem. The template is returned whenever it
/// exists, merged as far as possible, so validation can look at it regardless.
pub(crate) fn resolve_all(
    catalog: &Catalog,
    name: &str,
) -> (Option<ClusterTemplate>, Vec<ResolveError>) {
    let Some(template) = catalog.clustertemplate(name) else {
        return (None, vec![ResolveError::UnknownTemplate(name.to_owned())]);
    };
    let mut errors = Vec::new();
    let resolved = if template.has_parents() {
        let members = collect_members(catalog, template, &mut errors);
        merge(template, &members, &mut errors)
    } else {
        template.clone()
    };
    let path = format!("clustertemplates.{name}.defaults");
    if resolved.defaults.services.is_empty() {
        errors.push(ResolveError::NoDefaultServices {
            path: format!("{path}.services"),
        });
    }
    if resolved.defaults.provider.is_none() {
        errors.push(ResolveError::NoDefaultProvider {
            path: format!("{path}.provider"),
        });
    }
    (Some(resolved), errors)
}

enum Member<'c> {
    Template(&'c ClusterTemplate),
    Partial(&'c PartialTemplate),
}

/// The templates and partials to merge, root ancestor first: each template of the
/// `extends` chain after its own includes. A loop, not recursion over the chain,
/// so no catalog can exhaust the stack (a 50,000-template chain once aborted the
/// process); the chain stops at a cycle, a missing parent or [`MAX_EXTENDS_DEPTH`].
fn collect_members<'c>(
    catalog: &'c Catalog,
    template: &'c ClusterTemplate,
    errors: &mut Vec<ResolveError>,
) -> Vec<Member<'c>> {
    // From the template being resolved up to its furthest reachable ancestor.
    let mut chain: Vec<&'c ClusterTemplate> = vec![template];
    let mut current = template;
    // A cycle or an overlong chain is reported on the template being resolved: that
    // is the one unusable (a missing parent, on the template naming it).
    let root_extends = || format!("clustertemplates.{}.extends", template.name);
    while let Some(parent) = &current.extends {
        if let Some(at) = chain.iter().position(|seen| seen.name == parent.name) {
            let mut names: Vec<TemplateName> =
                chain[at..].iter().map(|seen| seen.name.clone()).collect();
            names.push(parent.name.clone());
            errors.push(ResolveError::Cycle {
                path: root_extends(),
                chain: names,
            });
            break;
        }
        if chain.len() > MAX_EXTENDS_DEPTH {
            errors.push(ResolveError::TooDeep {
                path: root_extends(),
                limit: MAX_EXTENDS_DEPTH,
            });
            break;
        }
        match catalog.clustertemplate(parent.name.as_str()) {
            Some(parent_template) => {
                chain.push(parent_template);
                current = parent_template;
            }
            None => {
                errors.push(ResolveError::MissingParent {
                    path: format!("clustertemplates.{}.extends", current.name),
                    name: parent.name.clone(),
                });
                break;
            }
        }
    }
    let mut members = Vec::new();
    for member in chain.into_iter().rev() {
        for (index, include) in member.includes.iter().enumerate() {
            match catalog.partialtemplate(include.name.as_str()) {
                Some(partial) => members.push(Member::Partial(partial)),
                None => errors.push(ResolveError::MissingPartial {
                    path: format!("clustertemplates.{}.includes[{index}]", member.name),
                    name: include.name.clone(),
                }),
            }
        }
        members.push(Member::Template(member));
    }
    members
}

fn merge(
    target: &ClusterTemplate,
    members: &[Member<'_>],
    errors: &mut Vec<ResolveError>,
) -> ClusterTemplate {
    let mut merged = ClusterTemplate::new(target.name.clone());
    merged.meta = target.meta.clone();
    merged.extra = target.extra.clone();
    merged.origin = Origin::none();
    // Config keys fixed by an immutable partial, and which partial fixed them.
    let mut locked: IndexMap<String, TemplateName> = IndexMap::new();
    for member in members {
        let (compatibility, defaults, path) = match member {
            Member::Template(t) => (
                &t.compatibility,
                &t.defaults,
                format!("clustertemplates.{}", t.name),
            ),
            Member::Partial(p) => (
                &p.compatibility,
                &p.defaults,
                format!("partialtemplates.{}", p.name),
            ),
        };
        merge_compatibility(&mut merged.compatibility, compatibility);
        merge_defaults(&mut merged.defaults, defaults);
        for (key, value) in &defaults.config {
            if let Some(partial) = locked.get(key) {
                errors.push(ResolveError::ImmutableOverride {
                    path: format!("{path}.defaults.config.{key}"),
                    key: key.clone(),
                    partial: partial.clone(),
                });
                continue;
            }
            merged.defaults.config.insert(key.clone(), value.clone());
        }
        match member {
            Member::Partial(partial) if partial.is_immutable() => {
                for key in partial.defaults.config.keys() {
                    locked.insert(key.clone(), partial.name.clone());
                }
            }
            Member::Partial(_) => {}
            Member::Template(template) => merge_template_only(&mut merged, template),
        }
    }
    merged
}

fn merge_compatibility(into: &mut Compatibility, from: &Compatibility) {
    union(&mut into.hardwaretypes, &from.hardwaretypes);
    union(&mut into.imagetypes, &from.imagetypes);
    union(&mut into.services, &from.services);
    merge_extra(&mut into.extra, &from.extra);
}

fn merge_defaults(into: &mut Defaults, from: &Defaults) {
    for service in &from.services {
        if !into.service_names().any(|name| name == service.name()) {
            into.services.push(service.clone());
        } else if let DefaultService::Configured { .. } = service {
            // A later object form carries config the bare name lacked.
            if let Some(slot) = into
                .services
                .iter_mut()
                .find(|s| s.name() == service.name())
            {
                *slot = service.clone();
            }
        }
    }
    later_wins(&mut into.provider, &from.provider);
    later_wins(&mut into.hardwaretype, &from.hardwaretype);
    later_wins(&mut into.imagetype, &from.imagetype);
    if from
        .dns_suffix
        .as_deref()
        .is_some_and(|s| !s.trim().is_empty())
    {
        into.dns_suffix.clone_from(&from.dns_suffix);
    }
    merge_extra(&mut into.extra, &from.extra);
}

/// What only chained cluster templates contribute: constraints, lease, links.
fn merge_template_only(merged: &mut ClusterTemplate, template: &ClusterTemplate) {
    if let Some(constraints) = &template.constraints {
        let into = merged.constraints.get_or_insert_with(Constraints::default);
        into.size.clone_from(&constraints.size);
        for group in &constraints.layout.mustcoexist {
            if !into.layout.mustcoexist.contains(group) {
                into.layout.mustcoexist.push(group.clone());
            }
        }
        for group in &constraints.layout.cantcoexist {
            if !into.layout.cantcoexist.contains(group) {
                into.layout.cantcoexist.push(group.clone());
            }
        }
        merge_extra(&mut into.layout.extra, &constraints.layout.extra);
        for (service, constraint) in &constraints.services {
            into.services.insert(service.clone(), constraint.clone());
        }
        merge_extra(&mut into.extra, &constraints.extra);
    }
    if template.administration.is_some() {
        merged.administration.clone_from(&template.administration);
    }
    // Per parameter: a child redeclares a parent's parameter whole.
    for (name, parameter) in &template.parameters {
        merged.parameters.insert(name.clone(), parameter.clone());
    }
    // The nearest template that limits who may use it decides: a child may widen or
    // narrow its parent's groups, and inherits them when it names none.
    if !template.groups.is_empty() {
        merged.groups.clone_from(&template.groups);
    }
    for link in &template.links {
        if !merged.links.contains(link) {
            merged.links.push(link.clone());
        }
    }
}

fn union<T: PartialEq + Clone>(into: &mut Vec<T>, from: &[T]) {
    for item in from {
        if !into.contains(item) {
            into.push(item.clone());
        }
    }
}

fn later_wins<T: Clone>(into: &mut Option<T>, from: &Option<T>) {
    if from.is_some() {
        into.clone_from(from);
    }
}

fn merge_extra(into: &mut Extra, from: &Extra) {
    for (key, value) in from {
        into.insert(key.clone(), value.clone());
    }
}

#[cfg(test)]
mod tests;
