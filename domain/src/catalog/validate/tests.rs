use serde_json::{json, Value};

use super::*;
use crate::catalog::coopr::import_bundle_value;

/// A small, valid catalog to break one piece at a time.
fn bundle() -> Value {
    json!({
        "providers": [{"name": "local", "providertype": "local"}],
        "hardwaretypes": [
            {"name": "small", "providermap": {"local": {"flavor": "1cpu"}}},
            {"name": "large", "providermap": {"local": {"flavor": "4cpu"}}},
            {"name": "bare", "providermap": {}}
        ],
        "imagetypes": [
            {"name": "deb", "providermap": {"local": {"image": "debian-12"}}},
            {"name": "alma", "providermap": {"local": {"image": "alma-9"}}}
        ],
        "services": [
            {"name": "base"},
            {"name": "db", "dependencies": {"provides": ["database"],
                "install": {"requires": ["base"]}}},
            {"name": "web", "dependencies": {"conflicts": ["legacy", "nonexistent"],
                "install": {"requires": ["base"], "uses": ["nothing-here"]},
                "runtime": {"requires": ["database"]}}},
            {"name": "legacy"}
        ],
        "clustertemplates": [{
            "name": "app",
            "compatibility": {"services": ["base", "db", "web", "legacy"],
                              "hardwaretypes": ["small", "large"], "imagetypes": ["deb", "alma"]},
            "defaults": {"services": ["base", "db", "web"], "provider": "local",
                         "hardwaretype": "small", "imagetype": "deb",
                         "config": {"web": {"db": "%host.service.db%"}}},
            "constraints": {"size": {"min": 1, "max": 5},
                            "layout": {"mustcoexist": [["base", "web"]], "cantcoexist": [["db", "web"]]},
                            "services": {"db": {"quantities": {"min": "1", "max": 2147483647}}}},
            "administration": {"leaseduration": {"initial": "1d", "max": "7d", "step": 3600000}},
            "links": [{"label": "App", "url": "http://%ip.access_v4.service.web[0]%/"}]
        }]
    })
}

fn problems(bundle: Value) -> Vec<String> {
    let catalog = import_bundle_value(bundle).unwrap_or_else(|err| panic!("{err}"));
    validate(&catalog)
        .problems
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// Applies `edit` to the base bundle and returns the problems found.
fn problems_after(edit: impl FnOnce(&mut Value)) -> Vec<String> {
    let mut value = bundle();
    edit(&mut value);
    problems(value)
}

fn template(value: &mut Value) -> &mut Value {
    &mut value["clustertemplates"][0]
}

#[test]
fn the_base_catalog_is_clean() {
    assert_eq!(problems(bundle()), Vec::<String>::new());
}

#[test]
fn unknown_requires_is_an_error_unknown_uses_and_conflicts_are_legal() {
    let found = problems_after(|b| {
        b["services"][1]["dependencies"]["runtime"] = json!({"requires": ["kv"], "uses": ["kv"]});
    });
    assert_eq!(
        found,
        [
            "error: services.db.dependencies.runtime.requires[0]: unknown service or alias \"kv\"",
            "error: clustertemplates.app.defaults.services[1]: service \"db\" requires \"kv\", which no default service provides"
        ]
    );
}

#[test]
fn dependency_cycles_count_only_among_services_a_template_allows() {
    let found = problems_after(|b| {
        // base -> database (an alias of db) -> base: a cycle through an alias.
        b["services"][0]["dependencies"] = json!({"install": {"uses": ["database"]}});
        let mut narrow = b["clustertemplates"][0].clone();
        narrow["name"] = json!("narrow");
        narrow["compatibility"]["services"] = json!(["base", "legacy"]);
        narrow["defaults"]["services"] = json!(["base"]);
        narrow["constraints"] = json!({});
        narrow["defaults"]["config"] = json!({});
        narrow["links"] = json!([]);
        b["clustertemplates"].as_array_mut().unwrap().push(narrow);
    });
    assert_eq!(
        found,
        ["error: clustertemplates.app.compatibility.services: install dependency cycle among services \"base\", \"db\""]
    );
}

#[test]
fn defaults_must_exist_be_compatible_and_usable_with_the_provider() {
    let found = problems_after(|b| {
        let t = template(b);
        t["compatibility"]["hardwaretypes"] = json!(["small", "large", "bare", "huge"]);
        t["defaults"]["services"] = json!(["base", "db", "web", "ghost"]);
        t["defaults"]["hardwaretype"] = json!("bare");
        t["defaults"]["imagetype"] = json!("alma");
        t["compatibility"]["imagetypes"] = json!(["deb"]);
        t["constraints"]["layout"]["mustcoexist"] = json!([]);
    });
    assert_eq!(
        found,
        [
            "error: clustertemplates.app.compatibility.hardwaretypes[3]: unknown hardware type \"huge\"",
            "error: clustertemplates.app.defaults.services[3]: unknown service \"ghost\"",
            "error: clustertemplates.app.defaults.hardwaretype: hardware type \"bare\" has no flavor for provider \"local\"",
            "error: clustertemplates.app.defaults.imagetype: default image type \"alma\" is not in compatibility.imagetypes",
        ]
    );
    let found = problems_after(|b| template(b)["defaults"]["provider"] = json!("cloud"));
    assert_eq!(
        found,
        ["error: clustertemplates.app.defaults.provider: unknown provider \"cloud\""]
    );
}

#[test]
fn default_services_need_their_requires_and_no_conflicts() {
    let found = problems_after(|b| {
        let t = template(b);
        t["defaults"]["services"] = json!(["web", "legacy"]);
        t["constraints"]["layout"] = json!({});
    });
    assert_eq!(
        found,
        [
            "error: clustertemplates.app.defaults.services[0]: service \"web\" requires \"base\", which no default service provides",
            "error: clustertemplates.app.defaults.services[0]: service \"web\" requires \"database\", which no default service provides",
            "error: clustertemplates.app.defaults.services[0]: service \"web\" conflicts with default service \"legacy\"",
        ]
    );
}

#[test]
fn constraints_must_name_known_things_and_sane_numbers() {
    let found = problems_after(|b| {
        let t = template(b);
        t["constraints"] = json!({
            "size": {"min": 0, "max": -2, "step": 0},
            "layout": {"mustcoexist": [["base", "hdfs"]], "cantcoexist": [["db", "web", "legacy"]]},
            "services": {
                "db": {"quantities": {"min": 3, "max": "2"}, "hardwaretypes": ["tiny"], "imagetypes": ["deb"]},
                "zk": {"quantities": {"min": 1}}
            }
        });
        t["administration"]["leaseduration"] =
            json!({"initial": 0, "max": "7days", "step": "1h", "grace": "soon"});
    });
    assert_eq!(
        found,
        [
            "error: clustertemplates.app.constraints.size.min: size min 0 is below 1",
            "error: clustertemplates.app.constraints.size.max: max -2 is negative",
            "error: clustertemplates.app.constraints.size.step: size step 0 is below 1",
            "error: clustertemplates.app.constraints.layout.mustcoexist[0]: unknown service \"hdfs\"",
            "warning: clustertemplates.app.constraints.layout.cantcoexist[0]: a cantcoexist group of 3 services only bars all of them together; any two may still share a node",
            "error: clustertemplates.app.constraints.services.db.hardwaretypes[0]: unknown hardware type \"tiny\"",
            "error: clustertemplates.app.constraints.services.db.quantities: min 3 is greater than max 2",
            "error: clustertemplates.app.constraints.services.zk: unknown service \"zk\"",
            "error: clustertemplates.app.administration.leaseduration.max: lease \"7days\" is not milliseconds or <number><s|m|h|d>",
            "error: clustertemplates.app.administration.leaseduration.grace: lease \"soon\" is not milliseconds or <number><s|m|h|d>",
        ]
    );
    let found = problems_after(|b| {
        template(b)["administration"]["leaseduration"] = json!({"initial": 0, "max": "7d"});
    });
    assert_eq!(
        found,
        ["error: clustertemplates.app.administration.leaseduration: initial lease (unlimited) exceeds max lease (604800000ms)"]
    );
}

#[test]
fn contradictions_fatal_at_every_size() {
    let found = problems_after(|b| {
        let t = template(b);
        t["constraints"] = json!({
            "size": {"max": 2},
            "layout": {"mustcoexist": [["base", "web"], ["web", "db"]], "cantcoexist": [["base", "db"]]},
            "services": {
                "base": {"quantities": {"min": 2}, "hardwaretypes": ["small"], "imagetypes": ["deb"]},
                "db": {"quantities": {"max": 1}, "hardwaretypes": ["large"]},
                "legacy": {"quantities": {"min": 3}}
            }
        });
    });
    assert_eq!(
        found,
        [
            "error: clustertemplates.app.constraints.layout.cantcoexist[0]: all of these default services must coexist (constraints.layout.mustcoexist[0]), so none of them can be placed",
            "error: clustertemplates.app.constraints.layout.mustcoexist[0]: \"base\" (min 2) and \"db\" (max 1) must share nodes, so their quantities cannot both be met",
            "error: clustertemplates.app.constraints.layout.mustcoexist[0]: no hardware type is allowed for all of \"base\", \"db\", which must share nodes",
            "error: clustertemplates.app.constraints.services.legacy.quantities.min: min 3 is above constraints.size.max 2",
        ]
    );
}

#[test]
fn macros_must_parse_and_should_name_compatible_services() {
    let found = problems_after(|b| {
        let t = template(b);
        t["defaults"]["config"] = json!({"web": {"peers": ["%host.service.db%", "%join(map(host.service.db,'$:1') ,' ')%"],
                                                  "other": "%num.service.cache%"}});
        t["links"] = json!([{"label": "x", "url": "http://%ip.access_v4.service.legacy%"}]);
        t["compatibility"]["services"] = json!(["base", "db", "web"]);
        b["services"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "cache"}));
    });
    assert_eq!(found.len(), 3, "{found:#?}");
    let found_in_service = problems_after(|b| {
        b["services"][0]["provisioner"] = json!({"actions": {"install": {"type": "shell",
            "fields": {"script": "echo %host.service.db% 100%%", "args": "date +%Y-%m-%d"}}}});
    });
    assert_eq!(found_in_service.len(), 1, "{found_in_service:#?}");
    assert!(found_in_service[0]
        .starts_with("error: services.base.provisioner.actions.install.fields.args: "));
    assert!(found[0]
        .starts_with("error: clustertemplates.app.defaults.config.web.peers[1]: cannot parse"));
    assert_eq!(
        found[1..],
        [
            "warning: clustertemplates.app.defaults.config.web.other: macro names service \"cache\", which is not compatible with this template",
            "warning: clustertemplates.app.links[0].url: macro names service \"legacy\", which is not compatible with this template",
        ]
    );
}

#[test]
fn extends_includes_problems_are_reported_and_the_child_checked_resolved() {
    let found = problems_after(|b| {
        b["clustertemplates"].as_array_mut().unwrap().extend([
            json!({"name": "child", "extends": {"name": "app"}, "includes": [{"name": "ops"}, {"name": "nope"}],
                   "defaults": {"imagetype": "alma", "config": {"metrics": 2}}}),
            json!({"name": "loop1", "extends": {"name": "loop2"}}),
            json!({"name": "loop2", "extends": {"name": "loop1"}, "defaults": {"services": ["base"], "provider": "local"}}),
        ]);
        b["partialtemplates"] = json!([{"name": "ops", "immutable": true,
            "compatibility": {"services": ["agent"]},
            "defaults": {"config": {"metrics": 1}}}]);
    });
    assert_eq!(
        found,
        [
            "error: partialtemplates.ops.compatibility.services[0]: unknown service \"agent\"",
            "error: clustertemplates.child.includes[1]: includes unknown partial template \"nope\"",
            "error: clustertemplates.child.defaults.config.metrics: config key \"metrics\" comes from immutable partial template \"ops\" and may not be set again",
            "error: clustertemplates.child.compatibility.services[4]: unknown service \"agent\"",
            "error: clustertemplates.loop1.extends: extends cycle loop1 -> loop2 -> loop1",
            "error: clustertemplates.loop2.extends: extends cycle loop2 -> loop1 -> loop2",
        ]
    );
}

#[test]
fn warnings_for_undrivable_providers_stray_providermap_keys_and_duplicates() {
    let found = problems_after(|b| {
        b["providers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "ec2", "providertype": "aws"}));
        b["hardwaretypes"][0]["providermap"]["gone"] = json!({"flavor": "x"});
        b["services"][1]["dependencies"]["provides"] = json!(["database", "database"]);
        template(b)["compatibility"]["services"] = json!(["base", "db", "web", "legacy", "db"]);
    });
    assert_eq!(
        found,
        [
            "warning: providers.ec2.providertype: provider type \"aws\" cannot be driven by Corral (supported: local, ssh-pool, docker, ec2, exec)",
            "warning: hardwaretypes.small.providermap.gone: unknown provider \"gone\"",
            "warning: services.db.dependencies.provides[1]: duplicate entry \"database\"",
            "warning: clustertemplates.app.compatibility.services[4]: duplicate service \"db\"",
        ]
    );
    let catalog = import_bundle_value(bundle()).unwrap();
    assert!(!validate(&catalog).has_errors());
}

#[test]
fn partial_templates_warn_about_sections_a_merge_ignores() {
    let found = problems_after(|b| {
        b["partialtemplates"] = json!([{"name": "p", "extends": {"name": "app"},
            "constraints": {"size": {"min": 2}}, "defaults": {"services": ["base"]}}]);
    });
    assert_eq!(
        found,
        [
            "warning: partialtemplates.p.extends: ignored: a partial template contributes only compatibility and defaults, not extends",
            "warning: partialtemplates.p.constraints: ignored: a partial template contributes only compatibility and defaults, not constraints",
        ]
    );
}

#[test]
fn links_must_be_web_urls() {
    let found = problems_after(|b| {
        template(b)["links"] = json!([
            {"label": "x", "url": "javascript:alert(document.cookie)"},
            {"label": "y", "url": " JaVaScRiPt:alert(1)"},
            {"label": "z", "url": "data:text/html,<script>alert(1)</script>"},
            {"label": "ok", "url": "HTTPS://example.org/"}
        ]);
        b["services"][0]["links"] = json!([{"label": "s", "url": "/relative/path"}]);
    });
    let refused: Vec<&String> = found
        .iter()
        .filter(|problem| problem.contains("must start with http:// or https://"))
        .collect();
    assert_eq!(refused.len(), 4, "{found:#?}");
    assert!(
        refused
            .iter()
            .any(|problem| problem.starts_with("error: clustertemplates.app.links[0].url: ")),
        "{found:#?}"
    );
    assert!(refused
        .iter()
        .any(|problem| problem.starts_with("error: services.base.links[0].url")));
}

#[test]
fn stateful_is_true_or_false() {
    let found = problems_after(|b| {
        b["services"][1]["stateful"] = json!(true);
        b["services"][2]["stateful"] = json!("yes");
    });
    assert_eq!(
        found,
        ["error: services.web.stateful: must be true or false, not \"yes\""]
    );
}

#[test]
fn prices_must_be_non_negative_numbers_on_the_type_and_its_mappings() {
    let cases: [(Value, Value, Vec<&str>); 5] = [
        (json!(0.25), json!(0.1), vec![]),
        (json!(0), json!(null), vec![]),
        (
            json!(-1),
            json!(0.1),
            vec!["error: hardwaretypes.small.price_per_hour: must be a price per hour: a non-negative number, not -1"],
        ),
        (
            json!(0.25),
            json!("cheap"),
            vec!["error: hardwaretypes.small.providermap.local.price_per_hour: must be a price per hour (a non-negative number), not \"cheap\""],
        ),
        (
            json!("1"),
            json!(-0.5),
            vec![
                "error: hardwaretypes.small.price_per_hour: must be a price per hour (a non-negative number), not \"1\"",
                "error: hardwaretypes.small.providermap.local.price_per_hour: must be a price per hour: a non-negative number, not -0.5",
            ],
        ),
    ];
    for (own, mapped, want) in cases {
        let found = problems_after(|bundle| {
            let small = &mut bundle["hardwaretypes"][0];
            small["price_per_hour"] = own.clone();
            if !mapped.is_null() {
                small["providermap"]["local"]["price_per_hour"] = mapped.clone();
            }
        });
        assert_eq!(found, want, "{own} {mapped}");
    }
}
