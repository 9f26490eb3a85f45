//! The links of a live cluster: its template's and its services' link URLs with their
//! macros (`http://%ip.access_v4.service.lb[0]%:8000/`) expanded against the cluster's
//! layout and the addresses its nodes have now, so the UI and the CLI can point at what
//! the cluster serves.
//!
//! A link that cannot be expanded yet (a node still being created, a service not on the
//! cluster) is left out rather than shown half-built; links never fail a request.

use std::collections::BTreeMap;

pub use api_types::ClusterLink;
use domain::catalog::coopr::import_bundle;
use domain::catalog::{Catalog, Link};
use domain::layout::Layout;
use domain::macros::{expand, MacroContext};

use crate::store::clusters::nodes::Node;
use crate::store::clusters::Cluster;

/// The template's links, then each of the cluster's services' links (services in name
/// order), expanded; a URL listed twice is kept once, with its first label.
pub fn cluster_links(cluster: &Cluster, nodes: &[Node]) -> Vec<ClusterLink> {
    match import_bundle(&cluster.catalog_json) {
        Ok(snapshot) => links_from(cluster, &snapshot, nodes),
        Err(_) => Vec::new(),
    }
}

/// [`cluster_links`] of a cluster whose catalog snapshot is already parsed.
pub fn links_from(cluster: &Cluster, catalog: &Catalog, nodes: &[Node]) -> Vec<ClusterLink> {
    let Ok(layout) = serde_json::from_str::<Layout>(&cluster.layout_json) else {
        return Vec::new();
    };
    let mut links: Vec<&Link> = Vec::new();
    if let Some(template) = catalog.clustertemplate(&cluster.template_name) {
        links.extend(&template.links);
    }
    let mut services: Vec<&str> = layout
        .nodes
        .iter()
        .flat_map(|node| node.services.iter().map(|name| name.as_str()))
        .collect();
    services.sort_unstable();
    services.dedup();
    for name in services {
        if let Some(service) = catalog.service(name) {
            links.extend(&service.links);
        }
    }
    let context = context(cluster, &layout, nodes);
    let mut expanded: Vec<ClusterLink> = Vec::new();
    for (index, link) in links.into_iter().enumerate() {
        let Some(url) = expand_url(&link.url, &context, index) else {
            continue;
        };
        let link = ClusterLink {
            label: link.label.clone(),
            url,
        };
        // A service's link and the template's often name the same page: show it once,
        // under the template's label.
        if !expanded.iter().any(|known| known.url == link.url) {
            expanded.push(link);
        }
    }
    expanded
}

/// The cluster as link URLs see it: every node of the layout, from no node in
/// particular. Nodes without an address yet get none, so macros naming them fail.
fn context(cluster: &Cluster, layout: &Layout, nodes: &[Node]) -> MacroContext {
    let hosts: BTreeMap<i64, &str> = nodes
        .iter()
        .filter_map(|node| node.hostname.as_deref().map(|host| (node.number, host)))
        .collect();
    crate::execute::view::cluster_macro_context(cluster, layout, |number| {
        hosts.get(&i64::from(number)).map(|host| (*host).to_owned())
    })
}

/// The expanded URL, or `None` when a macro cannot be expanded or expanded to nothing
/// (Coopr then returns the text unchanged, macros and all).
fn expand_url(url: &str, context: &MacroContext, index: usize) -> Option<String> {
    if !Link::is_web_url(url) {
        // Refused when the catalog is saved; a snapshot from before that still holds
        // such links, and none may reach a page as an `href`.
        return None;
    }
    let expanded = expand(url, context, &format!("links[{index}].url")).ok()?;
    let has_macros = url.matches('%').count() >= 2;
    if has_macros && expanded == url {
        return None;
    }
    if expanded.contains("://:") || expanded.contains("//,") {
        // A host that expanded to nothing.
        return None;
    }
    Link::is_web_url(&expanded).then_some(expanded)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn cluster(layout: &str) -> Cluster {
        let catalog = serde_json::json!({
            "services": [
                {"name": "lb", "links": [{"label": "balancer", "url": "http://%ip.service.lb[0]%:8000/"}]},
                {"name": "app", "links": [{"label": "all apps", "url": "http://%host.service.nope%/"}]}
            ],
            "clustertemplates": [{"name": "web", "links": [
                {"label": "site", "url": "http://%ip.access_v4.service.lb[0]%:8000/"},
                {"label": "docs", "url": "https://example.org/100%25"}
            ]}]
        });
        crate::testing::stored_cluster(layout, &catalog.to_string())
    }

    fn node(number: i64, host: Option<&str>) -> Node {
        crate::testing::stored_node(number, host)
    }

    const LAYOUT: &str = r#"{"template": "web", "nodes": [
        {"number": 1000, "hardwaretype": "small", "imagetype": "debian", "services": ["lb"]},
        {"number": 1001, "hardwaretype": "small", "imagetype": "debian", "services": ["app"]}]}"#;

    #[test]
    fn template_and_service_links_expand_against_node_addresses() {
        let links = cluster_links(
            &cluster(LAYOUT),
            &[node(1000, Some("127.1.0.7")), node(1001, Some("127.1.0.8"))],
        );
        let urls: Vec<(&str, &str)> = links
            .iter()
            .map(|link| (link.label.as_str(), link.url.as_str()))
            .collect();
        assert_eq!(
            urls,
            [
                ("site", "http://127.1.0.7:8000/"),
                ("docs", "https://example.org/100%25"),
            ],
            "the balancer's URL is the site's; the link to a service on no node is left out"
        );
    }

    #[test]
    fn only_web_links_reach_a_page() {
        let mut hostile = cluster(LAYOUT);
        // A snapshot saved before links were checked.
        hostile.catalog_json = serde_json::json!({
            "services": [],
            "clustertemplates": [{"name": "web", "links": [
                {"label": "evil", "url": "javascript:fetch('/api/v1/me')"},
                {"label": "fine", "url": "https://example.org/"}
            ]}]
        })
        .to_string();
        let links = cluster_links(&hostile, &[]);
        assert_eq!(
            links,
            [ClusterLink {
                label: "fine".into(),
                url: "https://example.org/".into()
            }]
        );
    }

    #[test]
    fn links_wait_for_addresses() {
        let links = cluster_links(&cluster(LAYOUT), &[node(1000, None)]);
        assert_eq!(
            links,
            [ClusterLink {
                label: "docs".into(),
                url: "https://example.org/100%25".into()
            }]
        );
    }

    #[test]
    fn a_cluster_without_layout_has_no_links() {
        assert!(cluster_links(&cluster("{}"), &[]).is_empty());
    }
}
