//! `replace-nodes`: the layout a replacement moves to, and what it would cost.
//!
//! Each named node gets a successor of the same hardware and image type running the
//! same services, numbered after the cluster's highest node; the plan
//! ([`domain::plan::PlanOperation::ReplaceNodes`]) builds the successors, configures the
//! cluster around them and then tears the old nodes down. A node whose services keep
//! data (`"stateful": true`) is only replaced when the caller accepts losing that data,
//! and the preview says so.

use std::collections::BTreeSet;

use domain::catalog::Catalog;
use domain::layout::{Layout, NodeLayout, FIRST_NODE_NUMBER};

use super::OperationError;

/// The layout after replacing `nodes` of `committed`, and the warnings its preview
/// gives; refused for no node, a node the cluster does not have, or a stateful node
/// without `accept_data_loss`.
pub(super) fn replacement(
    cluster_name: &str,
    snapshot: &Catalog,
    committed: &Layout,
    nodes: &BTreeSet<u32>,
    accept_data_loss: bool,
) -> Result<(Layout, Vec<String>), OperationError> {
    if nodes.is_empty() {
        return Err(OperationError::Invalid(
            "name the nodes to replace (nodes: [1001])".into(),
        ));
    }
    super::change::check_named_nodes(cluster_name, committed, nodes)?;
    let keeping_data: Vec<String> = committed
        .nodes
        .iter()
        .filter(|node| nodes.contains(&node.number))
        .filter_map(|node| {
            let stateful: Vec<&str> = node
                .services
                .iter()
                .filter(|service| {
                    snapshot
                        .service(service.as_str())
                        .is_some_and(|service| service.is_stateful())
                })
                .map(|service| service.as_str())
                .collect();
            let verb = if stateful.len() == 1 { "keeps" } else { "keep" };
            (!stateful.is_empty()).then(|| {
                format!(
                    "node {} runs {}, which {verb} data on the node",
                    node.number,
                    stateful.join(", ")
                )
            })
        })
        .collect();
    let warnings = if keeping_data.is_empty() {
        Vec::new()
    } else if accept_data_loss {
        vec![format!(
            "{}: the replacement starts without it, and the data on the old node is \
             lost when it is deleted",
            keeping_data.join("; ")
        )]
    } else {
        return Err(OperationError::DataWouldBeLost(format!(
            "{}: a replacement would lose it; replace with force (--force) to accept \
             that, or leave the node",
            keeping_data.join("; ")
        )));
    };
    let first_free = committed
        .nodes
        .iter()
        .map(|node| node.number + 1)
        .max()
        .unwrap_or(FIRST_NODE_NUMBER);
    let mut to = committed.clone();
    to.nodes.retain(|node| !nodes.contains(&node.number));
    let successors = committed
        .nodes
        .iter()
        .filter(|node| nodes.contains(&node.number))
        .zip(first_free..)
        .map(|(old, number)| NodeLayout {
            number,
            ..old.clone()
        });
    to.nodes.extend(successors);
    Ok((to, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        domain::catalog::coopr::import_bundle(
            &serde_json::json!({
                "providers": [{"name": "local", "providertype": "local"}],
                "hardwaretypes": [{"name": "small", "providermap": {"local": {}}}],
                "imagetypes": [{"name": "deb", "providermap": {"local": {}}}],
                "services": [{"name": "web"}, {"name": "db", "stateful": true}],
                "clustertemplates": [{
                    "name": "t",
                    "compatibility": {"services": ["web", "db"]},
                    "defaults": {"services": ["web", "db"], "provider": "local",
                                 "hardwaretype": "small", "imagetype": "deb"}
                }]
            })
            .to_string(),
        )
        .unwrap()
    }

    fn layout() -> Layout {
        serde_json::from_value(serde_json::json!({
            "template": "t",
            "nodes": [
                {"number": 1000, "hardwaretype": "small", "imagetype": "deb", "services": ["db"]},
                {"number": 1001, "hardwaretype": "small", "imagetype": "deb", "services": ["web"]},
                {"number": 1002, "hardwaretype": "small", "imagetype": "deb", "services": ["web"]}
            ]
        }))
        .unwrap()
    }

    fn numbers(layout: &Layout) -> Vec<(u32, Vec<String>)> {
        layout.services_by_node().collect()
    }

    #[test]
    fn successors_take_the_services_and_the_next_numbers() {
        let nodes = BTreeSet::from([1001, 1002]);
        let (to, warnings) = replacement("shop", &catalog(), &layout(), &nodes, false).unwrap();
        assert_eq!(
            numbers(&to),
            [
                (1000, vec!["db".to_owned()]),
                (1003, vec!["web".to_owned()]),
                (1004, vec!["web".to_owned()])
            ]
        );
        assert!(warnings.is_empty());
    }

    #[test]
    fn a_stateful_node_needs_consent_and_the_preview_warns() {
        let nodes = BTreeSet::from([1000]);
        let refused = replacement("shop", &catalog(), &layout(), &nodes, false).unwrap_err();
        assert!(
            matches!(&refused, OperationError::DataWouldBeLost(message)
                if message.starts_with("node 1000 runs db, which keeps data on the node: a replacement")
                    && message.contains("--force")),
            "{refused}"
        );
        let (to, warnings) = replacement("shop", &catalog(), &layout(), &nodes, true).unwrap();
        assert_eq!(to.nodes.last().unwrap().number, 1003);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("lost"), "{warnings:?}");
    }

    #[test]
    fn no_node_or_an_unknown_node_is_refused() {
        for (nodes, expected) in [
            (BTreeSet::new(), "name the nodes to replace"),
            (
                BTreeSet::from([1001, 1007]),
                "cluster shop has no node 1007",
            ),
        ] {
            let refused = replacement("shop", &catalog(), &layout(), &nodes, true).unwrap_err();
            assert!(refused.to_string().contains(expected), "{refused}");
        }
    }
}
