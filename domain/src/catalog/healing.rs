//! Healing: a template's promise that Corral replaces the nodes of its clusters that
//! die, and the decision of which to replace now.
//!
//! A Corral extension kept in the template's `administration` (so Coopr JSON
//! round-trips it unchanged):
//!
//! ```json
//! "administration": {"healing": {"enabled": true, "heal_after": "5m", "max_unhealthy": 40}}
//! ```
//!
//! A node is unhealthy when its provider reports it gone (container removed, instance
//! terminated, process dead), or when every service checked on it has been down for
//! `heal_after`. Corral replaces unhealthy nodes only while they are at most
//! `max_unhealthy` percent of the cluster: above that the cause is more likely the
//! network or Corral's own view than the nodes, and replacing everything would make it
//! worse (Cluster API's `maxUnhealthy`). A node whose services keep data is replaced
//! only when it is gone: while it exists, its data may still be there.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::Value;

use super::lease::Lease;
use super::template::ClusterTemplate;

/// The `administration` field holding the policy.
pub const FIELD: &str = "healing";
/// How long every checked service of a node must be down before it is replaced.
pub const DEFAULT_HEAL_AFTER: Duration = Duration::from_secs(5 * 60);
/// The largest share of a cluster's nodes replaced at once, in percent.
pub const DEFAULT_MAX_UNHEALTHY_PERCENT: u32 = 40;

/// A template's healing policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Healing {
    /// Whether clusters of the template heal unless their owner turns it off.
    pub enabled: bool,
    pub heal_after: Duration,
    pub max_unhealthy_percent: u32,
}

impl Default for Healing {
    fn default() -> Self {
        Self {
            enabled: false,
            heal_after: DEFAULT_HEAL_AFTER,
            max_unhealthy_percent: DEFAULT_MAX_UNHEALTHY_PERCENT,
        }
    }
}

impl Healing {
    /// The template's policy (the defaults, off, when it declares none), or each
    /// problem with its path under `healing`.
    pub fn of(template: &ClusterTemplate) -> Result<Healing, Vec<(String, String)>> {
        let declared = template
            .administration
            .as_ref()
            .and_then(|administration| administration.extra.get(FIELD));
        match declared {
            None => Ok(Healing::default()),
            Some(value) => parse(value),
        }
    }
}

impl Healing {
    /// The policy as it applies to one cluster: the owner's choice, when there is one,
    /// turns it on or off; the template's timings stay.
    #[must_use]
    pub fn for_cluster(self, owner_choice: Option<bool>) -> Healing {
        Healing {
            enabled: owner_choice.unwrap_or(self.enabled),
            ..self
        }
    }
}

fn parse(value: &Value) -> Result<Healing, Vec<(String, String)>> {
    let Some(fields) = value.as_object() else {
        return Err(vec![(
            String::new(),
            "write an object: {\"enabled\": true, \"heal_after\": \"5m\", \"max_unhealthy\": 40}"
                .to_owned(),
        )]);
    };
    let mut healing = Healing::default();
    let mut problems = Vec::new();
    for (key, field) in fields {
        match key.as_str() {
            "enabled" => match field.as_bool() {
                Some(enabled) => healing.enabled = enabled,
                None => problems.push((key.clone(), "must be true or false".to_owned())),
            },
            "heal_after" => {
                let lease = match field {
                    Value::Number(number) => number.as_i64().map(Lease::Millis),
                    Value::String(text) => Some(Lease::Text(text.clone())),
                    _ => None,
                };
                match lease.map(|lease| lease.duration()) {
                    Some(Ok(after)) if after.millis() >= 1_000 => {
                        healing.heal_after = Duration::from_millis(after.millis());
                    }
                    Some(Ok(_)) => problems.push((key.clone(), "must be at least 1s".to_owned())),
                    Some(Err(error)) => problems.push((key.clone(), error.to_string())),
                    None => problems.push((
                        key.clone(),
                        "write a duration: milliseconds or <number><s|m|h|d>".to_owned(),
                    )),
                }
            }
            "max_unhealthy" => match field.as_u64().filter(|percent| (1..=100).contains(percent)) {
                Some(percent) => healing.max_unhealthy_percent = percent as u32,
                None => {
                    problems.push((key.clone(), "must be a percentage from 1 to 100".to_owned()))
                }
            },
            _ => problems.push((
                key.clone(),
                "unknown field (enabled, heal_after, max_unhealthy)".to_owned(),
            )),
        }
    }
    if problems.is_empty() {
        Ok(healing)
    } else {
        Err(problems)
    }
}

/// What the monitor knows of one node of a cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeCondition {
    pub number: u32,
    /// Its provider reports it gone (container removed, instance terminated).
    pub gone: bool,
    /// How long every service checked on it has been down; `None` when one is up,
    /// unknown yet, or none is checked.
    pub all_down_for: Option<Duration>,
    /// It runs a service that keeps data.
    pub stateful: bool,
}

impl NodeCondition {
    fn unhealthy(&self, policy: &Healing) -> bool {
        self.gone
            || self
                .all_down_for
                .is_some_and(|down| down >= policy.heal_after)
    }
}

/// What to do about a cluster's nodes now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HealDecision {
    /// Nothing to replace.
    Healthy,
    /// Replace these nodes (the stateful ones among them are gone, their data with
    /// them, so the replacement accepts its loss).
    Replace(BTreeSet<u32>),
    /// More nodes are unhealthy than the policy lets Corral replace at once.
    TooMany {
        unhealthy: BTreeSet<u32>,
        size: usize,
        max_unhealthy_percent: u32,
    },
    /// Unhealthy nodes whose services keep data and that still exist: left for a
    /// person (replacing them would throw the data away).
    KeepsData(BTreeSet<u32>),
}

impl HealDecision {
    /// Why nothing is replaced, in a sentence for the cluster page and its events;
    /// `None` when the decision is to replace or there is nothing to say.
    pub fn reason(&self) -> Option<String> {
        let list = |nodes: &BTreeSet<u32>| {
            nodes
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            HealDecision::Healthy | HealDecision::Replace(_) => None,
            HealDecision::TooMany {
                unhealthy,
                size,
                max_unhealthy_percent,
            } => Some(format!(
                "{} of {size} nodes are unhealthy ({}), more than the {max_unhealthy_percent}% \
                 healing replaces at once: Corral replaces nothing, as so many failing together \
                 points at the network or the provider rather than the nodes; look at them, \
                 then replace nodes by hand (replace-nodes)",
                unhealthy.len(),
                list(unhealthy)
            )),
            HealDecision::KeepsData(nodes) => Some(format!(
                "nodes {} are down but still there, and their services keep data: Corral does \
                 not replace them by itself; replace them by hand with force to accept the loss",
                list(nodes)
            )),
        }
    }
}

/// Which of a cluster's `nodes` to replace under `policy` (see the module docs).
pub fn decide(policy: &Healing, nodes: &[NodeCondition]) -> HealDecision {
    let unhealthy: Vec<&NodeCondition> =
        nodes.iter().filter(|node| node.unhealthy(policy)).collect();
    if unhealthy.is_empty() {
        return HealDecision::Healthy;
    }
    let numbers: BTreeSet<u32> = unhealthy.iter().map(|node| node.number).collect();
    let size = nodes.len();
    if numbers.len() * 100 > policy.max_unhealthy_percent as usize * size {
        return HealDecision::TooMany {
            unhealthy: numbers,
            size,
            max_unhealthy_percent: policy.max_unhealthy_percent,
        };
    }
    let (keeping_data, replaceable): (Vec<&NodeCondition>, Vec<&NodeCondition>) = unhealthy
        .into_iter()
        .partition(|node| node.stateful && !node.gone);
    if replaceable.is_empty() {
        return HealDecision::KeepsData(keeping_data.iter().map(|node| node.number).collect());
    }
    HealDecision::Replace(replaceable.iter().map(|node| node.number).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(number: u32, gone: bool, down_secs: Option<u64>, stateful: bool) -> NodeCondition {
        NodeCondition {
            number,
            gone,
            all_down_for: down_secs.map(Duration::from_secs),
            stateful,
        }
    }

    fn policy() -> Healing {
        Healing {
            enabled: true,
            heal_after: Duration::from_secs(300),
            max_unhealthy_percent: 40,
        }
    }

    #[test]
    fn decisions_by_table() {
        let set = |numbers: &[u32]| numbers.iter().copied().collect::<BTreeSet<u32>>();
        let cases: Vec<(&str, Vec<NodeCondition>, HealDecision)> = vec![
            (
                "all well",
                vec![
                    node(1000, false, None, false),
                    node(1001, false, None, false),
                ],
                HealDecision::Healthy,
            ),
            (
                "down, but not for long enough",
                vec![
                    node(1000, false, Some(299), false),
                    node(1001, false, None, false),
                ],
                HealDecision::Healthy,
            ),
            (
                "gone: replaced at once",
                vec![
                    node(1000, false, None, false),
                    node(1001, true, None, false),
                    node(1002, false, None, false),
                ],
                HealDecision::Replace(set(&[1001])),
            ),
            (
                "down for heal_after: replaced",
                vec![
                    node(1000, false, Some(300), false),
                    node(1001, false, None, false),
                    node(1002, false, None, false),
                ],
                HealDecision::Replace(set(&[1000])),
            ),
            (
                "2 of 4 is above 40%",
                vec![
                    node(1000, true, None, false),
                    node(1001, true, None, false),
                    node(1002, false, None, false),
                    node(1003, false, None, false),
                ],
                HealDecision::TooMany {
                    unhealthy: set(&[1000, 1001]),
                    size: 4,
                    max_unhealthy_percent: 40,
                },
            ),
            (
                "2 of 5 is 40%: allowed",
                vec![
                    node(1000, true, None, false),
                    node(1001, true, None, false),
                    node(1002, false, None, false),
                    node(1003, false, None, false),
                    node(1004, false, None, false),
                ],
                HealDecision::Replace(set(&[1000, 1001])),
            ),
            (
                "a stateful node that is gone is replaced",
                vec![
                    node(1000, true, None, true),
                    node(1001, false, None, false),
                    node(1002, false, None, false),
                ],
                HealDecision::Replace(set(&[1000])),
            ),
            (
                "a stateful node still there is left",
                vec![
                    node(1000, false, Some(900), true),
                    node(1001, false, None, false),
                    node(1002, false, None, false),
                ],
                HealDecision::KeepsData(set(&[1000])),
            ),
        ];
        for (name, nodes, expected) in cases {
            assert_eq!(decide(&policy(), &nodes), expected, "{name}");
        }
    }

    #[test]
    fn the_owner_turns_healing_on_or_off_keeping_the_templates_timings() {
        let template = Healing {
            heal_after: Duration::from_secs(30),
            ..Healing::default()
        };
        for (choice, enabled) in [(None, false), (Some(true), true), (Some(false), false)] {
            let policy = template.for_cluster(choice);
            assert_eq!(policy.enabled, enabled, "{choice:?}");
            assert_eq!(policy.heal_after, Duration::from_secs(30));
        }
        let on = Healing {
            enabled: true,
            ..Healing::default()
        };
        assert!(!on.for_cluster(Some(false)).enabled);
    }

    #[test]
    fn too_many_says_why_and_what_to_do() {
        let reason = decide(
            &policy(),
            &[
                node(1000, true, None, false),
                node(1001, true, None, false),
                node(1002, false, None, false),
            ],
        )
        .reason()
        .unwrap();
        assert!(
            reason.starts_with("2 of 3 nodes are unhealthy (1000, 1001), more than the 40%"),
            "{reason}"
        );
        assert!(reason.contains("replace-nodes"), "{reason}");
    }

    #[test]
    fn the_policy_is_read_with_defaults_and_every_problem_named() {
        let read = |value: Value| parse(&value);
        assert_eq!(
            read(serde_json::json!({"enabled": true})).unwrap(),
            Healing {
                enabled: true,
                ..Healing::default()
            }
        );
        assert_eq!(
            read(serde_json::json!({"enabled": true, "heal_after": "30s", "max_unhealthy": 50}))
                .unwrap(),
            Healing {
                enabled: true,
                heal_after: Duration::from_secs(30),
                max_unhealthy_percent: 50,
            }
        );
        let problems = read(serde_json::json!({
            "enabled": "yes", "heal_after": "soon", "max_unhealthy": 0, "when": 1
        }))
        .unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|(path, _)| path.as_str()).collect();
        assert_eq!(paths, ["enabled", "heal_after", "max_unhealthy", "when"]);
        assert!(read(serde_json::json!(true)).is_err());
    }
}
