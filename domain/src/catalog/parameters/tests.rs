//! Table tests of parameter declarations ([`decode`]) and values ([`validate`],
//! [`revalue`]): each row is what was declared or given and the exact outcome.

#![allow(clippy::unwrap_used)] // Tests fail loudly by design.

use serde_json::{json, Map, Value};

use super::*;

/// The declarations the value tables run against.
fn declared() -> Parameters {
    decode(json!({
        "shards": {"type": "integer", "minimum": 1, "maximum": 5, "default": 1, "label": "Shards"},
        "ratio": {"type": "number", "minimum": 0, "maximum": 1},
        "tls": {"type": "boolean", "default": false, "changeable": true},
        "tier": {"type": "choice", "choices": ["small", "large"], "default": "small"},
        "version": {"type": "string", "pattern": "[0-9]+\\.[0-9]+", "required": true},
    }))
    .unwrap()
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

#[test]
fn declarations_are_refused_naming_the_parameter_and_the_problem() {
    let table: &[(Value, &str)] = &[
        (
            json!({"type": "float"}),
            "unknown type \"float\"; expected string, integer, number, boolean, choice",
        ),
        (json!({}), "type is missing"),
        (
            json!({"type": "integer", "minimum": 1, "maximum": 5, "default": 9}),
            "the default is refused: 9 is above the maximum 5",
        ),
        (
            json!({"type": "integer", "minimum": 3, "default": 0}),
            "the default is refused: 0 is below the minimum 3",
        ),
        (
            json!({"type": "integer", "minimum": 5, "maximum": 1}),
            "minimum 5 is above maximum 1",
        ),
        (
            json!({"type": "integer", "maximum": 2.5}),
            "maximum of an integer parameter must be a whole number",
        ),
        (
            json!({"type": "string", "pattern": "[a-"}),
            "the pattern \"[a-\" does not compile",
        ),
        (
            json!({"type": "string", "pattern": "[a-z]+", "default": "A1"}),
            "the default is refused: \"A1\" does not match the pattern [a-z]+",
        ),
        (
            json!({"type": "boolean", "minimum": 0}),
            "minimum and maximum apply to integer and number parameters, not boolean",
        ),
        (
            json!({"type": "integer", "pattern": "1"}),
            "pattern applies to string parameters, not integer",
        ),
        (
            json!({"type": "choice"}),
            "a choice parameter needs a non-empty list of choices",
        ),
        (
            json!({"type": "choice", "choices": ["a"], "default": "b"}),
            "the default is refused: \"b\" is not one of the choices (a)",
        ),
        (
            json!({"type": "string", "choices": ["a"]}),
            "choices apply to choice parameters, not string",
        ),
        (json!({"type": "string", "min": 1}), "unknown key \"min\""),
        (
            json!({"type": "boolean", "required": "yes"}),
            "required must be true or false, not \"yes\"",
        ),
        (
            json!({"type": "integer", "default": "many"}),
            "the default is refused: \"many\" is not a whole number",
        ),
        (json!("integer"), "a parameter is an object"),
    ];
    for (declaration, expected) in table {
        let errors = decode(json!({"p": declaration})).unwrap_err();
        assert_eq!(errors.len(), 1, "{declaration}: {errors:?}");
        assert_eq!(errors[0].parameter, "p", "{declaration}");
        assert!(
            errors[0].problem.starts_with(expected),
            "{declaration}: got {:?}, expected {expected:?}",
            errors[0].problem
        );
    }
}

#[test]
fn names_must_suit_macros_and_form_fields() {
    for bad in ["", "a.b", "a b", "ä", &"x".repeat(65)] {
        let errors = decode(json!({bad: {"type": "string"}})).unwrap_err();
        assert_eq!(errors[0].parameter, bad);
    }
    assert!(decode(json!({"Shard_count-2": {"type": "string"}})).is_ok());
}

#[test]
fn every_bad_declaration_is_reported_at_once() {
    let errors = decode(json!({
        "a": {"type": "nope"},
        "b": {"type": "integer"},
        "c": {"type": "integer", "default": 2, "maximum": 1},
    }))
    .unwrap_err();
    let named: Vec<&str> = errors.iter().map(|e| e.parameter.as_str()).collect();
    assert_eq!(named, ["a", "c"]);
}

#[test]
fn a_declaration_written_out_reads_back_the_same() {
    let parameters = declared();
    let written = serde_json::to_value(&parameters).unwrap();
    assert_eq!(decode(written.clone()).unwrap(), parameters);
    assert_eq!(
        written["shards"],
        json!({"type": "integer", "label": "Shards", "default": 1, "minimum": 1, "maximum": 5})
    );
}

#[test]
fn values_are_typed_checked_and_defaulted() {
    // (given, the values kept)
    let table: &[(Value, Value)] = &[
        (
            json!({"version": "1.2"}),
            json!({"shards": 1, "tls": false, "tier": "small", "version": "1.2"}),
        ),
        // Text (the CLI, a form) reads as the parameter's type.
        (
            json!({"version": "3.4", "shards": " 5 ", "ratio": "0.5", "tls": "true", "tier": "large"}),
            json!({"shards": 5, "ratio": 0.5, "tls": true, "tier": "large", "version": "3.4"}),
        ),
        // The same values as JSON give the same result.
        (
            json!({"version": "3.4", "shards": 5, "ratio": 0.5, "tls": true, "tier": "large"}),
            json!({"shards": 5, "ratio": 0.5, "tls": true, "tier": "large", "version": "3.4"}),
        ),
        // An empty form field is no value: the default stands.
        (
            json!({"version": "1.0", "shards": "", "ratio": "", "tls": "off"}),
            json!({"shards": 1, "tls": false, "tier": "small", "version": "1.0"}),
        ),
        // A whole number for a number parameter stays whole.
        (
            json!({"version": "1.0", "ratio": "1"}),
            json!({"shards": 1, "ratio": 1, "tls": false, "tier": "small", "version": "1.0"}),
        ),
    ];
    for (given, expected) in table {
        let values = validate(&declared(), &object(given.clone())).unwrap();
        assert_eq!(Value::Object(values), *expected, "given {given}");
    }
}

#[test]
fn bad_values_are_refused_each_naming_its_field() {
    // (given, every (parameter, problem) refused, in order)
    let table: &[(Value, &[(&str, &str)])] = &[
        (
            json!({"version": "1.0", "shards": 9}),
            &[("shards", "9 is above the maximum 5")],
        ),
        (
            json!({"version": "1.0", "shards": "0"}),
            &[("shards", "0 is below the minimum 1")],
        ),
        (
            json!({"version": "1.0", "shards": 2.5}),
            &[("shards", "2.5 is not a whole number")],
        ),
        (
            json!({"version": "1.0", "shards": "two"}),
            &[("shards", "\"two\" is not a whole number")],
        ),
        (
            json!({"version": "1.0", "ratio": "1.5"}),
            &[("ratio", "1.5 is above the maximum 1")],
        ),
        (
            json!({"version": "1.0", "ratio": "lots"}),
            &[("ratio", "\"lots\" is not a number")],
        ),
        (
            json!({"version": "1.0", "tls": "maybe"}),
            &[("tls", "\"maybe\" is not true or false")],
        ),
        (
            json!({"version": "1.0", "tier": "huge"}),
            &[("tier", "\"huge\" is not one of the choices (small, large)")],
        ),
        (
            json!({"version": "v1"}),
            &[(
                "version",
                "\"v1\" does not match the pattern [0-9]+\\.[0-9]+",
            )],
        ),
        (json!({}), &[("version", "a value is required")]),
        (
            json!({"version": ""}),
            &[("version", "a value is required")],
        ),
        (
            json!({"version": "1.0", "colour": "red"}),
            &[("colour", "the template has no such parameter")],
        ),
        // Every bad field at once.
        (
            json!({"shards": 7, "tier": "huge", "extra": 1}),
            &[
                ("extra", "the template has no such parameter"),
                ("shards", "7 is above the maximum 5"),
                ("tier", "\"huge\" is not one of the choices (small, large)"),
                ("version", "a value is required"),
            ],
        ),
    ];
    for (given, expected) in table {
        let errors = validate(&declared(), &object(given.clone())).unwrap_err();
        let got: Vec<(&str, &str)> = errors
            .iter()
            .map(|error| (error.parameter.as_str(), error.problem.as_str()))
            .collect();
        assert_eq!(got, *expected, "given {given}");
    }
}

#[test]
fn a_template_without_parameters_takes_none() {
    assert_eq!(
        validate(&Parameters::new(), &Map::new()).unwrap(),
        Map::new()
    );
    let errors = validate(&Parameters::new(), &object(json!({"x": 1}))).unwrap_err();
    assert_eq!(
        errors[0].to_string(),
        "parameter x: the template has no such parameter"
    );
}

#[test]
fn reconfigure_changes_only_changeable_parameters() {
    let parameters = declared();
    let current = validate(&parameters, &object(json!({"version": "1.0"}))).unwrap();
    // (changes, Ok(new values) or Err(refused parameters))
    let table: &[(Value, Result<Value, &[&str]>)] = &[
        (
            json!({"tls": true}),
            Ok(json!({"shards": 1, "tls": true, "tier": "small", "version": "1.0"})),
        ),
        // The same value again is no change.
        (
            json!({"shards": "1", "tls": "yes"}),
            Ok(json!({"shards": 1, "tls": true, "tier": "small", "version": "1.0"})),
        ),
        (
            json!({"shards": 2, "tier": "large"}),
            Err(&["shards", "tier"]),
        ),
        (json!({"tls": "maybe"}), Err(&["tls"])),
        (json!({"nope": 1}), Err(&["nope"])),
    ];
    for (changes, expected) in table {
        let outcome = revalue(&parameters, &current, &object(changes.clone()));
        match (outcome, expected) {
            (Ok(values), Ok(expected)) => {
                assert_eq!(Value::Object(values), *expected, "changes {changes}")
            }
            (Err(errors), Err(names)) => {
                let got: Vec<&str> = errors.iter().map(|e| e.parameter.as_str()).collect();
                assert_eq!(got, *names, "changes {changes}");
            }
            (outcome, _) => panic!("changes {changes}: unexpected {outcome:?}"),
        }
    }
}

#[test]
fn an_enormous_pattern_is_refused() {
    let errors = decode(json!({"p": {"type": "string", "pattern": "a".repeat(600)}})).unwrap_err();
    assert!(errors[0].problem.contains("at most 512"), "{errors:?}");
    let errors =
        decode(json!({"p": {"type": "string", "pattern": "(a{1000}){1000}"}})).unwrap_err();
    assert!(errors[0].problem.contains("does not compile"), "{errors:?}");
}

/// A template with parameters as a bundle: Corral's form and Coopr's carry them
/// through export and import, and a bad one is refused at its path.
fn bundle(parameters: Value) -> String {
    json!({
        "providers": [{"name": "local", "providertype": "local", "provisioner": {}}],
        "services": [{"name": "base", "dependencies": {}, "provisioner": {"actions": {}}}],
        "clustertemplates": [{
            "name": "tuned",
            "defaults": {"services": ["base"], "provider": "local", "config": {}},
            "parameters": parameters,
        }],
    })
    .to_string()
}

#[test]
fn a_corral_bundle_round_trips_its_parameters() {
    use crate::catalog::{coopr, corral};

    let text = bundle(json!({
        "shards": {"type": "integer", "minimum": 1, "maximum": 5, "default": 1},
        "tier": {"type": "choice", "choices": ["a", "b"], "changeable": true},
    }));
    let catalog = corral::import_bundle(&text).unwrap();
    let template = catalog.clustertemplate("tuned").unwrap();
    assert_eq!(template.parameters.len(), 2);
    for exported in [
        corral::export_bundle(&catalog),
        coopr::export_bundle(&catalog),
    ] {
        let again = corral::import_bundle(&exported.to_string()).unwrap();
        assert_eq!(
            again.clustertemplate("tuned").unwrap().parameters,
            template.parameters
        );
    }
    // A Coopr template has none, and none is written for it.
    let plain =
        corral::import_bundle(&bundle(Value::Null).replace(",\"parameters\":null", "")).unwrap();
    let exported = corral::export_bundle(&plain);
    assert!(!exported.to_string().contains("parameters"), "{exported}");
}

#[test]
fn a_bad_declaration_is_refused_at_import_at_its_path() {
    let error = crate::catalog::corral::import_bundle(&bundle(json!({
        "shards": {"type": "integer", "maximum": 5, "default": 9},
    })))
    .unwrap_err();
    assert_eq!(
        error.problems[0].to_string(),
        "clustertemplates.tuned.parameters.shards: the default is refused: 9 is above the maximum 5"
    );
}

#[test]
fn a_child_template_inherits_parameters_and_may_redeclare_one() {
    let text = json!({
        "providers": [{"name": "local", "providertype": "local", "provisioner": {}}],
        "services": [{"name": "base", "dependencies": {}, "provisioner": {"actions": {}}}],
        "clustertemplates": [
            {
                "name": "parent",
                "defaults": {"services": ["base"], "provider": "local", "config": {}},
                "parameters": {
                    "shards": {"type": "integer", "maximum": 5},
                    "tier": {"type": "choice", "choices": ["a", "b"]},
                },
            },
            {
                "name": "child",
                "extends": {"name": "parent"},
                "defaults": {"config": {}},
                "parameters": {"shards": {"type": "integer", "maximum": 9}},
            },
        ],
    })
    .to_string();
    let catalog = crate::catalog::corral::import_bundle(&text).unwrap();
    let child = catalog
        .resolved_template(&"child".parse().unwrap())
        .unwrap();
    let names: Vec<&str> = child.parameters.keys().map(String::as_str).collect();
    assert_eq!(names, ["shards", "tier"]);
    assert_eq!(child.parameters["shards"].maximum, Some(9.into()));
}
