//! A cluster layout: which services run on which node, on what hardware and image.
//!
//! The solver produces a [`Layout`]; the planner diffs two of them. Node numbers are
//! the stable identity of a node across layouts (Coopr numbers them from 1000 in
//! layout order), so "the same node" in an old and a new layout is the same number.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::names::{HardwareTypeName, ImageTypeName, ServiceName, TemplateName};

/// First node number of a cluster, as in Coopr.
pub const FIRST_NODE_NUMBER: u32 = 1000;

/// The solved shape of a whole cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    pub template: TemplateName,
    /// Ordered by node number.
    pub nodes: Vec<NodeLayout>,
}

/// One node of a layout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeLayout {
    pub number: u32,
    pub hardwaretype: HardwareTypeName,
    pub imagetype: ImageTypeName,
    /// Sorted, so two layouts with the same services compare equal.
    pub services: BTreeSet<ServiceName>,
}

impl Layout {
    /// A cluster of `template` with no nodes: where a create starts and a delete ends.
    pub fn empty(template: TemplateName) -> Self {
        Self {
            template,
            nodes: Vec::new(),
        }
    }

    pub fn size(&self) -> usize {
        self.nodes.len()
    }

    /// Nodes carrying `service`, in node-number order.
    pub fn nodes_with<'a>(
        &'a self,
        service: &'a ServiceName,
    ) -> impl Iterator<Item = &'a NodeLayout> + 'a {
        self.nodes
            .iter()
            .filter(move |node| node.services.contains(service))
    }

    /// Every service on the cluster, sorted.
    pub fn services(&self) -> BTreeSet<&ServiceName> {
        self.nodes
            .iter()
            .flat_map(|node| node.services.iter())
            .collect()
    }

    pub fn node(&self, number: u32) -> Option<&NodeLayout> {
        self.nodes.iter().find(|node| node.number == number)
    }

    /// Each node's number with its services' names, in node order: what a preview
    /// compares layouts by.
    pub fn services_by_node<C: FromIterator<String>>(&self) -> impl Iterator<Item = (u32, C)> + '_ {
        self.nodes
            .iter()
            .map(|node| (node.number, node.service_names()))
    }
}

impl NodeLayout {
    /// The names of the node's services, sorted.
    pub fn service_names<C: FromIterator<String>>(&self) -> C {
        self.services.iter().map(ToString::to_string).collect()
    }
}
