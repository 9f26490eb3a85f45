use serde_json::json;

use super::*;
use crate::catalog::coopr::import_bundle_value;
use crate::catalog::DurationMs;

fn name(raw: &str) -> TemplateName {
    TemplateName::parse(raw).unwrap()
}

fn catalog(templates: serde_json::Value, partials: serde_json::Value) -> Catalog {
    import_bundle_value(json!({"clustertemplates": templates, "partialtemplates": partials}))
        .unwrap()
}

fn names<T: AsRef<str>>(list: &[T]) -> Vec<&str> {
    list.iter().map(AsRef::as_ref).collect()
}

#[test]
fn merges_parent_then_includes_then_self() {
    let catalog = catalog(
        json!([
            {"name": "base",
             "compatibility": {"services": ["a", "b"], "hardwaretypes": ["small"]},
             "defaults": {"services": ["a"], "provider": "p1", "hardwaretype": "small",
                          "config": {"x": 1, "y": 1}},
             "constraints": {"size": {"min": 2},
                             "layout": {"mustcoexist": [["a", "b"]]},
                             "services": {"a": {"quantities": {"min": 1}},
                                          "b": {"quantities": {"max": 4}}}},
             "administration": {"leaseduration": {"initial": "1d"}},
             "links": [{"label": "A", "url": "http://a"}]},
            {"name": "child", "extends": {"name": "base"}, "includes": [{"name": "ops"}],
             "compatibility": {"services": ["b", "c"]},
             "defaults": {"services": ["c"], "provider": "p2", "config": {"y": 3}},
             "constraints": {"services": {"a": {"quantities": {"max": 2}}}},
             "links": [{"label": "A", "url": "http://a"}, {"label": "C", "url": "http://c"}]}
        ]),
        json!([
            {"name": "ops", "compatibility": {"services": ["metrics"]},
             "defaults": {"services": ["metrics"], "imagetype": "debian", "config": {"z": 2, "y": 2}}}
        ]),
    );
    let resolved = catalog.resolved_template(&name("child")).unwrap();
    assert_eq!(
        names(&resolved.compatibility.services),
        ["a", "b", "metrics", "c"]
    );
    assert_eq!(names(&resolved.compatibility.hardwaretypes), ["small"]);
    let defaults: Vec<&str> = resolved
        .defaults
        .service_names()
        .map(|s| s.as_str())
        .collect();
    assert_eq!(defaults, ["a", "metrics", "c"]);
    assert_eq!(resolved.defaults.provider.as_ref().unwrap().as_str(), "p2");
    assert_eq!(
        resolved.defaults.hardwaretype.as_ref().unwrap().as_str(),
        "small"
    );
    assert_eq!(
        resolved.defaults.imagetype.as_ref().unwrap().as_str(),
        "debian"
    );
    assert_eq!(
        serde_json::to_value(&resolved.defaults.config).unwrap(),
        json!({"x": 1, "y": 3, "z": 2})
    );
    let constraints = resolved.constraints.as_ref().unwrap();
    // The child has constraints but no size: size comes from the last member with
    // constraints, so it is gone.
    assert_eq!(constraints.size, None);
    assert_eq!(constraints.layout.mustcoexist.len(), 1);
    // `a` replaced as a whole (its min is gone), `b` kept from the parent.
    assert_eq!(resolved.service_constraint("a").unwrap().min_nodes(), 0);
    assert_eq!(
        resolved.service_constraint("a").unwrap().max_nodes(),
        Some(2)
    );
    assert_eq!(
        resolved.service_constraint("b").unwrap().max_nodes(),
        Some(4)
    );
    let lease = resolved.lease().unwrap();
    assert_eq!(
        lease.initial.as_ref().unwrap().duration(),
        Ok(DurationMs(86_400_000))
    );
    assert_eq!(resolved.links.len(), 2);
    assert!(resolved.extends.is_none() && resolved.includes.is_empty());
}

#[test]
fn template_without_parents_resolves_to_itself() {
    let catalog = catalog(
        json!([{"name": "t", "compatibility": {"services": ["a", "a"]},
                "defaults": {"services": ["a"], "provider": "p"}}]),
        json!([]),
    );
    let resolved = catalog.resolved_template(&name("t")).unwrap();
    assert_eq!(&resolved, catalog.clustertemplate("t").unwrap());
    // No union here: validation must still see the duplicate as written.
    assert_eq!(resolved.compatibility.services.len(), 2);
}

#[test]
fn immutable_partial_config_keys_cannot_be_set_again() {
    let catalog = catalog(
        json!([{"name": "t", "includes": [{"name": "locked"}, {"name": "loose"}],
                "defaults": {"services": ["a"], "provider": "p", "config": {"metrics": "mine"}}}]),
        json!([
            {"name": "locked", "immutable": true, "defaults": {"config": {"metrics": {"sink": "udp"}}}},
            {"name": "loose", "defaults": {"config": {"metrics": "theirs", "other": 1}}}
        ]),
    );
    let (resolved, errors) = resolve_all(&catalog, "t");
    let paths: Vec<String> = errors.iter().map(ResolveError::path).collect();
    assert_eq!(
        paths,
        [
            "partialtemplates.loose.defaults.config.metrics",
            "clustertemplates.t.defaults.config.metrics"
        ]
    );
    assert_eq!(
        errors[0].message(),
        "config key \"metrics\" comes from immutable partial template \"locked\" and may not be set again"
    );
    let config = resolved.unwrap().defaults.config;
    assert_eq!(config["metrics"], json!({"sink": "udp"}));
    assert_eq!(config["other"], json!(1));
}

#[test]
fn reports_cycles_and_missing_targets_with_paths() {
    let catalog = catalog(
        json!([
            {"name": "a", "extends": {"name": "b"}, "defaults": {"services": ["s"], "provider": "p"}},
            {"name": "b", "extends": {"name": "a"}},
            {"name": "c", "extends": {"name": "nope"}, "includes": [{"name": "gone"}],
             "defaults": {"services": ["s"], "provider": "p"}}
        ]),
        json!([]),
    );
    let err = catalog.resolved_template(&name("a")).unwrap_err();
    assert_eq!(err.path(), "clustertemplates.a.extends");
    assert_eq!(err.message(), "extends cycle a -> b -> a");

    let (_, errors) = resolve_all(&catalog, "c");
    let texts: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        texts,
        [
            "clustertemplates.c.extends: extends unknown cluster template \"nope\"",
            "clustertemplates.c.includes[0]: includes unknown partial template \"gone\""
        ]
    );
    assert_eq!(
        catalog.resolved_template(&name("zzz")).unwrap_err(),
        ResolveError::UnknownTemplate("zzz".into())
    );
}

#[test]
fn resolved_template_needs_default_services_and_provider() {
    let catalog = catalog(
        json!([{"name": "parent", "defaults": {"provider": "p"}},
               {"name": "child", "extends": {"name": "parent"}}]),
        json!([]),
    );
    let (_, errors) = resolve_all(&catalog, "child");
    assert_eq!(
        errors,
        [ResolveError::NoDefaultServices {
            path: "clustertemplates.child.defaults.services".into()
        }]
    );
}

/// `t0` extends `t1` … extends `t{count-1}`, which has the defaults.
fn chain(count: usize) -> Catalog {
    let templates: Vec<serde_json::Value> = (0..count)
        .map(|i| {
            if i + 1 < count {
                json!({"name": format!("t{i}"), "extends": {"name": format!("t{}", i + 1)}})
            } else {
                json!({"name": format!("t{i}"), "defaults": {"services": ["s"], "provider": "p"}})
            }
        })
        .collect();
    catalog(json!(templates), json!([]))
}

#[test]
fn extends_chains_are_bounded() {
    // The longest allowed chain resolves, inheriting from its far end.
    let catalog = chain(MAX_EXTENDS_DEPTH + 1);
    let resolved = catalog.resolved_template(&name("t0")).unwrap();
    assert_eq!(resolved.defaults.provider.unwrap().as_str(), "p");

    // One more is refused on the template being resolved, merged as far as allowed.
    let catalog = chain(MAX_EXTENDS_DEPTH + 2);
    let (resolved, errors) = resolve_all(&catalog, "t0");
    assert!(resolved.is_some());
    assert_eq!(
        errors[0].to_string(),
        "clustertemplates.t0.extends: the extends chain is longer than 32 templates"
    );
    assert!(catalog.resolved_template(&name("t1")).is_ok());
}

/// Regression: resolution recursed once per `extends`, so a long chain in an
/// uploaded catalog overflowed the stack and aborted the server; and validation,
/// resolving every template along the whole chain, took time cubic in its length.
#[test]
fn a_chain_of_20000_templates_neither_overflows_nor_crawls() {
    let catalog = chain(20_000);
    let started = std::time::Instant::now();
    let err = catalog.resolved_template(&name("t0")).unwrap_err();
    assert!(matches!(err, ResolveError::TooDeep { .. }), "{err}");
    let report = crate::catalog::validate::validate(&catalog);
    assert!(report.has_errors());
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn a_child_inherits_its_parents_groups_unless_it_names_its_own() {
    let catalog = catalog(
        json!([
            {"name": "base", "groups": ["data-team"], "defaults": {"services": ["s"], "provider": "p", "hardwaretype": "h", "imagetype": "i", "config": {}}},
            {"name": "same", "extends": {"name": "base"}, "defaults": {"services": ["s"], "provider": "p", "hardwaretype": "h", "imagetype": "i", "config": {}}},
            {"name": "wider", "extends": {"name": "base"}, "groups": ["data-team", "ops"],
             "defaults": {"services": ["s"], "provider": "p", "hardwaretype": "h", "imagetype": "i", "config": {}}},
            {"name": "open", "defaults": {"services": ["s"], "provider": "p", "hardwaretype": "h", "imagetype": "i", "config": {}}}
        ]),
        json!([]),
    );
    let groups = |template: &str| {
        let resolved = catalog.resolved_template(&name(template)).unwrap();
        resolved
            .groups
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(groups("same"), ["data-team"]);
    assert_eq!(groups("wider"), ["data-team", "ops"]);
    assert!(groups("open").is_empty());
    let ops = crate::names::GroupName::parse("ops").unwrap();
    let resolved = catalog.resolved_template(&name("same")).unwrap();
    assert!(!resolved.open_to([&ops]), "a template limited to data-team");
    assert!(catalog
        .resolved_template(&name("wider"))
        .unwrap()
        .open_to([&ops]));
    assert!(catalog
        .resolved_template(&name("open"))
        .unwrap()
        .open_to([]));
    // A bad group name is refused where it is written.
    let error = import_bundle_value(json!({"clustertemplates": [
        {"name": "bad", "groups": ["Not A Name"], "defaults": {"services": ["s"], "provider": "p", "hardwaretype": "h", "imagetype": "i", "config": {}}}
    ]}))
    .unwrap_err();
    assert_eq!(
        error.problems[0].path, "clustertemplates.bad.groups[0]",
        "{error:?}"
    );
}
