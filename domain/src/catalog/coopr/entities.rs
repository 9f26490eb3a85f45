//! Decoders for each entity kind, built on the field helpers of [`super::decode`].

use indexmap::IndexMap;
use serde_json::Value;

use super::decode::{kind_of as kind_name, Ctx, Fields};
use super::error::DecodeProblem;
use crate::catalog::{
    ActionSpec, Administration, ClusterTemplate, Compatibility, Constraints, DefaultService,
    Defaults, Dependencies, DependencyStage, EntityKind, LayoutConstraints, LeaseDuration, Origin,
    PartialTemplate, Provider, ProviderMap, ProviderMapped, Provisioner, Quantities, Service,
    ServiceAction, ServiceConstraint, SizeConstraint,
};
use crate::names::{
    HardwareTypeName, ImageTypeName, NameError, ProviderName, ServiceName, TemplateName,
};

/// What import and export need to know about one entity kind.
pub trait CooprEntity: Sized + PartialEq + serde::Serialize {
    type Name: std::str::FromStr<Err = NameError> + AsRef<str> + std::hash::Hash + Eq + Clone;
    const KIND: EntityKind;

    #[doc(hidden)]
    fn decode_body(ctx: &mut Ctx, name: Self::Name, fields: Fields) -> Self;
    fn origin(&self) -> &Origin;
    fn set_origin(&mut self, origin: Origin);
    fn entity_name(&self) -> &str;
    fn key(&self) -> Self::Name;
}

/// Decodes one entity; `fallback_path` names it in errors until its name is known.
pub(super) fn decode_entity<T: CooprEntity>(
    ctx: &mut Ctx,
    value: Value,
    fallback_path: &str,
) -> Option<T> {
    let raw = value.clone();
    let errors_before = ctx.errors.len();
    let mut fields = ctx.object(value, fallback_path)?;
    let name_path = fields.path_of("name");
    let name = match fields.take("name") {
        Some(name) => ctx.name::<T::Name>(name, &name_path),
        None => {
            ctx.fail(name_path, DecodeProblem::Missing);
            None
        }
    }?;
    fields.path = format!("{}.{}", T::KIND.key(), name.as_ref());
    let mut entity = T::decode_body(ctx, name, fields);
    entity.set_origin(Origin::from_json(raw));
    (ctx.errors.len() == errors_before).then_some(entity)
}

macro_rules! entity_plumbing {
    () => {
        fn origin(&self) -> &Origin {
            &self.origin
        }

        fn set_origin(&mut self, origin: Origin) {
            self.origin = origin;
        }

        fn entity_name(&self) -> &str {
            self.name.as_ref()
        }

        fn key(&self) -> Self::Name {
            self.name.clone()
        }
    };
}

impl CooprEntity for Provider {
    type Name = ProviderName;
    const KIND: EntityKind = EntityKind::Provider;

    fn decode_body(ctx: &mut Ctx, name: ProviderName, mut fields: Fields) -> Self {
        let meta = ctx.meta(&mut fields);
        let providertype = ctx.req_string(&mut fields, "providertype");
        let provisioner = ctx.free_object(&mut fields, "provisioner");
        Provider {
            name,
            meta,
            providertype: providertype.unwrap_or_default(),
            provisioner,
            extra: fields.extra(),
            origin: Origin::none(),
        }
    }

    entity_plumbing!();
}

/// The name types of [`ProviderMapped`] entities, each with the kind it names: the
/// one thing that tells a hardware type's decoding from an image type's.
pub trait ProviderMappedName:
    std::str::FromStr<Err = NameError> + AsRef<str> + std::hash::Hash + Eq + Clone + serde::Serialize
{
    const KIND: EntityKind;
}

impl ProviderMappedName for HardwareTypeName {
    const KIND: EntityKind = EntityKind::HardwareType;
}

impl ProviderMappedName for ImageTypeName {
    const KIND: EntityKind = EntityKind::ImageType;
}

impl<Name: ProviderMappedName> CooprEntity for ProviderMapped<Name> {
    type Name = Name;
    const KIND: EntityKind = Name::KIND;

    fn decode_body(ctx: &mut Ctx, name: Name, mut fields: Fields) -> Self {
        let meta = ctx.meta(&mut fields);
        let providermap = providermap(ctx, &mut fields);
        ProviderMapped {
            name,
            meta,
            providermap,
            extra: fields.extra(),
            origin: Origin::none(),
        }
    }

    entity_plumbing!();
}

fn providermap(ctx: &mut Ctx, fields: &mut Fields) -> ProviderMap {
    if !fields.has("providermap") {
        ctx.fail(fields.path_of("providermap"), DecodeProblem::Missing);
    }
    ctx.nested(fields, "providermap", |ctx, mut map| {
        let mut providermap = ProviderMap::new();
        for (key, value) in map.drain() {
            let path = format!("{}.{key}", map.path);
            let Some(provider) = ctx.name::<ProviderName>(Value::String(key), &path) else {
                continue;
            };
            let settings = match value {
                Value::Object(settings) => settings.into_iter().collect(),
                other => {
                    ctx.fail(
                        path,
                        DecodeProblem::WrongType {
                            expected: "an object",
                            found: kind_name(&other),
                        },
                    );
                    IndexMap::new()
                }
            };
            providermap.insert(provider, settings);
        }
        providermap
    })
}

impl CooprEntity for Service {
    type Name = ServiceName;
    const KIND: EntityKind = EntityKind::Service;

    fn decode_body(ctx: &mut Ctx, name: ServiceName, mut fields: Fields) -> Self {
        let meta = ctx.meta(&mut fields);
        let dependencies = ctx.nested(&mut fields, "dependencies", |ctx, mut deps| Dependencies {
            provides: ctx.names(&mut deps, "provides"),
            conflicts: ctx.names(&mut deps, "conflicts"),
            install: ctx.nested(&mut deps, "install", dependency_stage),
            runtime: ctx.nested(&mut deps, "runtime", dependency_stage),
            extra: deps.extra(),
        });
        let provisioner = ctx.nested(&mut fields, "provisioner", |ctx, mut provisioner| {
            let actions = ctx.nested(&mut provisioner, "actions", actions);
            Provisioner {
                actions,
                extra: provisioner.extra(),
            }
        });
        let links = ctx.links(&mut fields, "links");
        Service {
            name,
            meta,
            dependencies,
            provisioner,
            links,
            extra: fields.extra(),
            origin: Origin::none(),
        }
    }

    entity_plumbing!();
}

fn dependency_stage(ctx: &mut Ctx, mut stage: Fields) -> DependencyStage {
    DependencyStage {
        requires: ctx.names(&mut stage, "requires"),
        uses: ctx.names(&mut stage, "uses"),
        extra: stage.extra(),
    }
}

fn actions(ctx: &mut Ctx, mut actions: Fields) -> IndexMap<ServiceAction, ActionSpec> {
    let mut decoded = IndexMap::new();
    for (key, value) in actions.drain() {
        let path = format!("{}.{key}", actions.path);
        let Some(action) = ServiceAction::parse(&key) else {
            ctx.fail(path, DecodeProblem::UnknownAction(key));
            continue;
        };
        let Some(mut spec) = ctx.object(value, &path) else {
            continue;
        };
        let automator = ctx.req_string(&mut spec, "type");
        let fields = ctx.free_object(&mut spec, "fields");
        if let Some(automator) = automator {
            decoded.insert(
                action,
                ActionSpec {
                    automator,
                    fields,
                    extra: spec.extra(),
                },
            );
        }
    }
    decoded
}

impl CooprEntity for ClusterTemplate {
    type Name = TemplateName;
    const KIND: EntityKind = EntityKind::ClusterTemplate;

    fn decode_body(ctx: &mut Ctx, name: TemplateName, mut fields: Fields) -> Self {
        let meta = ctx.meta(&mut fields);
        let compatibility = ctx.nested(&mut fields, "compatibility", compatibility);
        let defaults = ctx.nested(&mut fields, "defaults", defaults);
        let constraints = ctx.nested_opt(&mut fields, "constraints", constraints);
        let administration = ctx.nested_opt(&mut fields, "administration", |ctx, mut admin| {
            Administration {
                leaseduration: ctx.nested_opt(&mut admin, "leaseduration", |ctx, mut lease| {
                    LeaseDuration {
                        initial: ctx.lease(&mut lease, "initial"),
                        max: ctx.lease(&mut lease, "max"),
                        step: ctx.lease(&mut lease, "step"),
                        grace: ctx.lease(&mut lease, "grace"),
                        extra: lease.extra(),
                    }
                }),
                extra: admin.extra(),
            }
        });
        let parameters = match fields.take("parameters") {
            None => crate::catalog::parameters::Parameters::new(),
            Some(value) => crate::catalog::parameters::decode(value).unwrap_or_else(|errors| {
                for error in errors {
                    let path = fields.path_of("parameters");
                    let path = match error.parameter.as_str() {
                        "" => path,
                        name => format!("{path}.{name}"),
                    };
                    ctx.fail(path, DecodeProblem::BadParameter(error.problem));
                }
                crate::catalog::parameters::Parameters::new()
            }),
        };
        let groups = ctx.names(&mut fields, "groups");
        let links = ctx.links(&mut fields, "links");
        let extends = fields
            .take("extends")
            .and_then(|value| ctx.template_ref(value, &fields.path_of("extends")));
        let includes = match fields.take("includes") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .into_iter()
                .enumerate()
                .filter_map(|(index, item)| {
                    ctx.template_ref(item, &format!("{}[{index}]", fields.path_of("includes")))
                })
                .collect(),
            Some(other) => {
                ctx.fail(
                    fields.path_of("includes"),
                    DecodeProblem::WrongType {
                        expected: "a list of {\"name\"} objects",
                        found: kind_name(&other),
                    },
                );
                Vec::new()
            }
        };
        ClusterTemplate {
            name,
            meta,
            compatibility,
            defaults,
            constraints,
            administration,
            parameters,
            groups,
            links,
            extends,
            includes,
            extra: fields.extra(),
            origin: Origin::none(),
        }
    }

    entity_plumbing!();
}

impl CooprEntity for PartialTemplate {
    type Name = TemplateName;
    const KIND: EntityKind = EntityKind::PartialTemplate;

    fn decode_body(ctx: &mut Ctx, name: TemplateName, mut fields: Fields) -> Self {
        let meta = ctx.meta(&mut fields);
        let compatibility = ctx.nested(&mut fields, "compatibility", compatibility);
        let defaults = ctx.nested(&mut fields, "defaults", defaults);
        let immutable = ctx.opt_bool(&mut fields, "immutable");
        PartialTemplate {
            name,
            meta,
            compatibility,
            defaults,
            immutable,
            extra: fields.extra(),
            origin: Origin::none(),
        }
    }

    entity_plumbing!();
}

fn compatibility(ctx: &mut Ctx, mut compat: Fields) -> Compatibility {
    Compatibility {
        hardwaretypes: ctx.names(&mut compat, "hardwaretypes"),
        imagetypes: ctx.names(&mut compat, "imagetypes"),
        services: ctx.names(&mut compat, "services"),
        extra: compat.extra(),
    }
}

fn defaults(ctx: &mut Ctx, mut defaults: Fields) -> Defaults {
    let services = match defaults.take("services") {
        None => Vec::new(),
        Some(Value::Array(items)) => {
            let path = defaults.path_of("services");
            items
                .into_iter()
                .enumerate()
                .filter_map(|(index, item)| default_service(ctx, item, &format!("{path}[{index}]")))
                .collect()
        }
        Some(other) => {
            ctx.fail(
                defaults.path_of("services"),
                DecodeProblem::WrongType {
                    expected: "a list of services",
                    found: kind_name(&other),
                },
            );
            Vec::new()
        }
    };
    Defaults {
        services,
        provider: ctx.opt_name(&mut defaults, "provider"),
        hardwaretype: ctx.opt_name(&mut defaults, "hardwaretype"),
        imagetype: ctx.opt_name(&mut defaults, "imagetype"),
        dns_suffix: ctx.opt_string(&mut defaults, "dnsSuffix"),
        config: ctx.free_object(&mut defaults, "config"),
        extra: defaults.extra(),
    }
}

fn default_service(ctx: &mut Ctx, item: Value, path: &str) -> Option<DefaultService> {
    if item.is_string() {
        return ctx.name(item, path).map(DefaultService::Name);
    }
    let mut fields = ctx.object(item, path)?;
    let name = match fields.take("name") {
        Some(name) => ctx.name(name, &fields.path_of("name")),
        None => {
            ctx.fail(fields.path_of("name"), DecodeProblem::Missing);
            None
        }
    }?;
    let config = fields.take("config");
    Some(DefaultService::Configured {
        name,
        config,
        extra: fields.extra(),
    })
}

fn constraints(ctx: &mut Ctx, mut constraints: Fields) -> Constraints {
    let size = ctx.nested_opt(&mut constraints, "size", |ctx, mut size| SizeConstraint {
        min: ctx.count(&mut size, "min"),
        max: ctx.count(&mut size, "max"),
        step: ctx.count(&mut size, "step"),
        extra: size.extra(),
    });
    let layout = ctx.nested(&mut constraints, "layout", |ctx, mut layout| {
        LayoutConstraints {
            mustcoexist: ctx.groups(&mut layout, "mustcoexist"),
            cantcoexist: ctx.groups(&mut layout, "cantcoexist"),
            extra: layout.extra(),
        }
    });
    let services = ctx.nested(&mut constraints, "services", |ctx, mut services| {
        let mut decoded = IndexMap::new();
        for (key, value) in services.drain() {
            let path = format!("{}.{key}", services.path);
            let Some(service) = ctx.name::<ServiceName>(Value::String(key), &path) else {
                continue;
            };
            let Some(mut fields) = ctx.object(value, &path) else {
                continue;
            };
            let constraint = ServiceConstraint {
                quantities: ctx.nested_opt(&mut fields, "quantities", |ctx, mut q| Quantities {
                    min: ctx.count(&mut q, "min"),
                    max: ctx.count(&mut q, "max"),
                    extra: q.extra(),
                }),
                hardwaretypes: ctx.names(&mut fields, "hardwaretypes"),
                imagetypes: ctx.names(&mut fields, "imagetypes"),
                extra: fields.extra(),
            };
            decoded.insert(service, constraint);
        }
        decoded
    });
    Constraints {
        size,
        layout,
        services,
        extra: constraints.extra(),
    }
}
