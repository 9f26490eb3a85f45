//! Healing: the monitor's second duty. Every few seconds, for each active cluster whose
//! template turns healing on (`administration.healing`, see
//! [`domain::catalog::healing`]), it asks the provider whether each node's machine is
//! still there and reads how long each node's checked services have been down, lets
//! [`decide`] choose, and submits a `replace-nodes` job for the nodes to replace.
//!
//! The cluster's owner (or a tenant admin) may turn healing on or off for one cluster
//! (`corral cluster heal ID on|off|template`); the template's timings stay.
//!
//! A cluster runs one job at a time, so there is never more than one heal job per
//! cluster, also with several servers on one database (the loser's submit is refused
//! and ignored). What healing did, or why it declined (too many nodes unhealthy at once,
//! nodes that keep data), is the cluster's heal note, shown on its page, and each heal
//! is in the job list and the audit log (`cluster.heal`, by "corral (healing)"). Its
//! success tells the tenant's hooks `node.replaced`, as any replacement's does (see
//! `store::hooks::record_node_replaced`).
//!
//! What each provider answers is kept on the node's row when it changes
//! (`Store::record_presence`), so `corral cluster show` and the API give each node's
//! machine beside its health. Clusters that do not heal are asked too, less often: at
//! most [`PRESENCE_CLUSTERS_PER_TICK`] of them per tick, the longest unasked first, none
//! twice within [`PRESENCE_EVERY`].
//!
//! A pool asks only about the clusters of the tenants it serves: a provider may be a
//! tenant's plugin run with that tenant's credentials, which a pool dedicated to other
//! tenants (or the shared pool, for a tenant served by dedicated workers only) must
//! never run.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use api_types::{AuditAction, ClusterState, ServiceHealth};
use domain::catalog::coopr::import_bundle;
use domain::catalog::healing::{decide, HealDecision, Healing, NodeCondition};
use domain::layout::Layout;
use domain::names::TemplateName;

use crate::execute::Executor;
use crate::operations::{submit_change, ClusterChange, OperationError};
use crate::provider::{NodePresence, NodeRecord};
use crate::queue::{SubmitOptions, WorkerScope};
use crate::store::audit::AuditEntry;
use crate::store::clusters::nodes::Node;
use crate::store::clusters::Cluster;
use crate::store::{now_ms, Store};

/// Who the audit log names for a heal.
pub const HEALER: &str = "corral (healing)";
/// How often a process looks at its clusters' nodes.
pub const EVERY: Duration = Duration::from_secs(5);

/// How often a cluster that does not heal has its nodes' machines looked at.
pub const PRESENCE_EVERY: Duration = Duration::from_secs(30);
/// Clusters that do not heal asked about per tick: bounds the provider calls a tick
/// makes when there are thousands of clusters (each is then asked less often).
pub const PRESENCE_CLUSTERS_PER_TICK: usize = 16;
/// Provider calls in flight at once for one cluster.
const PRESENCE_CALLS_AT_ONCE: usize = 8;

/// What a process remembers between ticks: each cluster's template policy as of the
/// cluster row's `updated_at_ms` (a tick reads a cluster's catalog snapshot only when
/// the cluster changed, so clusters that do not heal cost one row of a listing), and
/// when it last asked about each cluster's machines.
#[derive(Debug, Default)]
pub struct Memory {
    policies: HashMap<String, (i64, Healing)>,
    asked_at_ms: HashMap<String, i64>,
}

/// Looks at every active cluster of the tenants `scope` serves once, replacing the
/// nodes its policy says to, and asks about the machines of some that do not heal.
/// Returns how many heal jobs it submitted; a cluster that cannot be read is logged and
/// passed over.
pub async fn heal_clusters(executor: &Executor, scope: &WorkerScope, memory: &mut Memory) -> usize {
    let store = executor.store();
    let listed = async {
        Ok::<_, crate::store::StoreError>((
            store.served_clusters(scope).await?,
            store.healing_choices().await?,
        ))
    };
    let (clusters, choices) = match listed.await {
        Ok(listed) => listed,
        Err(error) => {
            tracing::warn!(%error, "healing: listing clusters failed");
            return 0;
        }
    };
    // A set, not a scan per entry: with thousands of clusters that is millions of
    // comparisons every tick.
    let known: HashSet<&str> = clusters.iter().map(|(id, _, _)| id.as_str()).collect();
    memory.policies.retain(|id, _| known.contains(id.as_str()));
    memory
        .asked_at_ms
        .retain(|id, _| known.contains(id.as_str()));
    let mut submitted = 0;
    let mut not_healing = Vec::new();
    for (cluster_id, state, updated_at_ms) in clusters {
        if state != ClusterState::Active {
            continue;
        }
        let template_policy = match memory.policies.get(&cluster_id) {
            Some((seen, policy)) if *seen == updated_at_ms => *policy,
            _ => {
                let read = store
                    .cluster(&cluster_id)
                    .await
                    .map_err(|e| e.to_string())
                    .and_then(|cluster| policy(&cluster));
                // An unreadable snapshot heals nothing; the cluster's own jobs say why.
                let policy = read.unwrap_or_default();
                memory
                    .policies
                    .insert(cluster_id.clone(), (updated_at_ms, policy));
                policy
            }
        };
        let policy = template_policy.for_cluster(choices.get(&cluster_id).copied());
        if !policy.enabled {
            not_healing.push(cluster_id);
            continue;
        }
        memory.asked_at_ms.insert(cluster_id.clone(), now_ms());
        match heal_cluster(executor, &cluster_id, &policy).await {
            Ok(true) => submitted += 1,
            Ok(false) => {}
            Err(problem) => tracing::warn!(cluster = %cluster_id, %problem, "healing failed"),
        }
    }
    let now = now_ms();
    for cluster_id in due_for_presence(not_healing, &memory.asked_at_ms, now) {
        memory.asked_at_ms.insert(cluster_id.clone(), now);
        let asked = match store.list_nodes(&cluster_id).await {
            Ok(rows) => ask_presence(executor, &cluster_id, &rows).await.map(|_| ()),
            Err(error) => Err(error.to_string()),
        };
        if let Err(problem) = asked {
            tracing::warn!(cluster = %cluster_id, %problem, "asking about nodes' machines failed");
        }
    }
    submitted
}

/// Of `clusters`, those to ask about now: never asked, or not within
/// [`PRESENCE_EVERY`]; the longest unasked first, at most
/// [`PRESENCE_CLUSTERS_PER_TICK`].
fn due_for_presence(
    clusters: Vec<String>,
    asked_at_ms: &HashMap<String, i64>,
    now_ms: i64,
) -> Vec<String> {
    let every = i64::try_from(PRESENCE_EVERY.as_millis()).unwrap_or(i64::MAX);
    let mut due: Vec<(Option<i64>, String)> = clusters
        .into_iter()
        .map(|id| (asked_at_ms.get(&id).copied(), id))
        .filter(|(asked, _)| asked.is_none_or(|at| now_ms - at >= every))
        .collect();
    // `None` (never asked) sorts first.
    due.sort();
    due.into_iter()
        .take(PRESENCE_CLUSTERS_PER_TICK)
        .map(|(_, id)| id)
        .collect()
}

/// Decides about one cluster under `policy` and acts; `true` when it submitted a heal
/// job.
async fn heal_cluster(
    executor: &Executor,
    cluster_id: &str,
    policy: &Healing,
) -> Result<bool, String> {
    let store = executor.store();
    let cluster = store.cluster(cluster_id).await.map_err(|e| e.to_string())?;
    let layout: Layout = serde_json::from_str(&cluster.layout_json).map_err(|e| e.to_string())?;
    let conditions = conditions(executor, &cluster, &layout, now_ms()).await?;
    let decision = decide(policy, &conditions);
    let now = now_ms();
    match decision {
        HealDecision::Healthy => Ok(false),
        HealDecision::Replace(nodes) => {
            let change = ClusterChange::ReplaceNodes {
                nodes: nodes.clone(),
                accept_data_loss: true,
            };
            let job = match submit_change(
                executor.queue(),
                cluster_id,
                &change,
                None,
                SubmitOptions::default(),
                now,
            )
            .await
            {
                Ok(job) => job,
                // Another job (or another server's heal) got there first.
                Err(OperationError::Busy { .. }) => return Ok(false),
                Err(error) => {
                    note(
                        store,
                        &cluster,
                        &format!("healing could not replace {}: {error}", list(&nodes)),
                        now,
                    )
                    .await;
                    return Err(error.to_string());
                }
            };
            let why: Vec<String> = conditions
                .iter()
                .filter(|node| nodes.contains(&node.number))
                .map(|node| {
                    if node.gone {
                        format!("{} is gone", node.number)
                    } else {
                        format!("{}'s services are down", node.number)
                    }
                })
                .collect();
            note(
                store,
                &cluster,
                &format!(
                    "replacing node {} ({}): job {job}",
                    list(&nodes),
                    why.join(", ")
                ),
                now,
            )
            .await;
            let entry = AuditEntry {
                id: uuid::Uuid::new_v4().to_string(),
                tenant_id: cluster.tenant_id.clone(),
                actor_id: None,
                actor_name: HEALER.to_owned(),
                action: AuditAction::ClusterHeal,
                target_kind: "cluster".to_owned(),
                target: cluster.id.clone(),
                address: None,
                before_json: None,
                after_json: serde_json::to_string(&serde_json::json!({
                    "job": job, "nodes": nodes, "why": why,
                }))
                .ok(),
                at_ms: now,
            };
            if let Err(error) = store.append_audit(&entry).await {
                tracing::warn!(%error, "healing: recording the audit entry failed");
            }
            tracing::info!(cluster = %cluster.name, nodes = %list(&nodes), %job, "healing");
            Ok(true)
        }
        declined => {
            if let Some(reason) = declined.reason() {
                note(store, &cluster, &reason, now).await;
            }
            Ok(false)
        }
    }
}

/// The healing policy of the cluster's template.
pub(crate) fn policy(cluster: &Cluster) -> Result<Healing, String> {
    let catalog = import_bundle(&cluster.catalog_json).map_err(|e| e.to_string())?;
    let name = TemplateName::parse(cluster.template_name.clone()).map_err(|e| e.to_string())?;
    let template = catalog
        .resolved_template(&name)
        .map_err(|error| error.message())?;
    Healing::of(&template).map_err(|problems| format!("{problems:?}"))
}

/// What the provider and the health checks say of each node of `layout`.
async fn conditions(
    executor: &Executor,
    cluster: &Cluster,
    layout: &Layout,
    now_ms: i64,
) -> Result<Vec<NodeCondition>, String> {
    let store = executor.store();
    let catalog = import_bundle(&cluster.catalog_json).map_err(|e| e.to_string())?;
    let rows = store
        .list_nodes(&cluster.id)
        .await
        .map_err(|e| e.to_string())?;
    let mut checks: BTreeMap<i64, Vec<(ServiceHealth, Option<i64>)>> = BTreeMap::new();
    for row in store
        .cluster_health(&cluster.id)
        .await
        .map_err(|e| e.to_string())?
    {
        checks
            .entry(row.node_number)
            .or_default()
            .push((row.health, row.down_since_ms));
    }
    let presence = ask_presence(executor, &cluster.id, &rows).await?;
    let mut conditions = Vec::new();
    for node in &layout.nodes {
        let gone = presence.get(&i64::from(node.number)) == Some(&NodePresence::Gone);
        let all_down_for = checks
            .get(&i64::from(node.number))
            .and_then(|services| all_down_since(services))
            .map(|since| Duration::from_millis(u64::try_from(now_ms - since).unwrap_or(0)));
        conditions.push(NodeCondition {
            number: node.number,
            gone,
            all_down_for,
            stateful: node.services.iter().any(|service| {
                catalog
                    .service(service.as_str())
                    .is_some_and(|service| service.is_stateful())
            }),
        });
    }
    Ok(conditions)
}

/// When the last of a node's checked services went down, if all of them are down.
fn all_down_since(services: &[(ServiceHealth, Option<i64>)]) -> Option<i64> {
    if services.is_empty() {
        return None;
    }
    services
        .iter()
        .map(|(health, since)| (*health == ServiceHealth::Down).then_some(*since).flatten())
        .collect::<Option<Vec<i64>>>()
        .and_then(|since| since.into_iter().max())
}

/// Asks each node's provider about its machine, a few at a time, and records the
/// answers that changed (in one write); each node's answer by number. A node without
/// a provider record yet (its create has not got that far) is not asked.
async fn ask_presence(
    executor: &Executor,
    cluster_id: &str,
    rows: &[Node],
) -> Result<HashMap<i64, NodePresence>, String> {
    let recorded: Vec<(&Node, NodeRecord)> = rows
        .iter()
        .filter_map(|row| {
            let record = serde_json::from_str(row.provider_json.as_deref()?).ok()?;
            Some((row, record))
        })
        .collect();
    let mut asked = Vec::with_capacity(recorded.len());
    for batch in recorded.chunks(PRESENCE_CALLS_AT_ONCE) {
        // A plain list of futures, not a closure per node: the monitor's future must
        // stay `Send` for every lifetime, which closures returning borrowing futures
        // defeat.
        let mut calls = Vec::with_capacity(batch.len());
        for (_, record) in batch {
            calls.push(presence(executor, record));
        }
        let answers = futures::future::join_all(calls).await;
        asked.extend(batch.iter().map(|(row, _)| *row).zip(answers));
    }
    // Compared here first: a steady cluster takes no write turn at all.
    let changed: Vec<(i64, NodePresence)> = asked
        .iter()
        .filter(|(row, presence)| row.presence != Some(*presence))
        .map(|(row, presence)| (row.number, *presence))
        .collect();
    executor
        .store()
        .record_presence(cluster_id, &changed, now_ms())
        .await
        .map_err(|e| e.to_string())?;
    let answers = asked
        .into_iter()
        .map(|(row, presence)| (row.number, presence))
        .collect();
    Ok(answers)
}

/// The provider's answer; a provider that is not here or fails counts as not knowing.
async fn presence(executor: &Executor, record: &NodeRecord) -> NodePresence {
    let Some(provider) = executor.providers().get(&record.provider) else {
        return NodePresence::Unknown;
    };
    match provider.presence(record).await {
        Ok(presence) => presence,
        Err(error) => {
            tracing::warn!(node = %record.id, %error, "asking the provider about a node failed");
            NodePresence::Unknown
        }
    }
}

async fn note(store: &Store, cluster: &Cluster, text: &str, now_ms: i64) {
    if let Err(error) = store.set_heal_note(&cluster.id, text, now_ms).await {
        tracing::warn!(cluster = %cluster.name, %error, "healing: keeping its note failed");
    }
}

fn list(nodes: &std::collections::BTreeSet<u32>) -> String {
    nodes
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clusters_are_asked_about_never_asked_first_then_longest_unasked_at_most_a_tick_s_worth() {
        let every = i64::try_from(PRESENCE_EVERY.as_millis()).unwrap();
        let now = 10 * every;
        let asked: HashMap<String, i64> = [
            ("recent".to_owned(), now - every + 1),
            ("old".to_owned(), now - 3 * every),
            ("older".to_owned(), now - 5 * every),
            ("just-due".to_owned(), now - every),
        ]
        .into();
        let clusters = ["recent", "old", "fresh", "older", "just-due"].map(str::to_owned);
        assert_eq!(
            due_for_presence(clusters.to_vec(), &asked, now),
            ["fresh", "older", "old", "just-due"]
        );
        let many: Vec<String> = (0..PRESENCE_CLUSTERS_PER_TICK + 5)
            .map(|n| format!("c{n:02}"))
            .collect();
        let due = due_for_presence(many.clone(), &HashMap::new(), now);
        assert_eq!(due, many[..PRESENCE_CLUSTERS_PER_TICK]);
    }

    #[test]
    fn a_node_is_all_down_since_its_last_service_went_down() {
        use ServiceHealth::{Down, Up};
        assert_eq!(all_down_since(&[]), None);
        assert_eq!(all_down_since(&[(Down, Some(5)), (Up, None)]), None);
        assert_eq!(all_down_since(&[(Down, Some(5)), (Down, Some(9))]), Some(9));
        // Down without a time (recorded before the column existed): not yet counted.
        assert_eq!(all_down_since(&[(Down, None)]), None);
    }
}
