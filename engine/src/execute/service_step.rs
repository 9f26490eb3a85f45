//! A service action's step: finds the action in the cluster's catalog snapshot (or the
//! definitions its job runs), waits briefly for the nodes its macros may name to have
//! addresses, and hands it to its automator ([`super::automator`]). In an upgrade, a
//! start then waits for the service's health check ([`super::health_gate`]).

use std::time::Duration;

use domain::catalog::automator::{AutomatorType, UnsupportedAction};
use domain::catalog::ServiceAction;
use domain::names::ServiceName;
use tokio::sync::mpsc;

use super::automator::{automator_for, ServiceStep};
use super::view::StepView;
use super::{health_gate, note, Executor, StepError, StepOutcome};
use crate::queue::ClaimedTask;
use crate::ssh::OutputChunk;

/// How often a step re-reads the store while other nodes get their addresses.
const ADDRESS_POLL: Duration = Duration::from_millis(250);

pub(super) async fn run(
    executor: &Executor,
    view: &StepView,
    task: &ClaimedTask,
    output: &mpsc::Sender<OutputChunk>,
) -> Result<StepOutcome, StepError> {
    let (service_name, action) = match (&task.service, task.action.service_action()) {
        (Some(service), Some(action)) => (service.as_str(), action),
        _ => {
            return Err(StepError::Setup(format!(
                "task {} ({}) names no service action",
                task.number.0,
                task.action.as_str()
            )))
        }
    };
    let service = view.catalog.service(service_name).ok_or_else(|| {
        StepError::Setup(format!(
            "service {service_name} is not in the catalog snapshot of cluster {}",
            view.cluster.name
        ))
    })?;
    let Some(spec) = service.provisioner.actions.get(&action) else {
        note(
            output,
            &format!("{service_name} defines no {action} action\n"),
        )
        .await;
        return Ok(StepOutcome::ran(None));
    };
    // Refused at preview; a cluster made before that check, or a snapshot edited since,
    // still gets the same words.
    let Some(automator) = AutomatorType::parse(&spec.automator) else {
        return Err(StepError::Setup(
            UnsupportedAction {
                service: service.name.clone(),
                action,
                automator: spec.automator.clone(),
            }
            .to_string(),
        ));
    };
    if matches!(action, ServiceAction::Stop | ServiceAction::Remove)
        && view.node_record_if_made()?.is_none()
    {
        note(
            output,
            "the node was never created: nothing to stop or remove\n",
        )
        .await;
        return Ok(StepOutcome::ran(None));
    }
    let reloaded;
    // Teardown steps never wait: the nodes they lack addresses for are gone or going.
    let tearing_down = matches!(action, ServiceAction::Stop | ServiceAction::Remove);
    // A node brought back has a new port (and maybe address) stored: read it again.
    let brought_back = executor.bring_back(view).await?.is_some();
    let view = if !brought_back && (tearing_down || view.nodes_without_address().is_empty()) {
        view
    } else if tearing_down {
        reloaded = StepView::load(&executor.inner.queue, &executor.inner.views, task).await?;
        &reloaded
    } else {
        reloaded = wait_for_addresses(executor, task, output).await?;
        &reloaded
    };
    let context = view.macro_context(&executor.inner.views).await;
    let timeout = spec
        .fields
        .get("timeout")
        .and_then(|value| match value {
            serde_json::Value::Number(number) => number.as_u64(),
            serde_json::Value::String(text) => text.trim().parse().ok(),
            _ => None,
        })
        .map_or(executor.inner.settings.step_timeout, Duration::from_secs);
    let definition = service;
    let service: &ServiceName = &service.name;
    let step = ServiceStep {
        executor,
        view,
        service,
        action,
        spec,
        context,
        timeout,
    };
    let outcome = automator_for(automator).run(&step, output).await?;
    if action == ServiceAction::Start && view.changes_definitions {
        health_gate::wait_healthy(executor, view, definition, &step.context, output).await?;
    }
    Ok(outcome)
}

/// Waits briefly until every node of the layout has an address (macros may name any
/// of them). If they are still missing, the step is deferred rather than holding a
/// worker slot: the slot may be exactly what the missing node's create needs.
async fn wait_for_addresses(
    executor: &Executor,
    task: &ClaimedTask,
    output: &mpsc::Sender<OutputChunk>,
) -> Result<StepView, StepError> {
    let deadline = tokio::time::Instant::now() + executor.inner.settings.address_wait;
    loop {
        let view = StepView::load(&executor.inner.queue, &executor.inner.views, task).await?;
        let missing = view.nodes_without_address();
        if missing.is_empty() {
            return Ok(view);
        }
        if tokio::time::Instant::now() >= deadline {
            let list = missing.iter().map(u32::to_string).collect::<Vec<_>>();
            note(
                output,
                &format!("waiting for node(s) {} to be created\n", list.join(", ")),
            )
            .await;
            return Err(StepError::NotReady(format!(
                "node(s) {} of cluster {} have no address yet",
                list.join(", "),
                view.cluster.name
            )));
        }
        tokio::time::sleep(ADDRESS_POLL).await;
    }
}
