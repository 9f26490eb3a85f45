//! An upgrade goes on only over healthy services: when a job that moves services to
//! new definitions (an upgrade, or its rollback) starts a service that declares a
//! health check, the start step ends only once that check passes on the node. The
//! next batch of nodes waits for the step, so a broken revision stops the upgrade
//! after its first batch, with the rest of the service still serving.

use std::time::Duration;

use api_types::ServiceHealth;
use domain::catalog::health::HealthCheck;
use domain::catalog::Service;
use domain::macros::MacroContext;
use tokio::sync::mpsc;

use super::view::StepView;
use super::{note, Executor, StepError};
use crate::monitor::{run_on_node, Prepared};
use crate::ssh::OutputChunk;

/// How long a started service may take to turn healthy before its step fails.
const HEALTHY_WITHIN: Duration = Duration::from_secs(120);
/// Pause between two checks while it is not.
const RECHECK_EVERY: Duration = Duration::from_secs(1);

/// Waits until `service`'s health check passes on the step's node; a service without
/// a check passes at once. Fails naming the check's last finding after
/// [`HEALTHY_WITHIN`].
pub(super) async fn wait_healthy(
    executor: &Executor,
    view: &StepView,
    service: &Service,
    context: &MacroContext,
    output: &mpsc::Sender<OutputChunk>,
) -> Result<(), StepError> {
    let check = match HealthCheck::of(service) {
        Ok(Some(check)) => check,
        Ok(None) => return Ok(()),
        Err(problems) => {
            return Err(StepError::Setup(format!(
                "the health check of {} is malformed: {problems:?}",
                service.name
            )))
        }
    };
    let host = view.host();
    let env = [
        ("CORRAL_CLUSTER_ID", view.cluster.id.as_str()),
        ("CORRAL_CLUSTER_NAME", view.cluster.name.as_str()),
        ("CORRAL_SERVICE", service.name.as_str()),
        ("CORRAL_HOST", host.as_str()),
    ];
    let prepared = Prepared::new(
        check,
        view.node_record()?,
        &env,
        service.name.as_str(),
        context,
    )
    .map_err(StepError::Setup)?;
    note(
        output,
        &format!(
            "waiting for {}'s health check to pass on this node before the upgrade goes on\n",
            service.name
        ),
    )
    .await;
    let deadline = tokio::time::Instant::now() + HEALTHY_WITHIN;
    loop {
        let (health, detail) = run_on_node(executor, &prepared).await;
        if health == ServiceHealth::Up {
            note(output, &format!("{} is healthy\n", service.name)).await;
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(StepError::Failed {
                what: format!("start {}", service.name),
                node: view.node,
                host,
                how: format!(
                    "left the service unhealthy for {} s: {}; the upgrade stopped here \
                     (fix the definition and retry the job, or roll it back)",
                    HEALTHY_WITHIN.as_secs(),
                    detail.unwrap_or_else(|| "the check did not pass".to_owned())
                ),
                exit_code: None,
            });
        }
        tokio::time::sleep(RECHECK_EVERY).await;
    }
}
