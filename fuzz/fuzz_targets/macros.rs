//! Fuzzes Coopr's macro language (`%host.service.S%`, `%join(map(…),'…')%`,
//! `[i]`, `%%`): any text is checked for syntax, and text that passes is expanded
//! against a small fixed cluster, plain and for the shell, from a node and from
//! none. The macros reach Corral in catalog services' config and action fields,
//! which any admin (or a Coopr catalog import) provides.

#![no_main]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};

use domain::macros::{
    check_syntax, expand, expand_for_shell, expand_json, MacroContext, MacroNode,
};
use domain::names::ServiceName;
use libfuzzer_sys::fuzz_target;

/// Three nodes: two carry `base` and `kv`, one `app`; node 2 lacks an access address.
fn cluster() -> &'static (MacroContext, MacroContext) {
    static CLUSTER: OnceLock<(MacroContext, MacroContext)> = OnceLock::new();
    CLUSTER.get_or_init(|| {
        let node = |number: u32, services: &[&str], access: bool| {
            let mut ips = BTreeMap::new();
            ips.insert("bind_v4".to_owned(), format!("10.0.0.{number}"));
            if access {
                ips.insert("access_v4".to_owned(), format!("192.0.2.{number}"));
            }
            MacroNode {
                number,
                host: format!("node{number}.example.com"),
                ips,
                services: services
                    .iter()
                    .filter_map(|name| name.parse::<ServiceName>().ok())
                    .collect::<BTreeSet<_>>(),
            }
        };
        let nodes: Arc<[MacroNode]> = vec![
            node(3, &["base", "app"], true),
            node(1, &["base", "kv"], true),
            node(2, &["base", "kv"], false),
        ]
        .into();
        let from_node = MacroContext {
            owner: "o'wner; rm -rf /".to_owned(),
            nodes: nodes.clone(),
            this_node: Some(1),
            parameters: Default::default(),
        };
        let cluster_level = MacroContext {
            owner: "owner".to_owned(),
            nodes,
            this_node: None,
            parameters: Default::default(),
        };
        (from_node, cluster_level)
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (from_node, cluster_level) = cluster();
    let syntax = check_syntax(&text);
    for context in [from_node, cluster_level] {
        let plain = expand(&text, context, "fuzz");
        let shell = expand_for_shell(&text, context, "fuzz");
        // Expansion parses every macro first, so bad syntax must fail it too.
        if syntax.is_err() {
            assert!(
                plain.is_err() && shell.is_err(),
                "expanded text check_syntax refused"
            );
        }
        let json = serde_json::json!({"a": [text.as_ref(), {"b": text.as_ref()}]});
        let _ = expand_json(&json, context, "config");
    }
});
