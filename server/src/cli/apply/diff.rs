//! What `corral apply` must do: the environment file against the clusters that exist.
//!
//! A cluster belongs to an environment through a key in its config
//! ([`ENVIRONMENT_KEY`]), written when apply creates it. Listed and missing: create.
//! Listed and present: amend what grew or shrank (nodes, services) or changed (config
//! keys the file sets). Present in the environment but no longer listed: delete.
//!
//! Services a cluster runs that its entry's `services` no longer lists are removed only
//! when asked (`--prune-services`); otherwise they stay and the plan says so. What
//! Corral cannot change in place (another template or provider) is refused with the
//! line of the entry, before anything is done.

use std::collections::BTreeSet;

use api_types::{ClusterChangeRequest, ClusterState, ClusterView};
use domain::catalog::parameters;
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
        let services = cluster
            .layout
            .nodes
            .into_iter()
            .flat_map(|node| node.services)
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
        /// Services the entry no longer lists, removed (`--prune-services`).
        remove_services: Vec<String>,
        from_size: u32,
        to_size: u32,
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

impl Step {
    /// The API change requests of an amend, in the order apply submits them: services
    /// first (added, then removed), then nodes; config last (see [`Step::reconfigure`]).
    pub fn changes(&self) -> Vec<(&'static str, ClusterChangeRequest)> {
        let Step::Amend {
            add_services,
            remove_services,
            from_size,
            to_size,
            ..
        } = self
        else {
            return Vec::new();
        };
        let mut changes = Vec::new();
        if !add_services.is_empty() {
            changes.push((
                "add services",
                ClusterChangeRequest::AddServices {
                    services: add_services.clone(),
                },
            ));
        }
        if !remove_services.is_empty() {
            changes.push((
                "remove services",
                ClusterChangeRequest::RemoveServices {
                    services: remove_services.clone(),
                },
            ));
        }
        if to_size > from_size {
            changes.push((
                "add nodes",
                ClusterChangeRequest::AddNodes {
                    count: to_size - from_size,
                },
            ));
        }
        if to_size < from_size {
            changes.push((
                "remove nodes",
                ClusterChangeRequest::RemoveNodes {
                    count: Some(from_size - to_size),
                    nodes: None,
                },
            ));
        }
        changes
    }

    /// The reconfigure an amend ends with: changed config (services restarted around
    /// it), or new nodes, which change what macros list (a load balancer's backends).
    /// A removal needs none: its own plan configures what stays.
    pub fn reconfigure(&self) -> Option<ClusterChangeRequest> {
        let Step::Amend {
            config,
            from_size,
            to_size,
            ..
        } = self
        else {
            return None;
        };
        (!config.is_empty() || to_size > from_size).then(|| ClusterChangeRequest::Reconfigure {
            restart: !config.is_empty(),
            config: (!config.is_empty()).then(|| config.clone()),
        })
    }
}

/// Everything apply would do, and the clusters already as wanted.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub steps: Vec<Step>,
    pub unchanged: Vec<String>,
    /// Notes on what stays as it is although the file differs (services it no longer
    /// lists, kept without `--prune-services`).
    pub notes: Vec<String>,
}

/// The plan, or every reason it cannot be made (each naming its line). With
/// `prune_services`, services an entry no longer lists are removed from its cluster.
pub fn diff(
    file: &EnvFile,
    origin: &str,
    existing: &[Existing],
    prune_services: bool,
) -> Result<Plan, Vec<String>> {
    let environment = file.environment.as_str();
    let mut steps = Vec::new();
    let mut unchanged = Vec::new();
    let mut notes = Vec::new();
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
        let add_services: Vec<String> = spec
            .services
            .iter()
            .flatten()
            .map(|name| name.as_str().to_owned())
            .filter(|name| !current.services.contains(name))
            .collect();
        let mut config: Map<String, Value> = spec
            .config
            .iter()
            .filter(|(key, value)| current.config.get(*key) != Some(*value))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        let parameters = changed_parameters(&spec.parameters, &current.config);
        if !parameters.is_empty() {
            config.insert(parameters::CONFIG_KEY.to_owned(), Value::Object(parameters));
        }
        // Only an entry that lists services can stop listing one.
        let unlisted: Vec<String> = spec
            .services
            .as_ref()
            .map(|listed| {
                current
                    .services
                    .iter()
                    .filter(|name| !listed.iter().any(|listed| listed.as_str() == *name))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        let remove_services = if prune_services {
            unlisted
        } else {
            if !unlisted.is_empty() {
                notes.push(format!(
                    "{at} runs {}, which the file does not list: kept (apply with \
                     --prune-services to remove them)",
                    unlisted.join(", ")
                ));
            }
            Vec::new()
        };
        if add_services.is_empty()
            && remove_services.is_empty()
            && wanted == current.size
            && config.is_empty()
        {
            unchanged.push(current.name.clone());
            continue;
        }
        steps.push(Step::Amend {
            id: current.id.clone(),
            name: current.name.clone(),
            line: spec.line,
            add_services,
            remove_services,
            from_size: current.size,
            to_size: wanted,
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
        Ok(Plan {
            steps,
            unchanged,
            notes,
        })
    } else {
        Err(problems)
    }
}

/// The plan as people read it: one line per change.
/// The file's parameter values that differ from the cluster's, compared as text: the
/// file may write `3` or `"3"` for the integer the cluster holds, and only the server
/// knows the parameter's type. An unchanged file therefore asks for no reconfigure.
fn changed_parameters(
    given: &Map<String, Value>,
    config: &Map<String, Value>,
) -> Map<String, Value> {
    let current = parameters::values_in_config(config);
    given
        .iter()
        .filter(|(name, value)| {
            current.get(*name).map(parameters::value_text) != Some(parameters::value_text(value))
        })
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect()
}

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
                remove_services,
                from_size,
                to_size,
                config,
                ..
            } => {
                let mut what = Vec::new();
                if !add_services.is_empty() {
                    what.push(format!("add services {}", add_services.join(",")));
                }
                if !remove_services.is_empty() {
                    what.push(format!("remove services {}", remove_services.join(",")));
                }
                if to_size > from_size {
                    what.push(format!(
                        "add {} node(s) ({from_size} -> {to_size})",
                        to_size - from_size
                    ));
                }
                if to_size < from_size {
                    what.push(format!(
                        "remove {} node(s) ({from_size} -> {to_size})",
                        from_size - to_size
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
    lines.extend(plan.notes.iter().map(|note| format!("  ! {note}")));
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
        let plan = diff(&file(&on_docker), "env.yaml", &[], false).unwrap();
        assert_eq!(
            describe(&plan, "demo")[1],
            "  + create shop: template web-stack, 3 node(s) on docker"
        );
        let built = existing("shop", 3, Some("demo"));
        let problems = diff(&file(&on_docker), "env.yaml", &[built], false).unwrap_err();
        assert!(
            problems[0].contains("is built on provider local, not docker"),
            "{problems:?}"
        );
    }

    #[test]
    fn a_missing_cluster_is_created_with_its_environment() {
        let plan = diff(&file(SHOP), "env.yaml", &[], false).unwrap();
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
            false,
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
            false,
        )
        .unwrap();
        let [step @ Step::Amend { config, .. }] = plan.steps.as_slice() else {
            panic!("{plan:?}");
        };
        assert_eq!(
            step.changes(),
            [("add nodes", ClusterChangeRequest::AddNodes { count: 2 })]
        );
        assert!(matches!(
            step.reconfigure(),
            Some(ClusterChangeRequest::Reconfigure { restart: true, .. })
        ));
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
            false,
        )
        .unwrap();
        assert_eq!(plan.steps.len(), 1);
        assert!(matches!(&plan.steps[0], Step::Delete { name, .. } if name == "shop"));
    }

    #[test]
    fn a_smaller_size_removes_nodes_and_needs_no_extra_reconfigure() {
        let plan = diff(
            &file(SHOP),
            "env.yaml",
            &[existing("shop", 5, Some("demo"))],
            false,
        )
        .unwrap();
        let [step] = plan.steps.as_slice() else {
            panic!("{plan:?}");
        };
        assert_eq!(
            step.changes(),
            [(
                "remove nodes",
                ClusterChangeRequest::RemoveNodes {
                    count: Some(2),
                    nodes: None
                }
            )]
        );
        assert_eq!(step.reconfigure(), None);
        assert_eq!(
            describe(&plan, "demo")[1],
            "  ~ amend shop: remove 2 node(s) (5 -> 3)"
        );
    }

    #[test]
    fn unlisted_services_are_kept_with_a_note_unless_pruning() {
        let text = format!("{SHOP}    services: [base, kv, app, lb]\n");
        let mut shop = existing("shop", 3, Some("demo"));
        shop.services.insert("memcached".into());
        let kept = diff(&file(&text), "env.yaml", &[shop.clone()], false).unwrap();
        assert_eq!(kept.unchanged, ["shop"]);
        assert_eq!(
            describe(&kept, "demo")[1],
            "  ! env.yaml:3: cluster shop runs memcached, which the file does not list: kept \
             (apply with --prune-services to remove them)"
        );
        let pruned = diff(&file(&text), "env.yaml", &[shop], true).unwrap();
        assert_eq!(
            pruned.steps[0].changes(),
            [(
                "remove services",
                ClusterChangeRequest::RemoveServices {
                    services: vec!["memcached".into()]
                }
            )]
        );
        // Without a services list, nothing is unlisted.
        let mut shop = existing("shop", 3, Some("demo"));
        shop.services.insert("memcached".into());
        let unlisted = diff(&file(SHOP), "env.yaml", &[shop], true).unwrap();
        assert!(unlisted.steps.is_empty() && unlisted.notes.is_empty());
    }

    #[test]
    fn what_cannot_change_in_place_is_refused_with_its_line() {
        let foreign =
            diff(&file(SHOP), "env.yaml", &[existing("shop", 3, None)], false).unwrap_err();
        assert!(foreign[0].contains("created by hand"), "{foreign:?}");
        let mut other = existing("shop", 3, Some("demo"));
        other.template = "paas".into();
        let template = diff(&file(SHOP), "env.yaml", &[other], false).unwrap_err();
        assert!(
            template[0].contains("cannot change template"),
            "{template:?}"
        );
    }
}
