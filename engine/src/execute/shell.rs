//! The `shell` automator: a service action's script run on its node over SSH.
//!
//! Action fields (Coopr's `script` + `args`, and Corral's `run`, `env`, `workdir`,
//! `timeout`) have their macros expanded as seen from the node, each macro value
//! shell-quoted. The script runs in the service's own directory with the cluster's facts
//! and expanded config in its environment (`CORRAL_*`); `script` names a plugin
//! resource that bootstrap copied to `$HOME/corral/resources/scripts/`.

use std::time::Duration;

use domain::catalog::{ActionSpec, ServiceAction};
use domain::macros::{expand, expand_for_shell, expand_json, shell_quote, MacroContext};
use serde_json::Value;
use tokio::sync::mpsc;

use super::view::TaskView;
use super::{note, Executor, StepError, StepOutcome};
use crate::queue::ClaimedTask;
use crate::ssh::{OutputChunk, RunOptions};

/// The only automator Corral runs today; others (chef-solo, docker) are kept in the
/// catalog but refused at run time with this name in the message.
pub const SHELL_AUTOMATOR: &str = "shell";

/// How often a step re-reads the store while other nodes get their addresses.
const ADDRESS_POLL: Duration = Duration::from_millis(250);

pub(super) async fn run(
    executor: &Executor,
    view: &TaskView,
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
        return Ok(StepOutcome { exit_code: None });
    };
    if spec.automator != SHELL_AUTOMATOR {
        return Err(StepError::Setup(format!(
            "service {service_name}: {action} uses automator {:?}; Corral runs only \"shell\" \
             actions (rewrite it as a shell script)",
            spec.automator
        )));
    }
    if matches!(action, ServiceAction::Stop | ServiceAction::Remove)
        && view.node_record_if_made()?.is_none()
    {
        note(
            output,
            "the node was never created: nothing to stop or remove\n",
        )
        .await;
        return Ok(StepOutcome { exit_code: None });
    }
    let reloaded;
    // Teardown steps never wait: the nodes they lack addresses for are gone or going.
    let tearing_down = matches!(action, ServiceAction::Stop | ServiceAction::Remove);
    let view = if tearing_down || view.nodes_without_address().is_empty() {
        view
    } else {
        reloaded = wait_for_addresses(executor, task, output).await?;
        &reloaded
    };
    let context = view.macro_context(&executor.inner.views).await;
    let command = command(view, service_name, action, spec, &context)?;
    let timeout = field_str(spec, "timeout")
        .and_then(|seconds| seconds.trim().parse::<u64>().ok())
        .map_or(executor.inner.settings.step_timeout, Duration::from_secs);
    let target = executor.ssh_target(&view.node_record()?).await?;
    let outcome = executor
        .inner
        .ssh
        .run(
            &target,
            &command,
            RunOptions {
                timeout,
                output: Some(output.clone()),
            },
        )
        .await?;
    let failed = |how: String, exit_code| StepError::Failed {
        what: format!("{service_name} {action}"),
        node: view.node,
        host: view.host(),
        how,
        exit_code,
    };
    let exit = outcome.exit;
    if exit.success() {
        return Ok(StepOutcome { exit_code: Some(0) });
    }
    let how = match exit.signal_name() {
        Some(signal) => format!(
            "exited with code {}, which is how a command killed by signal {signal} ends",
            exit.code()
        ),
        None => format!("exited with code {}", exit.code()),
    };
    Err(failed(how, Some(i64::from(exit.code()))))
}

/// Waits briefly until every node of the layout has an address (macros may name any
/// of them). If they are still missing, the step is deferred rather than holding a
/// worker slot: the slot may be exactly what the missing node's create needs.
async fn wait_for_addresses(
    executor: &Executor,
    task: &ClaimedTask,
    output: &mpsc::Sender<OutputChunk>,
) -> Result<TaskView, StepError> {
    let store = &executor.inner.store;
    let deadline = tokio::time::Instant::now() + executor.inner.settings.address_wait;
    loop {
        let view = TaskView::load(store, &executor.inner.views, task).await?;
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

/// The remote command: environment, working directory, then the script.
fn command(
    view: &TaskView,
    service: &str,
    action: ServiceAction,
    spec: &ActionSpec,
    context: &MacroContext,
) -> Result<String, StepError> {
    let macro_error = |error: domain::macros::MacroError| {
        StepError::Setup(format!("service {service} {action}: {error}"))
    };
    let config: Value = serde_json::from_str(&view.cluster.config_json)
        .map_err(|error| StepError::Setup(format!("cluster config is unreadable: {error}")))?;
    let config = expand_json(&config, context, "config").map_err(macro_error)?;
    let service_config = config.get(service).cloned().unwrap_or(Value::Null);
    let mut env: Vec<(String, String)> = vec![
        ("CORRAL_CLUSTER_ID".into(), view.cluster.id.clone()),
        ("CORRAL_CLUSTER_NAME".into(), view.cluster.name.clone()),
        ("CORRAL_JOB_ID".into(), view.job_id.clone()),
        ("CORRAL_NODE".into(), view.node.to_string()),
        ("CORRAL_HOST".into(), view.host()),
        ("CORRAL_SERVICE".into(), service.to_owned()),
        ("CORRAL_ACTION".into(), action.as_str().to_owned()),
        ("CORRAL_CONFIG_JSON".into(), config.to_string()),
        (
            "CORRAL_SERVICE_CONFIG_JSON".into(),
            service_config.to_string(),
        ),
    ];
    if let Some(extra) = spec.fields.get("env") {
        let extra = match extra {
            Value::String(text) => serde_json::from_str(text).map_err(|error| {
                StepError::Setup(format!(
                    "service {service} {action}: field env is not a JSON object: {error}"
                ))
            })?,
            other => other.clone(),
        };
        let Value::Object(extra) = extra else {
            return Err(StepError::Setup(format!(
                "service {service} {action}: field env must be an object of strings"
            )));
        };
        for (name, value) in extra {
            if !is_env_name(&name) {
                return Err(StepError::Setup(format!(
                    "service {service} {action}: {name:?} is not a valid environment variable name"
                )));
            }
            let text = match value {
                Value::String(text) => text,
                other => other.to_string(),
            };
            let expanded = expand(&text, context, &format!("env.{name}")).map_err(macro_error)?;
            env.push((name, expanded));
        }
    }
    let workdir = match field_str(spec, "workdir") {
        Some(dir) => shell_path(&expand(dir, context, "workdir").map_err(macro_error)?),
        None => format!("\"$HOME\"/corral/services/{}", shell_quote(service)),
    };
    let body = match (field_str(spec, "run"), field_str(spec, "script")) {
        (Some(inline), _) => {
            let inline = expand_for_shell(inline, context, "run").map_err(macro_error)?;
            // `run` scripts are bash, and so is the shell that runs every step on the
            // node (see `ssh::step_shell`): the script is the step's text itself.
            inline
        }
        (None, Some(script)) => {
            if !is_resource_name(script) {
                return Err(StepError::Setup(format!(
                    "service {service} {action}: script {script:?} is not a resource name"
                )));
            }
            let args = match field_str(spec, "args") {
                Some(args) => expand_for_shell(args, context, "args").map_err(macro_error)?,
                None => String::new(),
            };
            format!(
                "script=\"$HOME\"/corral/resources/scripts/{}\n\
                 [ -f \"$script\" ] || {{ echo \"corral: plugin resource scripts/{script} is not on \
                 this node: upload and stage it, then retry\" >&2; exit 127; }}\n\
                 exec \"$script\" {args}",
                shell_quote(script)
            )
        }
        (None, None) => {
            return Err(StepError::Setup(format!(
                "service {service} {action}: a shell action needs a `run` or a `script` field"
            )))
        }
    };
    let mut command = String::new();
    for (name, value) in env {
        command.push_str(&format!("export {name}={}\n", shell_quote(&value)));
    }
    // `mkdir` only when the directory is missing: a process less per step after the first.
    command.push_str(&format!(
        "cd {workdir} 2>/dev/null || {{ mkdir -p {workdir} && cd {workdir}; }} || exit 96\n\
         {body}\n"
    ));
    Ok(command)
}

fn field_str<'a>(spec: &'a ActionSpec, name: &str) -> Option<&'a str> {
    spec.fields.get(name).and_then(Value::as_str)
}

/// A directory for `cd`: relative ones are under the node's home.
fn shell_path(dir: &str) -> String {
    if dir.starts_with('/') {
        shell_quote(dir)
    } else {
        format!("\"$HOME\"/{}", shell_quote(dir))
    }
}

fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Plugin resource names: one path component of safe characters.
pub(crate) fn is_resource_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_names_are_checked() {
        assert!(is_env_name("PORT"));
        assert!(is_env_name("_x1"));
        assert!(!is_env_name("1X"));
        assert!(!is_env_name("A-B"));
        assert!(!is_env_name(""));
    }

    #[test]
    fn resource_names_cannot_leave_their_folder() {
        assert!(is_resource_name("web.sh"));
        for bad in ["", "../x", "a/b", ".hidden", "a b", "x;rm"] {
            assert!(!is_resource_name(bad), "{bad}");
        }
    }

    #[test]
    fn relative_work_dirs_are_under_home() {
        assert_eq!(shell_path("/srv/x"), "'/srv/x'");
        assert_eq!(shell_path("data dir"), "\"$HOME\"/'data dir'");
    }
}
