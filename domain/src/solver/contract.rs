//! The layout JSON the CLI and API print: a stable contract, separate from the
//! internal [`Layout`] so that type can evolve.
//!
//! Shape: `{"template": .., "size": N, "nodes": [{"number": .., "hardwaretype": ..,
//! "imagetype": .., "services": [..]}]}`, nodes in number order, services sorted.

use serde::{Deserialize, Serialize};

use crate::layout::{Layout, NodeLayout};
use crate::names::{HardwareTypeName, ImageTypeName, ServiceName, TemplateName};

/// A solved layout as published.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContractLayout {
    pub template: TemplateName,
    pub size: usize,
    pub nodes: Vec<ContractNode>,
}

/// One node as published.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContractNode {
    pub number: u32,
    pub hardwaretype: HardwareTypeName,
    pub imagetype: ImageTypeName,
    pub services: Vec<ServiceName>,
}

impl From<&Layout> for ContractLayout {
    fn from(layout: &Layout) -> Self {
        let mut nodes: Vec<ContractNode> = layout.nodes.iter().map(ContractNode::from).collect();
        nodes.sort_by_key(|node| node.number);
        ContractLayout {
            template: layout.template.clone(),
            size: layout.size(),
            nodes,
        }
    }
}

impl From<&NodeLayout> for ContractNode {
    fn from(node: &NodeLayout) -> Self {
        ContractNode {
            number: node.number,
            hardwaretype: node.hardwaretype.clone(),
            imagetype: node.imagetype.clone(),
            services: node.services.iter().cloned().collect(),
        }
    }
}

impl From<ContractLayout> for Layout {
    fn from(contract: ContractLayout) -> Self {
        Layout {
            template: contract.template,
            nodes: contract
                .nodes
                .into_iter()
                .map(|node| NodeLayout {
                    number: node.number,
                    hardwaretype: node.hardwaretype,
                    imagetype: node.imagetype,
                    services: node.services.into_iter().collect(),
                })
                .collect(),
        }
    }
}

impl ContractLayout {
    /// The contract JSON of `layout`.
    pub fn json(layout: &Layout) -> serde_json::Value {
        let contract = ContractLayout::from(layout);
        serde_json::json!({
            "template": contract.template,
            "size": contract.size,
            "nodes": contract.nodes.iter().map(|node| serde_json::json!({
                "number": node.number,
                "hardwaretype": node.hardwaretype,
                "imagetype": node.imagetype,
                "services": node.services,
            })).collect::<Vec<_>>(),
        })
    }
}
