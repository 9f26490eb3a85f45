//! Provider checks run by the pool: the requests the API stores for `corral provider
//! test` (see [`crate::store::provider_tests`]), of the tenants this pool serves.
//!
//! A check runs the tenant's provider with the tenant's credentials and may make a
//! machine, so it runs where the tenant's tasks run: a shared pool takes the requests
//! of tenants shared pools serve, a pool started for tenants (`corral worker --tenant`)
//! takes theirs, and a tenant served by dedicated workers only never has its check run
//! by a shared process. Each pool runs a few at a time; the report, with every form of
//! the tenant's credentials blotted out, goes back into the request's row, where the
//! API that waits for it reads it.
//!
//! The loop also removes requests older than a day, whatever their state.

use std::sync::Arc;
use std::time::{Duration, Instant};

use api_types::{PhaseOutcome, ProviderTestPhase, ProviderTestReport, ProviderTestRequest};
use domain::names::{HardwareTypeName, ImageTypeName};
use tokio::sync::{watch, Notify};
use tokio::task::JoinSet;

use crate::execute::{node_spec, provider_settings, Executor};
use crate::provider::{NodeProvider, NodeSpec};
use crate::queue::WorkerScope;
use crate::store::now_ms;
use crate::store::provider_tests::ProviderTestRow;

/// Checks one pool runs at once: a check with a machine takes minutes, and a tenant
/// admin asking for many must not take every slot of the process for long.
const CHECKS_AT_ONCE: usize = 4;
/// How long a check's new machine may take to accept SSH.
const CONFIRM_TIMEOUT: Duration = Duration::from_secs(120);
/// How often the loop removes old requests.
const CLEANUP_EVERY: Duration = Duration::from_secs(600);
/// How long a request is kept after it was asked for.
const KEEP_MS: i64 = 24 * 3600 * 1000;

/// Claims and runs the provider checks of the tenants `scope` serves, as `worker_id`,
/// looking every `every` and whenever `wake` is notified, until `stopped` turns true;
/// then waits for the checks still running (a made machine is always deleted).
pub(super) async fn run(
    executor: Executor,
    scope: WorkerScope,
    worker_id: String,
    every: Duration,
    wake: Arc<Notify>,
    mut stopped: watch::Receiver<bool>,
) {
    let store = executor.store().clone();
    let mut running = JoinSet::new();
    let mut cleaned_at: Option<Instant> = None;
    while !*stopped.borrow() {
        // Registered before the claim, so a request stored during it is not missed.
        let woken = wake.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        if cleaned_at.is_none_or(|at| at.elapsed() >= CLEANUP_EVERY) {
            cleaned_at = Some(Instant::now());
            match store.delete_provider_tests_before(now_ms() - KEEP_MS).await {
                Ok(0) => {}
                Ok(removed) => tracing::info!(removed, "old provider test requests removed"),
                Err(error) => store.reachability().failed(
                    "removing old provider tests",
                    &error,
                    error.is_unreachable(),
                ),
            }
        }
        while running.try_join_next().is_some() {}
        while running.len() < CHECKS_AT_ONCE {
            match store
                .claim_provider_test(&scope, &worker_id, now_ms())
                .await
            {
                Ok(Some(request)) => {
                    tracing::info!(
                        request = %request.id,
                        tenant = %request.tenant_id,
                        provider = %request.provider,
                        worker = %worker_id,
                        "running a provider test"
                    );
                    running.spawn(run_one(executor.clone(), worker_id.clone(), request));
                }
                Ok(None) => break,
                Err(error) => {
                    store.reachability().failed(
                        "claiming a provider test",
                        &error,
                        error.is_unreachable(),
                    );
                    break;
                }
            }
        }
        tokio::select! {
            () = &mut woken => {}
            () = tokio::time::sleep(every) => {}
            changed = stopped.changed() => {
                if changed.is_err() {
                    break;
                }
            }
        }
    }
    while running.join_next().await.is_some() {}
}

/// Runs one claimed request and records its report.
async fn run_one(executor: Executor, worker_id: String, request: ProviderTestRow) {
    let report = check(&executor, &request).await;
    let recorded = match serde_json::to_string(&report) {
        Ok(json) => {
            executor
                .store()
                .finish_provider_test(&request.id, &worker_id, &json, now_ms())
                .await
        }
        Err(error) => {
            tracing::error!(request = %request.id, %error, "a provider test report did not serialise");
            return;
        }
    };
    match recorded {
        Ok(true) => {}
        Ok(false) => {
            tracing::warn!(request = %request.id, "the provider test request was gone before its report")
        }
        Err(error) => {
            tracing::error!(request = %request.id, %error, "recording a provider test report failed")
        }
    }
}

/// Checks the request's provider as its tenant would use it: its credentials and
/// endpoint, then (with `create`) one machine made, reached over SSH where the provider
/// connects to its machines, and deleted. Each phase is timed; a failed phase skips the
/// ones that need it, but a made machine is always deleted. What a plugin or a cloud
/// said is blotted out of every phase (the credentials in every escaped form).
async fn check(executor: &Executor, request: &ProviderTestRow) -> ProviderTestReport {
    let store = executor.store();
    let (tenant_id, provider) = (request.tenant_id.as_str(), request.provider.as_str());
    let mut report = ProviderTestReport {
        provider: provider.to_owned(),
        providertype: String::new(),
        passed: false,
        phases: Vec::new(),
    };
    let asked: ProviderTestRequest = match serde_json::from_str(&request.request_json) {
        Ok(asked) => asked,
        Err(error) => {
            report.phases.push(failed(
                "check",
                format!("the request could not be read: {error}"),
                Duration::ZERO,
            ));
            return report;
        }
    };
    let catalog = match crate::catalog::load(store, tenant_id).await {
        Ok(catalog) => catalog,
        Err(error) => {
            tracing::error!(request = %request.id, %error, "loading the catalog of a provider test failed");
            report.phases.push(failed(
                "check",
                "the worker could not load the tenant's catalog (its log says why)".to_owned(),
                Duration::ZERO,
            ));
            return report;
        }
    };
    let Some(providertype) = catalog
        .provider(provider)
        .map(|found| found.providertype.clone())
    else {
        report.phases.push(failed(
            "check",
            format!("provider {provider:?} is no longer in the tenant's catalog"),
            Duration::ZERO,
        ));
        return report;
    };
    report.providertype.clone_from(&providertype);
    // Asked again here, where it runs: the tenant's provider types may have changed
    // since the request was stored.
    if let Err(error) =
        crate::operations::check_provider_allowed(store, tenant_id, &catalog, provider).await
    {
        report
            .phases
            .push(failed("check", error.to_string(), Duration::ZERO));
        return report;
    }
    let mut phases = Vec::new();
    match executor.providers().require(&providertype) {
        Err(error) => phases.push(failed("check", error.to_string(), Duration::ZERO)),
        Ok(plugin) => {
            let settings = provider_settings(&catalog, provider);
            let started = Instant::now();
            let checked = plugin.check(tenant_id, &settings).await;
            let passed = checked.is_ok();
            phases.push(phase("check", checked.map_err(|e| e.to_string()), started));
            if asked.create {
                match machine_types(&asked) {
                    Err(why) => {
                        phases.push(failed("create", why, Duration::ZERO));
                        phases.push(skipped("ssh", "no machine was made"));
                        phases.push(skipped("delete", "no machine was made"));
                    }
                    Ok(_) if !passed => {
                        for name in ["create", "ssh", "delete"] {
                            phases.push(skipped(name, "the check failed"));
                        }
                    }
                    Ok((hardware, image)) => {
                        let cluster_id = test_cluster_id();
                        let base = NodeSpec {
                            tenant_id: Some(tenant_id.to_owned()),
                            cluster_id: Some(cluster_id.clone()),
                            ..NodeSpec::new(format!("{cluster_id}-1"))
                        };
                        let spec = node_spec(&catalog, provider, base, &hardware, &image);
                        machine_phases(executor, plugin.as_ref(), &spec, &mut phases).await;
                    }
                }
            }
        }
    }
    match store.provider_credentials(tenant_id, provider).await {
        Ok(Some(credentials)) => {
            let scrubber = crate::provider::Scrubber::of_credentials(&credentials);
            for phase in &mut phases {
                phase.detail = scrubber.scrub(&phase.detail);
            }
        }
        Ok(None) => {}
        Err(error) => {
            // Not knowing what to blot out, nothing a plugin said is shown.
            tracing::error!(request = %request.id, %error, "reading credentials to blot out failed");
            for phase in &mut phases {
                phase.detail = "(hidden: the worker could not read the credentials to blot \
                                out of it; its log says why)"
                    .to_owned();
            }
        }
    }
    report.passed = phases
        .iter()
        .all(|phase| phase.outcome != PhaseOutcome::Failed);
    report.phases = phases;
    report
}

/// The hardware and image types of a check's machine, which the API resolved before it
/// stored the request.
fn machine_types(asked: &ProviderTestRequest) -> Result<(HardwareTypeName, ImageTypeName), String> {
    let hardware = asked
        .hardwaretype
        .as_deref()
        .ok_or("the request names no hardware type")?;
    let image = asked
        .imagetype
        .as_deref()
        .ok_or("the request names no image type")?;
    let hardware = HardwareTypeName::parse(hardware).map_err(|error| error.to_string())?;
    let image = ImageTypeName::parse(image).map_err(|error| error.to_string())?;
    Ok((hardware, image))
}

/// Makes, reaches and deletes one machine, adding a phase for each.
async fn machine_phases(
    executor: &Executor,
    plugin: &dyn NodeProvider,
    spec: &NodeSpec,
    phases: &mut Vec<ProviderTestPhase>,
) {
    let started = Instant::now();
    let record = match plugin.create(spec).await {
        Ok(record) => {
            let detail = format!(
                "made node {} (SSH at {}:{}, address {})",
                record.id,
                record.host,
                record.port,
                record.address()
            );
            phases.push(phase("create", Ok(detail), started));
            record
        }
        Err(error) => {
            phases.push(phase("create", Err(error.to_string()), started));
            phases.push(skipped("ssh", "no machine was made"));
            phases.push(skipped("delete", "no machine was made"));
            return;
        }
    };
    let started = Instant::now();
    if plugin.connects(&record) {
        let pool = executor.ssh();
        let reached = plugin
            .confirm(&record, pool, CONFIRM_TIMEOUT)
            .await
            .map(|()| {
                format!(
                    "{}@{}:{} accepted Corral's key and presented the pinned host key",
                    record.user, record.host, record.port
                )
            })
            .map_err(|error| error.to_string());
        pool.close(&record.id).await;
        phases.push(phase("ssh", reached, started));
    } else {
        phases.push(skipped(
            "ssh",
            "the provider's settings say Corral does not connect to its machines",
        ));
    }
    let started = Instant::now();
    let deleted = plugin
        .delete(&record)
        .await
        .map(|()| format!("node {} deleted", record.id))
        .map_err(|error| error.to_string());
    phases.push(phase("delete", deleted, started));
}

/// A cluster id of its own for each check, so its machine shares nothing (network,
/// key pair, security group) with a real cluster and is cleaned up with it.
fn test_cluster_id() -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    format!("ptest{}", &id[..12])
}

fn phase(name: &str, result: Result<String, String>, started: Instant) -> ProviderTestPhase {
    let elapsed = started.elapsed();
    match result {
        Ok(detail) => ProviderTestPhase {
            phase: name.to_owned(),
            outcome: PhaseOutcome::Passed,
            detail,
            elapsed_ms: millis(elapsed),
        },
        Err(detail) => failed(name, detail, elapsed),
    }
}

fn failed(name: &str, detail: String, elapsed: Duration) -> ProviderTestPhase {
    ProviderTestPhase {
        phase: name.to_owned(),
        outcome: PhaseOutcome::Failed,
        detail,
        elapsed_ms: millis(elapsed),
    }
}

fn skipped(name: &str, why: &str) -> ProviderTestPhase {
    ProviderTestPhase {
        phase: name.to_owned(),
        outcome: PhaseOutcome::Skipped,
        detail: why.to_owned(),
        elapsed_ms: 0,
    }
}

fn millis(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_machine_needs_both_types_the_api_resolved() {
        let request = |hardware: Option<&str>, image: Option<&str>| ProviderTestRequest {
            create: true,
            hardwaretype: hardware.map(str::to_owned),
            imagetype: image.map(str::to_owned),
        };
        let cases = [
            (request(Some("small"), Some("debian")), None),
            (request(None, Some("debian")), Some("no hardware type")),
            (request(Some("small"), None), Some("no image type")),
            (
                request(Some("bad name!"), Some("debian")),
                Some("bad name!"),
            ),
        ];
        for (asked, refusal) in cases {
            match (machine_types(&asked), refusal) {
                (Ok((hardware, image)), None) => {
                    assert_eq!((hardware.as_str(), image.as_str()), ("small", "debian"));
                }
                (Err(why), Some(expected)) => assert!(why.contains(expected), "{why}"),
                (other, expected) => panic!("{asked:?}: {other:?}, expected {expected:?}"),
            }
        }
    }
}
