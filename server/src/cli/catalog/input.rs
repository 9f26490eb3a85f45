//! Reading a catalog from disk: a bundle file, a single entity file, or a
//! folder-per-kind directory, in Coopr's or Corral's form (one decoder reads both).
//!
//! Decode problems are printed one per line, each naming the file and the field,
//! and the caller exits 1; I/O errors come back as errors naming the path.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use domain::catalog::coopr::{self, DecodeProblem, ImportError};
use domain::catalog::{Catalog, EntityKind};
use serde_json::Value;

use super::local_files::{read_capped, refuse_link, EntryKind, Links};

/// How the input was laid out, so `convert` can write the same shape back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// One whole-catalog bundle file with this file name.
    Bundle { file_name: String },
    /// One file per entity (a directory, or a single entity file).
    Files,
}

#[derive(Debug)]
pub struct Input {
    pub catalog: Catalog,
    pub shape: Shape,
    /// Which file each entity came from, to name it in validation problems.
    pub origins: Origins,
}

/// The file behind each entity: validation problems carry entity paths
/// (`services.web.dependencies...`), and a user with a directory of files needs
/// to know which one to open.
#[derive(Debug, Default)]
pub struct Origins {
    /// The one file everything came from (a bundle or a single entity file).
    whole: Option<String>,
    /// `kind.name` and its file, for a directory.
    entities: Vec<(String, String)>,
}

impl Origins {
    /// The file holding what `path` (a validation problem's path) points into.
    pub fn file_of(&self, path: &str) -> Option<&str> {
        let within = |key: &str| {
            path.strip_prefix(key).is_some_and(|rest| {
                rest.is_empty() || rest.starts_with('.') || rest.starts_with('[')
            })
        };
        // The longest match wins, should one name extend another with a dot.
        self.entities
            .iter()
            .filter(|(key, _)| within(key))
            .max_by_key(|(key, _)| key.len())
            .map(|(_, file)| file.as_str())
            .or(self.whole.as_deref())
    }

    fn whole(file: String) -> Self {
        Self {
            whole: Some(file),
            entities: Vec::new(),
        }
    }

    /// Reads each file's kind (its folder) and `name`; files that say neither are
    /// left out (the decoder reports them).
    fn of_files(files: &[(String, String)]) -> Self {
        let entities = files
            .iter()
            .filter_map(|(file, text)| {
                let kind = Path::new(file)
                    .parent()
                    .and_then(Path::file_name)
                    .and_then(|name| name.to_str())
                    .and_then(EntityKind::from_key)?;
                let value: Value = serde_json::from_str(text).ok()?;
                let name = value.get("name")?.as_str()?;
                Some((format!("{}.{name}", kind.key()), file.clone()))
            })
            .collect();
        Self {
            whole: None,
            entities,
        }
    }
}

/// Reads `path`; on decode problems prints them to stderr and returns `None`.
pub fn load_or_report(path: &Path) -> anyhow::Result<Option<Input>> {
    let metadata = fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    let loaded = if metadata.is_dir() {
        load_directory(path)?
    } else {
        load_file(path)?
    };
    match loaded {
        Ok(input) => Ok(Some(input)),
        Err(error) => {
            report(path, &error);
            Ok(None)
        }
    }
}

fn report(path: &Path, error: &ImportError) {
    for problem in &error.problems {
        if problem.file.is_some() {
            eprintln!("error: {problem}");
        } else {
            eprintln!("error: {}: {problem}", path.display());
        }
    }
}

fn load_directory(root: &Path) -> anyhow::Result<Result<Input, ImportError>> {
    let mut paths = Vec::new();
    collect_json(root, &mut paths)?;
    if paths.is_empty() {
        bail!("no .json files under {}", root.display());
    }
    paths.sort();
    let files = paths
        .iter()
        .map(|path| Ok((path.display().to_string(), read(path, Links::Refuse)?)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(coopr::import_files(&files).map(|catalog| Input {
        catalog,
        shape: Shape::Files,
        origins: Origins::of_files(&files),
    }))
}

/// Folders of a catalog directory that hold no entities: the plugin resources
/// `corral catalog import` uploads (a playbook may well end in `.json`).
pub const RESOURCE_FOLDERS: [&str; 2] = ["scripts", "files"];

fn collect_json(dir: &Path, paths: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let entries = fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot read {}", dir.display()))?;
        let path = entry.path();
        let file_type = entry
            .file_type()
            .with_context(|| format!("cannot read {}", path.display()))?;
        // Links are refused, not followed, wherever they point (see local_files).
        match refuse_link(&path, EntryKind::of_type(file_type))? {
            EntryKind::Dir if is_skipped_folder(&path) => {}
            EntryKind::Dir => collect_json(&path, paths)?,
            EntryKind::File if path.extension().is_some_and(|ext| ext == "json") => {
                paths.push(path);
            }
            _ => {}
        }
    }
    Ok(())
}

/// Resource folders, and hidden ones (`.git`), are not part of the catalog.
fn is_skipped_folder(path: &Path) -> bool {
    path.file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name.starts_with('.') || RESOURCE_FOLDERS.contains(&name))
}

/// A catalog file's text: no bigger than the server takes, and not through a link
/// unless it is the path named on the command line.
fn read(path: &Path, links: Links) -> anyhow::Result<String> {
    let bytes = read_capped(path, crate::api::MAX_JSON_BYTES, links)?;
    String::from_utf8(bytes).with_context(|| format!("{}: is not UTF-8 text", path.display()))
}

fn load_file(path: &Path) -> anyhow::Result<Result<Input, ImportError>> {
    let text = read(path, Links::Follow)?;
    let display = path.display().to_string();
    let value: Value = serde_json::from_str(&text).map_err(|err| {
        anyhow::anyhow!("{display}: {}", DecodeProblem::InvalidJson(err.to_string()))
    })?;
    if is_bundle(&value) {
        let file_name = path.file_name().map_or_else(
            || "catalog.json".to_owned(),
            |name| name.to_string_lossy().into_owned(),
        );
        return Ok(coopr::import_bundle_value(value).map(|catalog| Input {
            catalog,
            shape: Shape::Bundle { file_name },
            origins: Origins::whole(display),
        }));
    }
    let Some(kind) = entity_kind(path, &value) else {
        bail!(
            "{display}: cannot tell which kind of entity this is; put it in a folder named \
             after its kind (providers, hardwaretypes, imagetypes, services, \
             clustertemplates, partialtemplates)"
        );
    };
    // The importer takes the kind from the folder name, so give it one.
    let file_name = path
        .file_name()
        .map_or_else(String::new, |name| name.to_string_lossy().into_owned());
    let relative = format!("{}/{file_name}", kind.key());
    let imported = coopr::import_files(&[(relative, text)]).map_err(|mut error| {
        for problem in &mut error.problems {
            problem.file = Some(display.clone());
        }
        error
    });
    Ok(imported.map(|catalog| Input {
        catalog,
        shape: Shape::Files,
        origins: Origins::whole(display),
    }))
}

/// A bundle is an object keyed by entity kinds; an entity has a `name`.
fn is_bundle(value: &Value) -> bool {
    value.as_object().is_some_and(|object| {
        !object.contains_key("name") && object.keys().any(|key| EntityKind::from_key(key).is_some())
    })
}

/// The kind named by the file's folder, else the one its keys point to.
fn entity_kind(path: &Path, value: &Value) -> Option<EntityKind> {
    let folder = path
        .parent()
        .and_then(Path::file_name)
        .and_then(|name| name.to_str())
        .and_then(EntityKind::from_key);
    folder.or_else(|| kind_from_keys(value))
}

fn kind_from_keys(value: &Value) -> Option<EntityKind> {
    let object = value.as_object()?;
    let has = |key: &str| object.contains_key(key);
    let mapped = |field: &str| {
        object
            .get("providermap")
            .and_then(Value::as_object)
            .is_some_and(|map| map.values().any(|entry| entry.get(field).is_some()))
    };
    if has("providertype") {
        Some(EntityKind::Provider)
    } else if mapped("flavor") {
        Some(EntityKind::HardwareType)
    } else if mapped("image") {
        Some(EntityKind::ImageType)
    } else if has("dependencies") || has("provisioner") {
        Some(EntityKind::Service)
    } else if has("immutable") {
        Some(EntityKind::PartialTemplate)
    } else if [
        "constraints",
        "compatibility",
        "defaults",
        "extends",
        "includes",
    ]
    .iter()
    .any(|key| has(key))
    {
        Some(EntityKind::ClusterTemplate)
    } else {
        None
    }
}
