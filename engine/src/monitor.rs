//! The monitor (Coopr's fifth cluster operation): runs the health checks services
//! declare (`domain::catalog::health`) on every node of every active cluster, on a
//! schedule, and records what each found (`store::health`).
//!
//! Each worker pool runs one monitor loop. Every tick it
//! 1. reconciles the checks with the clusters: an active cluster whose row changed
//!    since this process last looked (a job ended, a new cluster) gets its checks
//!    listed anew from its layout and catalog snapshot, all due at once, so a restart
//!    shows green right after its job; checks of deleted clusters are dropped;
//! 2. claims the checks that are due (one conditional update each, so processes
//!    sharing the database never run one check twice at once) and runs them, a few at
//!    a time, on their nodes over SSH. A service that stops answering, or answers
//!    again, is told to the tenant's hooks (`health.down`, `health.up`) with the
//!    recorded result ([`Store::record_check`]).
//!
//! Clusters that are changing (creating, updating, deleting) or failed are not
//! checked: a job stopping services would only turn them red. Their last results stay.
//!
//! Every tick it also moves running catalog rollouts on ([`crate::rollout`]).
//!
//! Every few seconds the loop also heals ([`crate::heal`]): it replaces the dead nodes
//! of clusters whose template asks for it, and records what the providers say of the
//! nodes' machines.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use api_types::{ClusterState, ServiceHealth};
use domain::catalog::coopr::import_bundle;
use domain::catalog::health::{HealthCheck, Probe};
use domain::catalog::Catalog;
use domain::layout::Layout;
use domain::macros::{expand, expand_for_shell, shell_quote, MacroContext};
use futures::StreamExt as _;
use tokio::sync::{mpsc, watch};

use crate::execute::Executor;
use crate::node_scripts;
use crate::provider::NodeRecord;
use crate::queue::WorkerScope;
use crate::resources::ResourceKind;
use crate::ssh::{OutputChunk, RunOptions};
use crate::store::health::CheckKey;
use crate::store::{now_ms, Store, StoreError};

/// Checks run at once by one process.
const CHECKS_AT_ONCE: usize = 8;
/// Checks one tick claims at most.
const CLAIM_BATCH: i64 = 64;
/// Output of a failed check kept as its detail.
const DETAIL_BYTES: usize = 600;

/// Runs the monitor every `every` until `stopped` turns true.
pub(crate) async fn run(
    executor: Executor,
    scope: WorkerScope,
    every: Duration,
    mut stopped: watch::Receiver<bool>,
) {
    let mut seen: HashMap<String, i64> = HashMap::new();
    let mut healed_at: Option<std::time::Instant> = None;
    let mut heal_memory = crate::heal::Memory::default();
    while crate::worker::next_turn(every, &mut stopped).await {
        let reachability = executor.store().reachability();
        if let Err(error) = reconcile(executor.store(), &mut seen).await {
            reachability.failed("listing health checks", &error, error.is_unreachable());
            continue;
        }
        if let Err(error) = run_due(&executor, &scope).await {
            reachability.failed("running health checks", &error, error.is_unreachable());
        }
        if healed_at.is_none_or(|at| at.elapsed() >= crate::heal::EVERY) {
            crate::heal::heal_clusters(&executor, &scope, &mut heal_memory).await;
            healed_at = Some(std::time::Instant::now());
        }
        // Rollouts are moved on by the pool that serves every tenant (the server's),
        // not by dedicated pools, which would only race it for the same rows.
        if scope == WorkerScope::Shared {
            crate::rollout::advance_all(&executor).await;
        }
    }
}

/// Lists the checks of active clusters that changed since `seen` (cluster id → the
/// `updated_at_ms` last reconciled) and drops those of clusters that are gone.
pub async fn reconcile(store: &Store, seen: &mut HashMap<String, i64>) -> Result<(), StoreError> {
    let clusters = store.monitored_clusters().await?;
    let now = now_ms();
    for (cluster_id, state, updated_at_ms) in &clusters {
        if *state != ClusterState::Active || seen.get(cluster_id) == Some(updated_at_ms) {
            continue;
        }
        let cluster = store.cluster(cluster_id).await?;
        let wanted = match checked_services(&cluster.catalog_json, &cluster.layout_json) {
            Ok(wanted) => wanted,
            Err(problem) => {
                tracing::warn!(cluster = %cluster.name, %problem, "cannot list health checks");
                Vec::new()
            }
        };
        let changed = seen.insert(cluster_id.clone(), *updated_at_ms).is_some();
        store
            .set_cluster_checks(cluster_id, &wanted, changed, now)
            .await?;
    }
    // A set, not a scan per entry: with thousands of clusters that is millions of
    // comparisons every tick.
    let live: HashSet<String> = clusters.into_iter().map(|(id, _, _)| id).collect();
    seen.retain(|id, _| live.contains(id));
    store.drop_checks_except(&live).await?;
    Ok(())
}

/// (node, service) of every service on the layout that declares a valid check.
fn checked_services(catalog_json: &str, layout_json: &str) -> Result<Vec<(i64, String)>, String> {
    let catalog = import_bundle(catalog_json).map_err(|error| error.to_string())?;
    let layout: Layout = serde_json::from_str(layout_json).map_err(|error| error.to_string())?;
    let mut wanted = Vec::new();
    for node in &layout.nodes {
        for service in &node.services {
            let declared = catalog
                .service(service.as_str())
                .map(HealthCheck::of)
                .and_then(Result::ok)
                .flatten();
            if declared.is_some() {
                wanted.push((i64::from(node.number), service.to_string()));
            }
        }
    }
    Ok(wanted)
}

/// Claims the due checks of the clusters `scope` serves and runs them, a few at a time.
pub async fn run_due(executor: &Executor, scope: &WorkerScope) -> Result<usize, StoreError> {
    let store = executor.store();
    let now = now_ms();
    // Long enough for any check's timeout plus the SSH connection.
    let claimed_until = now + 120_000;
    let due = store
        .claim_due_checks(scope, now, claimed_until, CLAIM_BATCH)
        .await?;
    let count = due.len();
    futures::stream::iter(due)
        .map(|key| {
            async move {
                let (found, next_in) = check(executor, &key).await;
                let now = now_ms();
                let next = now + i64::try_from(next_in.as_millis()).unwrap_or(i64::MAX / 2);
                let (health, detail) = found;
                if let Err(error) = executor
                    .store()
                    .record_check(&key, health, detail.as_deref(), now, next)
                    .await
                {
                    tracing::warn!(%error, cluster = %key.cluster_id, "recording a health check failed");
                }
            }
        })
        .buffer_unordered(CHECKS_AT_ONCE)
        .collect::<Vec<()>>()
        .await;
    Ok(count)
}

pub(crate) type Found = (ServiceHealth, Option<String>);

/// Runs one check; returns what it found and when to check again.
async fn check(executor: &Executor, key: &CheckKey) -> (Found, Duration) {
    let retry = Duration::from_secs(domain::catalog::health::DEFAULT_INTERVAL_SECS);
    let prepared = match prepare(executor.store(), key).await {
        Ok(prepared) => prepared,
        Err(why) => return ((ServiceHealth::Unknown, Some(why)), retry),
    };
    let found = run_on_node(executor, &prepared).await;
    (found, prepared.check.interval)
}

/// A check ready to run: the node to reach and the command.
pub(crate) struct Prepared {
    check: HealthCheck,
    record: NodeRecord,
    command: String,
}

impl Prepared {
    /// `check` of `service` on the node `record`, macros expanded through `context`,
    /// run with `env` in the service's directory.
    pub(crate) fn new(
        check: HealthCheck,
        record: NodeRecord,
        env: &[(&str, &str)],
        service: &str,
        context: &MacroContext,
    ) -> Result<Self, String> {
        let body = probe_command(&check, context)?;
        let command = check_command(env, service, &body);
        Ok(Self {
            check,
            record,
            command,
        })
    }
}

async fn prepare(store: &Store, key: &CheckKey) -> Result<Prepared, String> {
    let cluster = store
        .cluster(&key.cluster_id)
        .await
        .map_err(|e| e.to_string())?;
    let catalog: Catalog = import_bundle(&cluster.catalog_json).map_err(|e| e.to_string())?;
    let service = catalog
        .service(&key.service)
        .ok_or_else(|| format!("service {} is not in the cluster's catalog", key.service))?;
    let check = HealthCheck::of(service)
        .map_err(|problems| format!("its health check is malformed: {problems:?}"))?
        .ok_or_else(|| "no health check is declared".to_owned())?;
    let layout: Layout = serde_json::from_str(&cluster.layout_json).map_err(|e| e.to_string())?;
    let nodes = store
        .list_nodes(&cluster.id)
        .await
        .map_err(|e| e.to_string())?;
    let row = nodes
        .iter()
        .find(|node| node.number == key.node_number)
        .ok_or_else(|| format!("node {} has no record", key.node_number))?;
    let record: NodeRecord = row
        .provider_json
        .as_deref()
        .ok_or_else(|| format!("node {} was never created", key.node_number))
        .and_then(|json| serde_json::from_str(json).map_err(|e| e.to_string()))?;
    let mut context = crate::execute::cluster_macro_context(&cluster, &layout, |number| {
        nodes
            .iter()
            .find(|node| node.number == i64::from(number))
            .and_then(|node| node.hostname.clone())
    });
    context.this_node = u32::try_from(key.node_number).ok();
    let env = [
        ("CORRAL_CLUSTER_ID", cluster.id.as_str()),
        ("CORRAL_CLUSTER_NAME", cluster.name.as_str()),
        ("CORRAL_SERVICE", key.service.as_str()),
        ("CORRAL_HOST", row.hostname.as_deref().unwrap_or_default()),
    ];
    Prepared::new(check, record, &env, &key.service, &context)
}

/// The step that runs a probe: the check's environment, then the probe in the
/// service's own directory, as its steps (a missing one is no failure here: the check
/// may not need it).
fn check_command(env: &[(&str, &str)], service: &str, probe: &str) -> String {
    let mut command = String::new();
    for (name, value) in env {
        command.push_str(&format!("export {name}={}\n", shell_quote(value)));
    }
    let dir = node_scripts::in_home(&node_scripts::service_dir(service));
    command.push_str(&format!("cd {dir} 2>/dev/null || cd\n{probe}\n"));
    command
}

/// The shell text of the probe, macros expanded as seen from the node.
fn probe_command(check: &HealthCheck, context: &MacroContext) -> Result<String, String> {
    let timeout = check.timeout.as_secs();
    match &check.probe {
        Probe::Http(url) => {
            let url = expand(url, context, "healthcheck.http").map_err(|e| e.to_string())?;
            Ok(node_scripts::HTTP_PROBE.with_args(&[&url, &timeout.to_string()]))
        }
        Probe::Run(text) => {
            expand_for_shell(text, context, "healthcheck.run").map_err(|e| e.to_string())
        }
        Probe::Script { script, args } => {
            let args =
                expand_for_shell(args, context, "healthcheck.args").map_err(|e| e.to_string())?;
            let script = node_scripts::resource_file(ResourceKind::Scripts.as_str(), script);
            Ok(format!("exec {} {args}", node_scripts::in_home(&script)))
        }
    }
}

/// Runs the probe over the node's SSH session: exit 0 is up; anything else, or no
/// session at all, is down with what the probe printed.
pub(crate) async fn run_on_node(executor: &Executor, prepared: &Prepared) -> Found {
    let target = match executor.ssh_target(&prepared.record).await {
        Ok(target) => target,
        Err(error) => {
            return (
                ServiceHealth::Down,
                Some(format!("cannot reach the node: {error}")),
            )
        }
    };
    let (sender, mut receiver) = mpsc::channel::<OutputChunk>(64);
    let options = RunOptions {
        // The probe has its own timeout; this one also covers connecting.
        timeout: prepared.check.timeout + Duration::from_secs(5),
        output: Some(sender),
    };
    let run = executor.ssh().run(&target, &prepared.command, options);
    let collect = async {
        let mut output = Vec::new();
        while let Some(chunk) = receiver.recv().await {
            output.extend_from_slice(&chunk.bytes);
            if output.len() > 4 * DETAIL_BYTES {
                output.drain(..output.len() - DETAIL_BYTES);
            }
        }
        output
    };
    let (outcome, output) = tokio::join!(run, collect);
    let tail = tail(&output);
    match outcome {
        Ok(outcome) if outcome.exit.success() => (ServiceHealth::Up, None),
        Ok(outcome) => (
            ServiceHealth::Down,
            Some(format!(
                "the check exited with code {}{}",
                outcome.exit.code(),
                if tail.is_empty() {
                    String::new()
                } else {
                    format!(": {tail}")
                }
            )),
        ),
        Err(error) => (
            ServiceHealth::Down,
            Some(format!("the check could not run: {error}")),
        ),
    }
}

/// The last few hundred bytes of output, as one trimmed line of text.
fn tail(output: &[u8]) -> String {
    let start = output.len().saturating_sub(DETAIL_BYTES);
    String::from_utf8_lossy(&output[start..])
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::node_scripts::assert_snapshot;

    fn check(probe: Probe) -> HealthCheck {
        HealthCheck {
            probe,
            interval: Duration::from_secs(30),
            timeout: Duration::from_secs(7),
        }
    }

    fn context() -> MacroContext {
        MacroContext {
            owner: "ann".to_owned(),
            nodes: Arc::from(Vec::new()),
            this_node: None,
            parameters: Default::default(),
        }
    }

    #[test]
    fn an_http_check_fetches_its_url_from_the_service_folder() {
        let probe = probe_command(
            &check(Probe::Http("http://127.0.0.1:8080/health?x='1'".to_owned())),
            &context(),
        )
        .unwrap();
        let env = [("CORRAL_SERVICE", "web"), ("CORRAL_HOST", "it's")];
        assert_snapshot("health_check_http", &check_command(&env, "web", &probe));
    }

    #[test]
    fn a_script_check_execs_the_resource_with_its_arguments() {
        let probe = probe_command(
            &check(Probe::Script {
                script: "check.sh".to_owned(),
                args: "--port 8080".to_owned(),
            }),
            &context(),
        )
        .unwrap();
        assert_snapshot("health_check_script", &check_command(&[], "db", &probe));
    }
}
