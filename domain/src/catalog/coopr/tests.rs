use serde_json::{json, Value};

use super::*;
use crate::catalog::{Count, DurationMs, Lease, ServiceAction};
use crate::names::ServiceName;

fn problem_texts(err: ImportError) -> Vec<String> {
    err.problems.iter().map(ToString::to_string).collect()
}

#[test]
fn reports_every_shape_problem_with_its_path() {
    let bundle = json!({
        "providers": [{"name": "p"}, {"name": "bad name", "providertype": "local"}],
        "services": [
            {"name": "s", "dependencies": {"provides": ["ok", 7], "install": {"requires": "base"}},
             "provisioner": {"actions": {"install": {"fields": {}}, "deploy": {"type": "shell"}}}},
            {"name": "s"},
            {"description": "nameless"}
        ],
        "clustertemplates": [{"name": "t",
            "compatibility": {"services": ["a/b"]},
            "constraints": {"services": {"x": {"quantities": {"min": "many"}}}},
            "administration": {"leaseduration": {"initial": true}},
            "links": [{"label": "no url"}]}],
        "surprise": {"kept": true}
    });
    let err = import_bundle_value(bundle).unwrap_err();
    assert_eq!(
        problem_texts(err),
        [
            "providers.p.providertype: required field is missing",
            "providers[1].name: name \"bad name\" contains ' '; only letters, digits, '_', '.' and '-' are allowed",
            "services.s.dependencies.provides[1]: expected a name, found a number",
            "services.s.dependencies.install.requires: expected a list of names, found a string",
            "services.s.provisioner.actions.install.type: required field is missing",
            "services.s.provisioner.actions.deploy: unknown action \"deploy\"; expected install, configure, initialize, start, stop or remove",
            "services.s: duplicate name \"s\"",
            "services[2].name: required field is missing",
            "clustertemplates.t.compatibility.services[0]: name \"a/b\" contains '/'; only letters, digits, '_', '.' and '-' are allowed",
            "clustertemplates.t.constraints.services.x.quantities.min: \"many\" is not an integer",
            "clustertemplates.t.administration.leaseduration.initial: expected milliseconds or a duration, found a boolean",
            "clustertemplates.t.links[0].url: required field is missing",
        ]
    );
}

#[test]
fn folder_import_names_the_file_and_skips_non_json() {
    let files = vec![
        ("cat/LICENSE".to_owned(), "Apache".to_owned()),
        (
            "cat/services/ok.json".to_owned(),
            r#"{"name": "ok"}"#.to_owned(),
        ),
        (
            "cat/services/broken.json".to_owned(),
            "{\"name\": ".to_owned(),
        ),
        ("cat/widgets/w.json".to_owned(), "{}".to_owned()),
        (
            "cat/imagetypes/i.json".to_owned(),
            r#"{"name": "i", "providermap": []}"#.to_owned(),
        ),
    ];
    let texts = problem_texts(import_files(&files).unwrap_err());
    assert_eq!(texts.len(), 3, "{texts:#?}");
    assert!(texts[0].starts_with("cat/services/broken.json: services: not valid JSON: EOF"));
    assert_eq!(
        texts[1..],
        [
            "cat/widgets/w.json: w.json: not in a folder named after an entity kind (providers, hardwaretypes, imagetypes, services, clustertemplates, partialtemplates)",
            "cat/imagetypes/i.json: imagetypes.i.providermap: expected an object, found a list",
        ]
    );
    let catalog = import_files(&files[..2]).unwrap();
    assert_eq!(catalog.services.len(), 1);
}

fn odd_template() -> Value {
    // Keys in an unusual order, counts as strings, unknown keys at every level.
    json!({
        "zz-top": 1,
        "name": "odd",
        "version": "3",
        "defaults": {"services": ["a", {"name": "b", "config": {"k": "v"}, "weight": 2}],
                     "provider": "p", "custom": [1]},
        "compatibility": {"services": ["a", "b"], "note": "x"},
        "constraints": {
            "services": {"a": {"quantities": {"min": "0", "max": "2147483647", "unit": "nodes"}, "why": "y"}},
            "size": {"max": 4, "min": "1", "hint": true},
            "layout": {"cantcoexist": [], "comment": "c"},
            "extra-section": {}
        },
        "administration": {"leaseduration": {"step": "1h", "initial": 0, "max": "7d", "tz": "UTC"}, "owner": "ops"},
        "links": [{"url": "http://%host.service.a%", "label": "A", "target": "_blank"}]
    })
}

#[test]
fn unmodified_entities_export_exactly_as_imported() {
    let template: ClusterTemplate = entity_from_value(odd_template()).unwrap();
    let out = entity_to_value(&template);
    assert_eq!(
        serde_json::to_string(&out).unwrap(),
        serde_json::to_string(&odd_template()).unwrap()
    );
    assert_eq!(
        template.meta.version,
        Some(Count {
            value: 3,
            quoted: true
        })
    );
    let a = template.service_constraint("a").unwrap();
    assert_eq!((a.min_nodes(), a.max_nodes()), (0, None));
    assert_eq!(template.size().min_nodes(), 1);
    assert_eq!(template.size().max_nodes(), Some(4));
    let lease = template.lease().unwrap();
    assert_eq!(lease.max, Some(Lease::Text("7d".into())));
    assert_eq!(
        lease.step.as_ref().unwrap().duration(),
        Ok(DurationMs(3_600_000))
    );
}

#[test]
fn edited_entities_keep_unknown_keys_at_every_level() {
    let mut template: ClusterTemplate = entity_from_value(odd_template()).unwrap();
    template
        .compatibility
        .services
        .push(ServiceName::parse("c").unwrap());
    let out = entity_to_value(&template);
    assert_eq!(out["compatibility"]["services"], json!(["a", "b", "c"]));
    for (pointer, expected) in [
        ("/zz-top", json!(1)),
        ("/version", json!("3")),
        ("/defaults/custom", json!([1])),
        (
            "/defaults/services/1",
            json!({"name": "b", "config": {"k": "v"}, "weight": 2}),
        ),
        ("/compatibility/note", json!("x")),
        (
            "/constraints/services/a/quantities",
            json!({"min": "0", "max": "2147483647", "unit": "nodes"}),
        ),
        ("/constraints/services/a/why", json!("y")),
        (
            "/constraints/size",
            json!({"min": "1", "max": 4, "hint": true}),
        ),
        ("/constraints/layout/comment", json!("c")),
        ("/constraints/extra-section", json!({})),
        ("/administration/owner", json!("ops")),
        (
            "/administration/leaseduration",
            json!({"initial": 0, "max": "7d", "step": "1h", "tz": "UTC"}),
        ),
        ("/links/0/target", json!("_blank")),
    ] {
        assert_eq!(out.pointer(pointer), Some(&expected), "{pointer}");
    }
    // And what was written reads back to the edited entity.
    let again: ClusterTemplate = entity_from_value(out).unwrap();
    assert_eq!(again, template);
}

#[test]
fn serde_deserialize_reads_coopr_json_and_remembers_it() {
    let text = r#"{"name": "web", "provisioner": {"actions": {"start": {"type": "shell",
        "fields": {"script": "web.sh"}}}}, "dependencies": {"provides": ["http"]}}"#;
    let service: Service = serde_json::from_str(text).unwrap();
    assert_eq!(
        service.action(ServiceAction::Start).unwrap().fields["script"],
        json!("web.sh")
    );
    assert!(service.answers_to("http") && service.answers_to("web"));
    assert_eq!(
        entity_to_value(&service),
        serde_json::from_str::<Value>(text).unwrap()
    );
    let err = serde_json::from_str::<Service>(r#"{"name": "x", "links": 3}"#).unwrap_err();
    assert!(
        err.to_string()
            .contains("services.x.links: expected a list of links"),
        "{err}"
    );
}

#[test]
fn bundle_keeps_unknown_top_level_keys_and_exports_all_kinds() {
    let catalog =
        import_bundle(r#"{"services": [{"name": "a"}], "meta": {"from": "coopr"}}"#).unwrap();
    let out = export_bundle(&catalog);
    let keys: Vec<&str> = out
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "providers",
            "hardwaretypes",
            "imagetypes",
            "services",
            "clustertemplates",
            "partialtemplates",
            "meta"
        ]
    );
    assert_eq!(out["services"], json!([{"name": "a"}]));
    let files = export_files(&catalog);
    assert_eq!(
        files,
        [(
            "services/a.json".to_owned(),
            "{\n  \"name\": \"a\"\n}\n".to_owned()
        )]
    );
}
