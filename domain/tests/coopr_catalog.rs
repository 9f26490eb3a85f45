//! Coopr's published catalog (testdata/coopr-catalog) through Corral: lossless
//! import/export of every file, and validation naming exactly the known defects.

// Test helpers outside `#[test]` functions panic on unreadable fixtures, as tests do.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::{Path, PathBuf};

use domain::catalog::coopr::{
    entity_to_value, export_bundle, export_files, import_bundle, import_files,
};
use domain::catalog::validate::{validate, Severity};
use domain::catalog::{Catalog, EntityKind};
use serde_json::Value;

fn catalog_root() -> PathBuf {
    std::env::var_os("COOPR_CATALOG")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../testdata/coopr-catalog"
            ))
        })
}

/// Every file under the catalog root, as `(relative path, text)`, sorted.
fn catalog_files() -> Vec<(String, String)> {
    let root = catalog_root();
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    files.sort();
    assert!(files.len() > 90, "catalog not found at {}", root.display());
    files
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, String)>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(root, &path, files);
        } else {
            let relative = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            files.push((relative, fs::read_to_string(&path).unwrap()));
        }
    }
}

fn json_files() -> Vec<(String, Value)> {
    catalog_files()
        .into_iter()
        .filter(|(path, _)| path.ends_with(".json"))
        .map(|(path, text)| {
            let value = serde_json::from_str(&text).unwrap();
            (path, value)
        })
        .collect()
}

fn imported() -> Catalog {
    import_files(&catalog_files()).unwrap_or_else(|err| panic!("{err}"))
}

#[test]
fn imports_every_entity_of_the_published_catalog() {
    let catalog = imported();
    let count = |kind: &str| {
        json_files()
            .iter()
            .filter(|(path, _)| path.starts_with(&format!("{kind}/")))
            .count()
    };
    assert_eq!(catalog.providers.len(), count("providers"));
    assert_eq!(catalog.hardwaretypes.len(), count("hardwaretypes"));
    assert_eq!(catalog.imagetypes.len(), count("imagetypes"));
    assert_eq!(catalog.services.len(), count("services"));
    assert_eq!(catalog.clustertemplates.len(), count("clustertemplates"));
    assert_eq!(catalog.clustertemplates.len(), 15);
    assert!(catalog.partialtemplates.is_empty());
}

#[test]
fn every_file_round_trips_to_the_identical_json_value() {
    let catalog = imported();
    let exported: std::collections::HashMap<String, String> =
        export_files(&catalog).into_iter().collect();
    let files = json_files();
    assert_eq!(exported.len(), files.len());
    for (path, original) in files {
        let text = exported
            .get(&path)
            .unwrap_or_else(|| panic!("{path} not exported"));
        let again: Value = serde_json::from_str(text).unwrap();
        assert_eq!(again, original, "{path}");
        // Value equality ignores key order; compare the serialised text for order.
        assert_eq!(
            serde_json::to_string(&again).unwrap(),
            serde_json::to_string(&original).unwrap(),
            "{path}: key order"
        );
    }
}

#[test]
fn typed_form_alone_keeps_every_value_of_every_file() {
    // Drop the remembered JSON: the typed model itself must hold everything.
    for (path, original) in json_files() {
        let kind = EntityKind::from_key(path.split('/').next().unwrap()).unwrap();
        let rewritten = typed_only(kind, original.clone());
        // The typed form may add empty defaults (Coopr's writer does too) but must
        // lose and change nothing.
        if let Err(at) = contained(&original, &rewritten, String::new()) {
            panic!("{path}: typed form lost or changed {at}");
        }
    }
}

/// Checks every key and value of `original` is in `copy` at the same place.
fn contained(original: &Value, copy: &Value, at: String) -> Result<(), String> {
    match (original, copy) {
        (Value::Object(a), Value::Object(b)) => a.iter().try_for_each(|(key, value)| {
            let inner = b.get(key).ok_or_else(|| format!("{at}.{key}"))?;
            contained(value, inner, format!("{at}.{key}"))
        }),
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .try_for_each(|(i, (x, y))| contained(x, y, format!("{at}[{i}]"))),
        (a, b) if a == b => Ok(()),
        _ => Err(at),
    }
}

fn typed_only(kind: EntityKind, value: Value) -> Value {
    use domain::catalog::coopr::entity_from_value as decode;
    use domain::catalog::*;
    fn strip<T: domain::catalog::coopr::CooprEntity + serde::Serialize>(entity: T) -> Value {
        serde_json::to_value(&entity).unwrap()
    }
    match kind {
        EntityKind::Provider => strip(decode::<Provider>(value).unwrap()),
        EntityKind::HardwareType => strip(decode::<HardwareType>(value).unwrap()),
        EntityKind::ImageType => strip(decode::<ImageType>(value).unwrap()),
        EntityKind::Service => strip(decode::<Service>(value).unwrap()),
        EntityKind::ClusterTemplate => strip(decode::<ClusterTemplate>(value).unwrap()),
        EntityKind::PartialTemplate => strip(decode::<PartialTemplate>(value).unwrap()),
    }
}

#[test]
fn bundle_round_trips_through_text() {
    let catalog = imported();
    let bundle = export_bundle(&catalog);
    let text = serde_json::to_string_pretty(&bundle).unwrap();
    let again = import_bundle(&text).unwrap();
    assert_eq!(again, catalog);
    assert_eq!(export_bundle(&again), bundle);
    for (name, service) in &catalog.services {
        assert_eq!(
            entity_to_value(service),
            entity_to_value(&again.services[name])
        );
    }
}

#[test]
fn validation_accepts_the_twelve_consistent_templates() {
    let catalog = imported();
    let report = validate(&catalog);
    let broken = ["cdap-singlenode", "coopr-standalone-docker", "docker-base"];
    let mut consistent = 0;
    for name in catalog.clustertemplates.keys() {
        if broken.contains(&name.as_str()) {
            continue;
        }
        consistent += 1;
        let prefix = format!("clustertemplates.{name}");
        let errors: Vec<String> = report
            .under(&prefix)
            .filter(|p| p.severity == Severity::Error)
            .map(ToString::to_string)
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:#?}");
        catalog
            .resolved_template(name)
            .unwrap_or_else(|err| panic!("{err}"));
    }
    assert_eq!(consistent, 12);
}

#[test]
fn validation_names_every_defect_of_the_three_inconsistent_templates() {
    let report = validate(&imported());
    let found = |template: &str| -> Vec<(Severity, String, String)> {
        report
            .under(&format!("clustertemplates.{template}"))
            .map(|p| (p.severity, p.path.clone(), p.message.clone()))
            .collect()
    };
    let expect = |items: &[(Severity, &str, &str)]| -> Vec<(Severity, String, String)> {
        items
            .iter()
            .map(|(s, p, m)| (*s, (*p).to_owned(), (*m).to_owned()))
            .collect()
    };
    use Severity::{Error, Warning};
    assert_eq!(
        found("cdap-singlenode"),
        expect(&[(
            Error,
            "clustertemplates.cdap-singlenode.compatibility.services[2]",
            "unknown service \"hadoop-hdfs-secondarynamenode\""
        )])
    );
    assert_eq!(
        found("coopr-standalone-docker"),
        expect(&[
            (
                Error,
                "clustertemplates.coopr-standalone-docker.compatibility.services[0]",
                "unknown service \"coopr-standalone\""
            ),
            (
                Error,
                "clustertemplates.coopr-standalone-docker.defaults.services[0]",
                "unknown service \"coopr-standalone\""
            ),
            (
                Warning,
                "clustertemplates.coopr-standalone-docker.links[0].url",
                "macro names service \"coopr\", which does not exist"
            ),
        ])
    );
    assert_eq!(
        found("docker-base"),
        expect(&[
            (
                Error,
                "clustertemplates.docker-base.compatibility.imagetypes[2]",
                "unknown image type \"ubuntu16\""
            ),
            (
                Error,
                "clustertemplates.docker-base.defaults.imagetype",
                "default image type \"centos6\" is not in compatibility.imagetypes"
            ),
        ])
    );
}

#[test]
fn unsupported_provider_types_and_automators_are_warnings_and_nothing_else_is_wrong() {
    let catalog = imported();
    let report = validate(&catalog);
    let provider_problems: Vec<_> = report.under("providers").collect();
    assert_eq!(provider_problems.len(), catalog.providers.len());
    for problem in provider_problems {
        assert_eq!(problem.severity, Severity::Warning, "{problem}");
        assert!(problem.path.ends_with(".providertype"), "{problem}");
        assert!(problem.message.contains("cannot be driven by Corral"));
    }
    // Every service runs chef-solo or docker: one warning each, nothing else.
    let service_problems: Vec<_> = report.under("services").collect();
    assert_eq!(service_problems.len(), catalog.services.len(), "{report}");
    for problem in service_problems {
        assert_eq!(problem.severity, Severity::Warning, "{problem}");
        assert!(problem.path.ends_with(".provisioner.actions"), "{problem}");
        assert!(
            problem.message.contains("\"chef-solo\"") || problem.message.contains("\"docker\""),
            "{problem}"
        );
    }
    // Hardware and image types of the published catalog are clean.
    for kind in ["hardwaretypes", "imagetypes"] {
        assert_eq!(report.under(kind).count(), 0, "{kind}: {report}");
    }
    // Only the three inconsistent templates carry errors.
    let mut with_errors: Vec<&str> = report
        .errors()
        .map(|p| p.path.split('.').nth(1).unwrap())
        .collect();
    with_errors.dedup();
    assert_eq!(
        with_errors,
        ["cdap-singlenode", "coopr-standalone-docker", "docker-base"]
    );
}

#[test]
fn corral_form_keeps_the_meaning_of_the_published_catalog() {
    use domain::catalog::corral;
    let catalog = imported();
    let text = serde_json::to_string(&corral::export_bundle(&catalog)).unwrap();
    let normalised = corral::import_bundle(&text).unwrap();
    assert_eq!(normalised, corral::normalise(&catalog));
    assert_eq!(validate(&normalised), validate(&catalog));
    let back = corral::to_coopr_shape(&normalised);
    assert_eq!(validate(&back), validate(&catalog));
    for (name, template) in &catalog.clustertemplates {
        let converted = &back.clustertemplates[name];
        assert_eq!(converted.size(), template.size(), "{name}");
        let before = template.lease().cloned().unwrap_or_default();
        let after = converted.lease().cloned().unwrap_or_default();
        assert_eq!(
            after.initial_duration(),
            before.initial_duration(),
            "{name}"
        );
        assert_eq!(after.max_duration(), before.max_duration(), "{name}");
        assert_eq!(after.step_duration(), before.step_duration(), "{name}");
        assert_eq!(
            converted.defaults.effective_config(),
            template.defaults.effective_config()
        );
    }
}

/// JSON pointers of every object in `value` that may take an unknown key: all
/// but the maps keyed by name or action, whose keys are data.
fn object_pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            let keyed = ["/providermap", "/constraints/services", "/actions"]
                .iter()
                .any(|suffix| at.ends_with(suffix));
            if !keyed {
                out.push(at.clone());
            }
            for (key, item) in map {
                object_pointers(item, format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                object_pointers(item, format!("{at}/{index}"), out);
            }
        }
        _ => {}
    }
}

fn any_leaf() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[a-z0-9 %.]{0,12}".prop_map(Value::from),
        proptest::collection::vec("[a-z]{1,4}", 0..3).prop_map(Value::from),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Unknown keys anywhere in any published file survive import and export,
    /// both untouched and after the entity is edited.
    #[test]
    fn unknown_keys_at_any_level_survive(
        file_pick in proptest::prelude::any::<proptest::sample::Index>(),
        injections in proptest::collection::vec(
            (proptest::prelude::any::<proptest::sample::Index>(), "x-[a-z]{1,8}", any_leaf()),
            1..6,
        ),
    ) {
        use domain::catalog::coopr::{entity_from_value, entity_to_value};
        use domain::catalog::ClusterTemplate;
        let files: Vec<(String, Value)> = json_files()
            .into_iter()
            .filter(|(path, _)| path.starts_with("clustertemplates/"))
            .collect();
        let (path, mut value) = files[file_pick.index(files.len())].clone();
        let mut pointers = Vec::new();
        object_pointers(&value, String::new(), &mut pointers);
        let mut injected = Vec::new();
        for (pick, key, leaf) in injections {
            let pointer = pointers[pick.index(pointers.len())].clone();
            let target = value.pointer_mut(&pointer).unwrap().as_object_mut().unwrap();
            target.insert(key.clone(), leaf.clone());
            injected.push((format!("{pointer}/{key}"), leaf));
        }
        let mut template: ClusterTemplate = entity_from_value(value.clone())
            .unwrap_or_else(|err| panic!("{path}: {err}"));
        proptest::prop_assert_eq!(
            serde_json::to_string(&entity_to_value(&template)).unwrap(),
            serde_json::to_string(&value).unwrap()
        );
        template.meta.description = Some("edited".into());
        let edited = entity_to_value(&template);
        proptest::prop_assert_eq!(&edited["description"], &Value::from("edited"));
        // Later injections may overwrite earlier ones at the same place.
        for (pointer, _) in &injected {
            proptest::prop_assert_eq!(edited.pointer(pointer), value.pointer(pointer), "{}", pointer);
        }
    }
}
