//! Macro examples from docs/coopr-format.md §6 and their edge cases, plus a check that
//! shell quoting really round-trips through `sh`.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use serde_json::json;

use super::*;

fn node(number: u32, host: &str, last_octet: u8, services: &[&str]) -> MacroNode {
    MacroNode {
        number,
        host: host.to_owned(),
        ips: BTreeMap::from([
            ("bind_v4".to_owned(), format!("10.0.0.{last_octet}")),
            ("access_v4".to_owned(), format!("192.0.2.{last_octet}")),
        ]),
        services: services
            .iter()
            .map(|s| ServiceName::parse(*s).unwrap())
            .collect::<BTreeSet<_>>(),
    }
}

/// Three nodes, listed out of order on purpose: macros must sort by number.
fn context() -> MacroContext {
    MacroContext {
        owner: "alice".to_owned(),
        nodes: [
            node(1002, "c1-1002.corral.test", 12, &["zk", "dn"]),
            node(1000, "c1-1000.corral.test", 10, &["zk", "nn"]),
            node(1001, "c1-1001.corral.test", 11, &["zk", "dn"]),
        ]
        .into(),
        this_node: Some(1001),
        parameters: Arc::new(
            serde_json::json!({"shards": 3, "tls": true, "version": "1.2"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        ),
    }
}

#[test]
fn expands_every_macro_form() {
    let table: &[(&str, &str)] = &[
        ("%cluster.owner%", "alice"),
        ("%host.self%", "c1-1001.corral.test"),
        ("%ip.self%", "10.0.0.11"),
        ("%ip.bind_v4.self%", "10.0.0.11"),
        ("%ip.access_v4.self%", "192.0.2.11"),
        (
            "%host.service.zk%",
            "c1-1000.corral.test,c1-1001.corral.test,c1-1002.corral.test",
        ),
        ("%host.service.zk[0]%", "c1-1000.corral.test"),
        ("%host.service.zk[2]%", "c1-1002.corral.test"),
        ("%ip.service.dn%", "10.0.0.11,10.0.0.12"),
        ("%ip.bind_v4.service.dn[1]%", "10.0.0.12"),
        ("%ip.access_v4.service.nn%", "192.0.2.10"),
        ("%num.service.zk%", "3"),
        ("%num.service.dn%", "2"),
        ("%num.service.absent%", "0"),
        ("%instance.self.service.zk%", "2"),
        ("%instance.self.service.dn%", "1"),
        ("%param.shards%", "3"),
        ("%param.tls%", "true"),
        ("v%param.version%-%param.shards%", "v1.2-3"),
        ("%host.self.service.dn%", "c1-1001.corral.test"),
        ("%ip.self.service.dn%", "10.0.0.11"),
        ("%ip.access_v4.self.service.dn%", "192.0.2.11"),
        (
            "%join(map(host.service.zk,'$:2181'),' ')%",
            "c1-1000.corral.test:2181 c1-1001.corral.test:2181 c1-1002.corral.test:2181",
        ),
        (
            "%join(map(ip.bind_v4.service.dn,'thrift://$:9083'),',')%",
            "thrift://10.0.0.11:9083,thrift://10.0.0.12:9083",
        ),
        ("%join(ip.service.dn,\";\")%", "10.0.0.11;10.0.0.12"),
        ("%map(ip.service.dn,'$:1')%", "10.0.0.11:1,10.0.0.12:1"),
        (
            "%join(map(ip.service.dn,'$$$'),' ')%",
            "$10.0.0.11 $10.0.0.12",
        ),
        ("%map(host.service.nn[0],'[$]')%", "[c1-1000.corral.test]"),
        (
            "%join(map(host.service.zk,'$:2181'),',')%/cdap",
            "c1-1000.corral.test:2181,c1-1001.corral.test:2181,c1-1002.corral.test:2181/cdap",
        ),
        (
            "http://%ip.access_v4.service.nn%:50070 by %cluster.owner%",
            "http://192.0.2.10:50070 by alice",
        ),
        // %% is a literal %, an unpaired % stays.
        ("100%% sure", "100% sure"),
        ("50% off", "50% off"),
        ("%%host.self%%", "%host.self%"),
        ("no macros here", "no macros here"),
        ("", ""),
        // A service on no node yields nothing; if nothing in the string expanded,
        // the text stays verbatim (Coopr), else the empty value vanishes.
        ("peers=%host.service.absent%", "peers=%host.service.absent%"),
        (
            "peers=%host.service.absent%;me=%host.self%",
            "peers=;me=c1-1001.corral.test",
        ),
        ("%instance.self.service.nn%", "%instance.self.service.nn%"),
        (
            "%join(map(host.service.absent,'$:1'),' ')%x",
            "%join(map(host.service.absent,'$:1'),' ')%x",
        ),
    ];
    let ctx = context();
    for (text, expected) in table {
        let got = expand(text, &ctx, "config.x").unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(&got, expected, "expanding {text}");
        check_syntax(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
}

#[test]
fn failures_name_the_macro_and_the_field() {
    let table: &[(&str, MacroProblem, &str)] = &[
        (
            "%host.service.zk[3]%",
            MacroProblem::IndexOutOfRange {
                name: "host.service.zk".into(),
                index: 3,
                len: 3,
            },
            "field config.x: macro %host.service.zk[3]%: index out of range, 3 nodes carry the service",
        ),
        (
            "a %foo.bar% b",
            MacroProblem::Unknown {
                name: "foo.bar".into(),
            },
            "field config.x: unknown macro %foo.bar%",
        ),
        (
            "%host.self.service.nn%",
            MacroProblem::NotOnThisNode {
                name: "host.self.service.nn".into(),
                service: "nn".into(),
            },
            "field config.x: macro %host.self.service.nn%: this node does not carry service nn",
        ),
        (
            "%ip.ipv6.self%",
            MacroProblem::MissingAddress {
                name: "ip.ipv6.self".into(),
                node: 1001,
                kind: "ipv6".into(),
            },
            "field config.x: macro %ip.ipv6.self%: node 1001 has no ipv6 address",
        ),
        (
            "%num.service.zk[0]%",
            MacroProblem::IndexOnScalar {
                name: "num.service.zk".into(),
            },
            "field config.x: macro %num.service.zk% names a single value and cannot be indexed",
        ),
        (
            "%join(host.service.zk, ',')%",
            MacroProblem::Syntax {
                expr: "join(host.service.zk, ',')".into(),
                reason: "expected a quoted literal",
            },
            "field config.x: cannot parse %join(host.service.zk, ',')%: expected a quoted literal (write %% for a literal %)",
        ),
    ];
    let ctx = context();
    for (text, problem, message) in table {
        let err = expand(text, &ctx, "config.x").unwrap_err();
        assert_eq!(&err.problem, problem, "{text}");
        assert_eq!(err.field.as_deref(), Some("config.x"));
        assert_eq!(&err.to_string(), message);
    }
}

#[test]
fn syntax_errors_are_caught_without_a_cluster() {
    for bad in [
        "%join(host.service.zk)%",
        "%map(host.service.zk,'$'%",
        "%join(map(host.service.zk,'$'),'x')extra%",
        "%host.service.zk[]%",
        "%host.service.zk[a]%",
        "%host.service.%",
        "%ip..self%",
        "%cluster.name%",
        "%instance.service.zk%",
        "%map(host.service.zk,'unclosed)%",
        "100% and 50%",
    ] {
        let err = check_syntax(bad).unwrap_err();
        assert_eq!(err.field, None, "{bad}");
        assert!(
            err.in_field("services.x.fields.args")
                .to_string()
                .starts_with("field services.x.fields.args: "),
            "{bad}"
        );
    }
}

#[test]
fn real_coopr_catalog_macros_parse() {
    // Strings copied from Coopr's published templates (clustertemplates/*.json).
    for text in [
        "%host.service.hadoop-yarn-resourcemanager%",
        "%ip.bind_v4.self%",
        "%host.service.hadoop-hdfs-namenode%",
        "%join(map(host.service.zookeeper-server,'$:2181'),',')%",
        "%join(map(ip.bind_v4.service.hive-metastore,'thrift://$:9083'),',')%",
        "%join(map(host.service.zookeeper-server,'$'),',')%",
        "%ip.access_v4.service.hbase-master%",
        "%join(map(host.service.zookeeper-server,'$:2181'),',')%/cdap",
        "hdfs://%host.service.hadoop-hdfs-namenode%",
    ] {
        check_syntax(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
}

#[test]
fn self_macros_need_a_current_node() {
    let mut ctx = context();
    ctx.this_node = None;
    let err = expand("%host.self%", &ctx, "links[0].url").unwrap_err();
    assert_eq!(
        err.to_string(),
        "field links[0].url: macro %host.self% needs a current node, and there is none here"
    );
    assert_eq!(
        expand("%host.service.nn%", &ctx, "links[0].url").unwrap(),
        "c1-1000.corral.test"
    );
}

#[test]
fn shell_expansion_quotes_each_value_as_one_word() {
    let mut ctx = context();
    ctx.owner = "bob'; rm -rf / #".to_owned();
    let got = expand_for_shell(
        "setup.sh --zk %join(map(host.service.zk,'$:2181'),' ')% --owner %cluster.owner% --none %host.service.absent% 100%%",
        &ctx,
        "actions.install.fields.args",
    )
    .unwrap();
    assert_eq!(
        got,
        "setup.sh --zk 'c1-1000.corral.test:2181 c1-1001.corral.test:2181 c1-1002.corral.test:2181' \
         --owner 'bob'\\''; rm -rf / #' --none '' 100%"
    );
}

#[test]
fn json_expansion_touches_string_values_only_and_names_paths() {
    let ctx = context();
    let config = json!({
        "%host.self%": "%host.self%",
        "kv": {"peers": "%join(map(host.service.zk,'$:7000'),' ')%", "port": 7000},
        "list": ["%num.service.dn%", true, null]
    });
    let got = expand_json(&config, &ctx, "config").unwrap();
    assert_eq!(
        got,
        json!({
            "%host.self%": "c1-1001.corral.test",
            "kv": {"peers": "c1-1000.corral.test:7000 c1-1001.corral.test:7000 c1-1002.corral.test:7000", "port": 7000},
            "list": ["2", true, null]
        })
    );
    let bad = json!({"a": [1, {"b": "%nope%"}]});
    let err = expand_json(&bad, &ctx, "config").unwrap_err();
    assert_eq!(err.field.as_deref(), Some("config.a[1].b"));
    let err = check_json_syntax(&bad, "config").unwrap_err();
    assert_eq!(err.to_string(), "field config.a[1].b: unknown macro %nope%");
    let shell = expand_json_for_shell(&json!({"args": "%host.self%"}), &ctx, "fields").unwrap();
    assert_eq!(shell, json!({"args": "'c1-1001.corral.test'"}));
}

/// Reads a single-quoted `sh` word back the way `sh` does.
fn sh_unquote(word: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = word.chars();
    loop {
        match chars.next() {
            None => return Some(out),
            Some('\'') => loop {
                match chars.next()? {
                    '\'' => break,
                    c => out.push(c),
                }
            },
            Some('\\') => out.push(chars.next()?),
            Some(_) => return None,
        }
    }
}

/// A macro built from the grammar's parts, some of them wrong on purpose.
fn macro_strategy() -> impl Strategy<Value = String> {
    let names = prop::sample::select(vec![
        "cluster.owner",
        "host.self",
        "ip.self",
        "ip.access_v4.self",
        "ip.ipv6.self",
        "host.service.zk",
        "host.service.nn",
        "ip.service.dn",
        "ip.access_v4.service.zk",
        "num.service.zk",
        "instance.self.service.dn",
        "host.self.service.nn",
        "ip.self.service.dn",
        "host.service.none",
        "bogus.name",
        "host.service.",
    ]);
    let index = prop::option::of(0..4usize);
    let format = "[a-z$:/]{0,5}";
    let separator = "[ ,;]{0,2}";
    (names, index, 0..4u8, format, separator).prop_map(|(name, index, wrap, format, separator)| {
        let basic = match index {
            Some(i) => format!("{name}[{i}]"),
            None => name.to_owned(),
        };
        let expr = match wrap {
            0 => basic,
            1 => format!("map({basic},'{format}')"),
            2 => format!("join({basic},'{separator}')"),
            _ => format!("join(map({basic},'{format}'),\"{separator}\")"),
        };
        format!("%{expr}%")
    })
}

/// Text mixing literals, `%%`, stray `%` and macros.
fn text_with_macros() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        3 => macro_strategy(),
        2 => "[a-z:/ =]{0,6}",
        1 => Just("%%".to_owned()),
        1 => Just("%".to_owned()),
    ];
    proptest::collection::vec(piece, 0..5).prop_map(|pieces| pieces.concat())
}

proptest! {
    #[test]
    fn shell_quoting_round_trips_by_sh_rules(value in any::<String>()) {
        let quoted = shell_quote(&value);
        prop_assert_eq!(sh_unquote(&quoted), Some(value));
    }

    #[test]
    fn checked_text_fails_only_on_cluster_data(text in text_with_macros()) {
        let ctx = context();
        let checked = check_syntax(&text);
        let expanded = expand(&text, &ctx, "f");
        match (checked, expanded) {
            (Err(syntax), expanded) => {
                prop_assert_eq!(expanded.map_err(|e| e.problem), Err(syntax.problem));
            }
            // What the syntax check accepts can only fail on the cluster's data.
            (Ok(()), Err(error)) => prop_assert!(
                matches!(
                    error.problem,
                    MacroProblem::IndexOutOfRange { .. }
                        | MacroProblem::MissingAddress { .. }
                        | MacroProblem::NotOnThisNode { .. }
                ),
                "{}",
                error
            ),
            (Ok(()), Ok(_)) => {}
        }
    }
}

#[cfg(unix)]
#[test]
fn shell_quoting_round_trips_through_real_sh() {
    let samples = [
        "plain",
        "",
        "it's",
        "''",
        "a b\tc\nd",
        "$(rm -rf /) `id` $HOME ${x} \\ \" ; | & > <",
        "ünïcødé ☃",
        "%host.self%",
        "-n",
    ];
    for value in samples {
        let output = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("printf %s {}", shell_quote(value)))
            .output()
            .expect("sh runs");
        assert_eq!(String::from_utf8_lossy(&output.stdout), value, "{value:?}");
    }
}

#[test]
fn every_macro_bearing_field_of_coopr_catalog_passes_the_syntax_check() {
    let root = std::env::var_os("COOPR_CATALOG")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/coopr-catalog").into()
        });
    let mut checked = 0;
    let mut with_macros = 0;
    for kind in ["clustertemplates", "services"] {
        for entry in std::fs::read_dir(root.join(kind)).unwrap() {
            let path = entry.unwrap().path();
            let json: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let name = json["name"].as_str().unwrap().to_owned();
            let mut fields = vec![
                (
                    format!("{kind}.{name}.defaults.config"),
                    json["defaults"]["config"].clone(),
                ),
                (format!("{kind}.{name}.links"), json["links"].clone()),
            ];
            if let Some(actions) = json["provisioner"]["actions"].as_object() {
                for (action, spec) in actions {
                    fields.push((
                        format!("{kind}.{name}.provisioner.actions.{action}.fields"),
                        spec["fields"].clone(),
                    ));
                }
            }
            for (field, value) in fields {
                check_json_syntax(&value, &field).unwrap_or_else(|e| panic!("{e}"));
                checked += 1;
                with_macros += usize::from(value.to_string().contains("%"));
            }
        }
    }
    assert!(checked > 100, "catalog not found under {}", root.display());
    assert!(with_macros >= 10, "{with_macros}");
}
