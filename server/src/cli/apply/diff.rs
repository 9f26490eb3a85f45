//! What `corral apply` must do: the environment file against the clusters that exist.
//!
//! A cluster belongs to an environment through a key in its config
//! ([`ENVIRONMENT_KEY`]), written when apply creates it. Listed and missing: create.
//! Listed and present: amend what grew (services, nodes) or changed (config keys the
//! file sets). Present in the environment but no longer listed: delete. What Corral
//! cannot change in place (another template, fewer nodes, fewer services) is refused
//! with the line of the entry, before anything is done.

use std::collections::BTreeSet;

use api_types::{ClusterState, ClusterView};
use serde_json::{Map, Value};

use super::file::{ClusterSpec, EnvFile};

/// The cluster config key naming the environment that manages the cluster.
pub const ENVIRONMENT_KEY: &str = "corral-environment";

/// A cluster as the API lists it, reduced to what the diff compares.
#[derive(Debug, Clone, PartialEq)]
pub struct Existing {
    pub id: String,
    pub name: String,
    pub template: String,
    /// The catalog provider it was built on.
    pub provider: String,
    pub state: ClusterState,
    pub size: u32,
    pub services: BTreeSet<String>,
    pub config: Map<String, Value>,
}

impl Existing {
    /// From one item of `GET /api/v1/clusters`.
    pub fn from_view(cluster: ClusterView) -> Self {
        let services = cluster.layout["nodes"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|node| node["services"].as_array().into_iter().flatten())
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        Self {
            id: cluster.id,
            name: cluster.name,
            template: cluster.template,
            provider: cluster.provider,
            state: cluster.state,
            size: u32::try_from(cluster.size).unwrap_or(u32::MAX),
            services,
            config: cluster.config.as_object().cloned().unwrap_or_default(),
        }
    }

    pub fn environment(&self) -> Option<&str> {
        self.config.get(ENVIRONMENT_KEY).and_then(Value::as_str)
    }
}

/// One change to one cluster.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Create {
        spec: ClusterSpec,
        /// The config to send: the file's plus the environment key.
        config: Map<String, Value>,
    },
    Amend {
        id: String,
        name: String,
        line: usize,
        add_services: Vec<String>,
        from_size: u32,
        add_nodes: u32,
        /// Config keys whose value changes, with their new values.
        config: Map<String, Value>,
    },
    Delete {
        id: String,
        name: String,
        template: String,
        size: u32,
    },
}

impl Step {
    pub fn name(&self) -> &str {
        match self {
            Step::Create { spec, .. } => spec.name.as_str(),
            Step::Amend { name, .. } | Step::Delete { name, .. } => name,
        }
    }
}

/// Everything apply would do, and the clusters already as wanted.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub steps: Vec<Step>,
    pub unchanged: Vec<String>,
}

/// The plan, or every reason it cannot be made (each naming its line).
pub fn diff(file: &EnvFile, origin: &str, existing: &[Existing]) -> Result<Plan, Vec<String>> {
    let environment = file.environment.as_str();
    let mut steps = Vec::new();
    let mut unchanged = Vec::new();
    let mut problems = Vec::new();
    for spec in &file.clusters {
        let at = format!("{origin}:{}: cluster {}", spec.line, spec.name.as_str());
        let Some(current) = existing.iter().find(|c| c.name == spec.name.as_str()) else {
            let mut config = spec.config.clone();
            config.insert(ENVIRONMENT_KEY.to_owned(), Value::from(environment));
            steps.push(Step::Create {
                spec: spec.clone(),
                config,
            });
            continue;
        };
        if current.environment() != Some(environment) {
            problems.push(format!(
                "{at} already exists outside environment {environment} ({}); rename it in the \
                 file or delete that cluster",
                current
                    .environment()
                    .map_or("created by hand".to_owned(), |other| format!(
                        "it belongs to {other}"
                    ))
            ));
            continue;
        }
        if current.template != spec.template.as_str() {
            problems.push(format!(
                "{at} runs template {}, not {}: a cluster cannot change template (remove it \
                 from the file, apply, then add it back)",
                current.template,
                spec.template.as_str()
            ));
            continue;
        }
        if let Some(provider) = spec
            .provider
            .as_ref()
            .filter(|provider| provider.as_str() != current.provider)
        {
            problems.push(format!(
                "{at} is built on provider {}, not {provider}: a cluster cannot move to \
                 another provider (remove it from the file, apply, then add it back)",
                current.provider
            ));
            continue;
        }
        if current.state != ClusterState::Active {
            problems.push(format!(
                "{at} is {}: wait for its job, or retry or roll back a failed one \
                 (`corral cluster show {}`)",
                current.state, current.name
            ));
            continue;
        }
        let wanted = spec.size.0;
        if wanted < current.size {
            problems.push(format!(
                "{at} has {} nodes; shrinking to {wanted} is not supported (remove it from the \
                 file to delete it, or keep its size)",
                current.size
            ));
            continue;
        }
        let add_services: Vec<String> = spec
            .services
            .iter()
            .flatten()
            .map(|name| name.as_str().to_owned())
            .filter(|name| !current.services.contains(name))
            .collect();
        let config: Map<String, Value> = spec
            .config
            .iter()
            .filter(|(key, value)| current.config.get(*key) != Some(*value))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        if add_services.is_empty() && wanted == current.size && config.is_empty() {
            unchanged.push(current.name.clone());
            continue;
        }
        steps.push(Step::Amend {
            id: current.id.clone(),
            name: current.name.clone(),
            line: spec.line,
            add_services,
            from_size: current.size,
            add_nodes: wanted - current.size,
            config,
        });
    }
    let listed: BTreeSet<&str> = file.clusters.iter().map(|c| c.name.as_str()).collect();
    for current in existing {
        if current.environment() == Some(environment) && !listed.contains(current.name.as_str()) {
            steps.push(Step::Delete {
                id: current.id.clone(),
                name: current.name.clone(),
                template: current.template.clone(),
                size: current.size,
            });
        }
    }
    if problems.is_empty() {
        Ok(Plan { steps, unchanged })
    } else {
        Err(problems)
    }
}

/// The plan as people read it: one line per change.
pub fn describe(plan: &Plan, environment: &str) -> Vec<String> {
    let count = |wanted: fn(&Step) -> bool| plan.steps.iter().filter(|s| wanted(s)).count();
    let mut lines = vec![format!(
        "environment {environment}: {} to create, {} to amend, {} to delete, {} unchanged",
        count(|s| matches!(s, Step::Create { .. })),
        count(|s| matches!(s, Step::Amend { .. })),
        count(|s| matches!(s, Step::Delete { .. })),
        plan.unchanged.len()
    )];
    for step in &plan.steps {
        lines.push(match step {
            Step::Create { spec, .. } => {
                let services = spec.services.as_ref().map_or(String::new(), |names| {
                    let names: Vec<&str> = names.iter().map(|n| n.as_str()).collect();
                    format!(", services {}", names.join(","))
                });
                let on = spec
                    .provider
                    .as_ref()
                    .map_or(String::new(), |provider| format!(" on {provider}"));
                format!(
                    "  + create {}: template {}, {} node(s){on}{services}",
                    spec.name.as_str(),
                    spec.template.as_str(),
                    spec.size.0
                )
            }
            Step::Amend {
                name,
                add_services,
                from_size,
                add_nodes,
                config,
                ..
            } => {
                let mut what = Vec::new();
                if !add_services.is_empty() {
                    what.push(format!("add services {}", add_services.join(",")));
                }
                if *add_nodes > 0 {
                    what.push(format!(
                        "add {add_nodes} node(s) ({from_size} -> {})",
                        from_size + add_nodes
                    ));
                }
                if !config.is_empty() {
                    let keys: Vec<&str> = config.keys().map(String::as_str).collect();
                    what.push(format!("reconfigure {}", keys.join(",")));
                }
                format!("  ~ amend {name}: {}", what.join("; "))
            }
            Step::Delete {
                name,
                template,
                size,
                ..
            } => format!("  - delete {name}: template {template}, {size} node(s)"),
        });
    }
    lines
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn file(text: &str) -> EnvFile {
        EnvFile::parse(text, "env.yaml").unwrap()
    }

    fn existing(name: &str, size: u32, environment: Option<&str>) -> Existing {
        let mut config = Map::new();
        if let Some(environment) = environment {
            config.insert(ENVIRONMENT_KEY.into(), environment.into());
        }
        Existing {
            id: format!("id-{name}"),
            name: name.into(),
            template: "web-stack".into(),
            provider: "local".into(),
            state: ClusterState::Active,
            size,
            services: ["base", "kv", "app", "lb"].map(str::to_owned).into(),
            config,
        }
    }

    const SHOP: &str =
        "environment: demo\nclusters:\n  - name: shop\n    template: web-stack\n    size: 3\n";

    #[test]
    fn a_cluster_names_its_provider_and_cannot_move_to_another() {
        let on_docker = format!("{SHOP}    provider: docker\n");
        let plan = diff(&file(&on_docker), "env.yaml", &[]).unwrap();
        assert_eq!(
            describe(&plan, "demo")[1],
            "  + create shop: template web-stack, 3 node(s) on docker"
        );
        let built = existing("shop", 3, Some("demo"));
        let problems = diff(&file(&on_docker), "env.yaml", &[built]).unwrap_err();
        assert!(
            problems[0].contains("is built on provider local, not docker"),
            "{problems:?}"
        );
    }

    #[test]
    fn a_missing_cluster_is_created_with_its_environment() {
        let plan = diff(&file(SHOP), "env.yaml", &[]).unwrap();
        let [Step::Create { spec, config }] = plan.steps.as_slice() else {
            panic!("{plan:?}");
        };
        assert_eq!(spec.name.as_str(), "shop");
        assert_eq!(config[ENVIRONMENT_KEY], "demo");
        assert_eq!(
            describe(&plan, "demo")[1],
            "  + create shop: template web-stack, 3 node(s)"
        );
    }

    #[test]
    fn a_cluster_as_wanted_is_left_alone() {
        let plan = diff(
            &file(SHOP),
            "env.yaml",
            &[existing("shop", 3, Some("demo"))],
        )
        .unwrap();
        assert!(plan.steps.is_empty());
        assert_eq!(plan.unchanged, ["shop"]);
    }

    #[test]
    fn growth_and_config_are_amends() {
        let text = SHOP.replace("size: 3", "size: 5\n    config: {lb: {port: 8000}}");
        let plan = diff(
            &file(&text),
            "env.yaml",
            &[existing("shop", 3, Some("demo"))],
        )
        .unwrap();
        let [Step::Amend {
            add_nodes, config, ..
        }] = plan.steps.as_slice()
        else {
            panic!("{plan:?}");
        };
        assert_eq!(*add_nodes, 2);
        assert!(config.contains_key("lb"));
        assert_eq!(
            describe(&plan, "demo")[1],
            "  ~ amend shop: add 2 node(s) (3 -> 5); reconfigure lb"
        );
    }

    #[test]
    fn clusters_dropped_from_the_file_are_deleted_but_not_others() {
        let text = "environment: demo\nclusters: []\n";
        let plan = diff(
            &file(text),
            "env.yaml",
            &[
                existing("shop", 3, Some("demo")),
                existing("mine", 3, None),
                existing("theirs", 3, Some("prod")),
            ],
        )
        .unwrap();
        assert_eq!(plan.steps.len(), 1);
        assert!(matches!(&plan.steps[0], Step::Delete { name, .. } if name == "shop"));
    }

    #[test]
    fn what_cannot_change_in_place_is_refused_with_its_line() {
        let shrink = diff(
            &file(SHOP),
            "env.yaml",
            &[existing("shop", 5, Some("demo"))],
        )
        .unwrap_err();
        assert!(
            shrink[0].starts_with("env.yaml:3: cluster shop has 5 nodes"),
            "{shrink:?}"
        );
        let foreign = diff(&file(SHOP), "env.yaml", &[existing("shop", 3, None)]).unwrap_err();
        assert!(foreign[0].contains("created by hand"), "{foreign:?}");
        let mut other = existing("shop", 3, Some("demo"));
        other.template = "paas".into();
        let template = diff(&file(SHOP), "env.yaml", &[other]).unwrap_err();
        assert!(
            template[0].contains("cannot change template"),
            "{template:?}"
        );
    }
}
