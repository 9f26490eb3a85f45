//! Refusing, at preview, nodes that ask more than the operator allows: a docker node's
//! hardware type may not ask more memory or CPUs than the server's maxima (see
//! [`crate::provider::DockerLimits`]), so such a cluster is refused before anything is
//! made, with the hardware type and the most it may ask named.

use std::collections::BTreeSet;

use domain::catalog::Catalog;
use domain::layout::{Layout, NodeLayout};
use domain::names::HardwareTypeName;

use super::OperationError;
use crate::provider::{DockerLimits, DOCKER_PROVIDER};

/// Refuses the nodes of `to` not in `from` (all of them for a create) when `provider`
/// is a docker provider of `catalog` and a node's hardware type asks above `limits`.
pub(crate) fn check_new_nodes(
    limits: &DockerLimits,
    catalog: &Catalog,
    provider: &str,
    from: &Layout,
    to: &Layout,
) -> Result<(), OperationError> {
    let is_docker = catalog
        .provider(provider)
        .is_some_and(|found| found.providertype == DOCKER_PROVIDER);
    if !is_docker {
        return Ok(());
    }
    let hardware: BTreeSet<&HardwareTypeName> = to
        .nodes
        .iter()
        .filter(|node| from.node(node.number).is_none())
        .map(|node: &NodeLayout| &node.hardwaretype)
        .collect();
    for name in hardware {
        let Some(hardware_type) = catalog.hardwaretype(name.as_str()) else {
            continue;
        };
        let asked = crate::execute::hardware_limits(hardware_type, provider);
        limits
            .check(name.as_str(), &asked)
            .map_err(OperationError::Invalid)?;
    }
    Ok(())
}
