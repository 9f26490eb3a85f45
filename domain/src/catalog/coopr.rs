//! Coopr's JSON: one entity, the whole-catalog bundle (docs/coopr-format.md §2.6), or the
//! published folder-per-kind layout, read and written losslessly.
//!
//! Export of an imported, unmodified entity gives back exactly the JSON value it
//! was read from (key order, `"0"` vs `0`, unknown keys). An entity edited since
//! import is written from its typed form, which still carries every unknown key.
//! The library does no I/O: folders are given as `(relative path, file text)` pairs.

mod decode;
mod entities;
mod error;

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::{
    Catalog, ClusterTemplate, EntityKind, HardwareType, ImageType, PartialTemplate, Provider,
    Service,
};
use decode::Ctx;
use entities::decode_entity;

pub use entities::CooprEntity;
pub use error::{DecodeError, DecodeProblem, ImportError};

/// Reads one entity from its JSON value.
pub fn entity_from_value<T: CooprEntity>(value: Value) -> Result<T, ImportError> {
    let mut ctx = Ctx::default();
    let fallback = T::KIND.key().to_owned();
    match decode_entity(&mut ctx, value, &fallback) {
        Some(entity) if ctx.errors.is_empty() => Ok(entity),
        _ => Err(ImportError {
            problems: ctx.errors,
        }),
    }
}

/// Reads one entity from JSON text.
pub fn entity_from_str<T: CooprEntity>(text: &str) -> Result<T, ImportError> {
    let value = parse_json(text, None, T::KIND.key())?;
    entity_from_value(value)
}

/// Writes one entity: its original JSON if unmodified since import, else its typed form.
pub fn entity_to_value<T: CooprEntity>(entity: &T) -> Value {
    if let Some(raw) = entity.origin().json() {
        if entity_from_value::<T>(raw.clone()).is_ok_and(|original| original == *entity) {
            return raw.clone();
        }
    }
    serde_json::to_value(entity).unwrap_or(Value::Null)
}

/// Reads a whole-catalog bundle: `{"providers": [...], "hardwaretypes": [...], ...}`,
/// any key optional. Unknown top-level keys are kept in [`Catalog::extra`].
pub fn import_bundle(text: &str) -> Result<Catalog, ImportError> {
    import_bundle_value(parse_json(text, None, "bundle")?)
}

pub fn import_bundle_value(bundle: Value) -> Result<Catalog, ImportError> {
    let mut ctx = Ctx::default();
    let mut catalog = Catalog::new();
    if let Some(mut fields) = ctx.object(bundle, "bundle") {
        for (key, value) in fields.drain() {
            let Some(kind) = EntityKind::from_key(&key) else {
                catalog.extra.insert(key, value);
                continue;
            };
            let Value::Array(items) = value else {
                ctx.fail(
                    key,
                    DecodeProblem::WrongType {
                        expected: "a list of entities",
                        found: decode::kind_of(&value),
                    },
                );
                continue;
            };
            for (index, item) in items.into_iter().enumerate() {
                add_entity(
                    &mut ctx,
                    &mut catalog,
                    kind,
                    item,
                    &format!("{key}[{index}]"),
                );
            }
        }
    }
    finish(ctx, catalog)
}

/// Reads the folder-per-kind layout: `providers/aws.json`, `services/base.json`…
/// Paths may have leading folders (`coopr-catalog/services/base.json`); files not
/// ending in `.json` (a LICENSE, a README) are skipped.
pub fn import_files(files: &[(String, String)]) -> Result<Catalog, ImportError> {
    let mut ctx = Ctx::default();
    let mut catalog = Catalog::new();
    for (path, text) in files {
        if !path.ends_with(".json") {
            continue;
        }
        ctx.file = Some(path.clone());
        let mut parts = path.rsplit(['/', '\\']);
        let file_name = parts.next().unwrap_or_default();
        let Some(kind) = parts.next().and_then(EntityKind::from_key) else {
            ctx.fail(file_name, DecodeProblem::UnknownFolder);
            continue;
        };
        match serde_json::from_str::<Value>(text) {
            Ok(value) => add_entity(&mut ctx, &mut catalog, kind, value, kind.key()),
            Err(err) => ctx.fail(kind.key(), DecodeProblem::InvalidJson(err.to_string())),
        }
    }
    ctx.file = None;
    finish(ctx, catalog)
}

/// The bundle Coopr's `GET /export` gives: all six kinds, in catalog order.
pub fn export_bundle(catalog: &Catalog) -> Value {
    let mut bundle = Map::new();
    bundle.insert("providers".into(), values(catalog.providers.values()));
    bundle.insert(
        "hardwaretypes".into(),
        values(catalog.hardwaretypes.values()),
    );
    bundle.insert("imagetypes".into(), values(catalog.imagetypes.values()));
    bundle.insert("services".into(), values(catalog.services.values()));
    bundle.insert(
        "clustertemplates".into(),
        values(catalog.clustertemplates.values()),
    );
    bundle.insert(
        "partialtemplates".into(),
        values(catalog.partialtemplates.values()),
    );
    for (key, value) in &catalog.extra {
        bundle.insert(key.clone(), value.clone());
    }
    Value::Object(bundle)
}

/// The folder-per-kind layout: `(kind/name.json, pretty JSON text)` per entity.
pub fn export_files(catalog: &Catalog) -> Vec<(String, String)> {
    let mut files = Vec::with_capacity(catalog.len());
    files.extend(catalog.providers.values().map(file));
    files.extend(catalog.hardwaretypes.values().map(file));
    files.extend(catalog.imagetypes.values().map(file));
    files.extend(catalog.services.values().map(file));
    files.extend(catalog.clustertemplates.values().map(file));
    files.extend(catalog.partialtemplates.values().map(file));
    files
}

fn file<T: CooprEntity>(entity: &T) -> (String, String) {
    let path = format!("{}/{}.json", T::KIND.key(), entity.entity_name());
    let mut text = serde_json::to_string_pretty(&entity_to_value(entity)).unwrap_or_default();
    text.push('\n');
    (path, text)
}

fn values<'a, T: CooprEntity + 'a>(entities: impl Iterator<Item = &'a T>) -> Value {
    Value::Array(entities.map(entity_to_value).collect())
}

fn parse_json(text: &str, file: Option<&str>, path: &str) -> Result<Value, ImportError> {
    serde_json::from_str(text).map_err(|err| ImportError {
        problems: vec![DecodeError {
            file: file.map(str::to_owned),
            path: path.to_owned(),
            problem: DecodeProblem::InvalidJson(err.to_string()),
        }],
    })
}

fn finish(ctx: Ctx, catalog: Catalog) -> Result<Catalog, ImportError> {
    if ctx.errors.is_empty() {
        Ok(catalog)
    } else {
        Err(ImportError {
            problems: ctx.errors,
        })
    }
}

fn add_entity(ctx: &mut Ctx, catalog: &mut Catalog, kind: EntityKind, value: Value, path: &str) {
    match kind {
        EntityKind::Provider => insert(ctx, &mut catalog.providers, value, path),
        EntityKind::HardwareType => insert(ctx, &mut catalog.hardwaretypes, value, path),
        EntityKind::ImageType => insert(ctx, &mut catalog.imagetypes, value, path),
        EntityKind::Service => insert(ctx, &mut catalog.services, value, path),
        EntityKind::ClusterTemplate => insert(ctx, &mut catalog.clustertemplates, value, path),
        EntityKind::PartialTemplate => insert(ctx, &mut catalog.partialtemplates, value, path),
    }
}

fn insert<T: CooprEntity>(
    ctx: &mut Ctx,
    map: &mut indexmap::IndexMap<T::Name, T>,
    value: Value,
    path: &str,
) {
    // Names are checked before decoding so a duplicate of a broken entity counts.
    if let Some(name) = value.get("name").and_then(Value::as_str) {
        if !ctx.seen.insert((T::KIND, name.to_owned())) {
            ctx.fail(
                format!("{}.{name}", T::KIND.key()),
                DecodeProblem::Duplicate(name.to_owned()),
            );
            return;
        }
    }
    if let Some(entity) = decode_entity::<T>(ctx, value, path) {
        map.insert(entity.key(), entity);
    }
}

macro_rules! deserialize_via_coopr {
    ($($entity:ty),*) => {$(
        /// Reads Coopr JSON (lenient counts and leases, unknown keys kept), the
        /// same way the importer does.
        impl<'de> Deserialize<'de> for $entity {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = Value::deserialize(deserializer)?;
                entity_from_value(value).map_err(serde::de::Error::custom)
            }
        }
    )*};
}

deserialize_via_coopr!(
    Provider,
    HardwareType,
    ImageType,
    Service,
    ClusterTemplate,
    PartialTemplate
);

#[cfg(test)]
mod tests;
