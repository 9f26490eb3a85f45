//! Automators: how a service action gets onto its node (docs/automators.md). One
//! implementation per [`AutomatorType`], behind one trait, as providers are:
//!
//! - [`shell`]: the action's script, run on the node over the node's SSH session;
//! - [`puppet`]: `puppet apply` of a manifest bootstrap copied to the node, run the same
//!   way, with the action's facts as `FACTER_*`;
//! - [`ansible`]: `ansible-playbook` run on the worker against the one node, over SSH
//!   with the node's pinned host key and client key.
//!
//! Everything an automator needs is in the [`ServiceStep`]: the task's view, the action
//! and its fields, the macro context, the timeout. Fields are checked by
//! `domain::catalog::automator` when the catalog is imported; automators still refuse
//! bad input with the field's name, since a snapshot may predate a check.

mod ansible;
mod puppet;
mod shell;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use domain::catalog::automator::{object_field, AutomatorType, NameRule, ResourcePath};
use domain::catalog::ServiceAction;
use domain::macros::{expand, expand_json, shell_quote, MacroContext, MacroError};
use domain::names::ServiceName;
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use super::view::StepView;
use super::{Executor, StepError, StepOutcome};
use crate::ssh::{OutputChunk, RunOptions};

pub(crate) use puppet::PUPPET_MISSING;

/// Where a running step's output goes.
pub(super) type Output = mpsc::Sender<OutputChunk>;

/// What an automator's run returns.
pub(super) type StepFuture<'a> =
    Pin<Box<dyn Future<Output = Result<StepOutcome, StepError>> + Send + 'a>>;

/// Runs service actions of one automator type.
pub(super) trait Automator: Send + Sync {
    /// Runs `step` to its end, streaming output into `output`. Dropping the future stops
    /// the step and whatever it started (a remote command's process group, a local
    /// process group).
    fn run<'a>(&'a self, step: &'a ServiceStep<'a>, output: &'a Output) -> StepFuture<'a>;
}

/// The automator of `automator_type`.
pub(super) fn automator_for(automator_type: AutomatorType) -> &'static dyn Automator {
    match automator_type {
        AutomatorType::Shell => &shell::Shell,
        AutomatorType::Ansible => &ansible::Ansible,
        AutomatorType::Puppet => &puppet::Puppet,
    }
}

/// One service action about to run on its node.
pub(super) struct ServiceStep<'a> {
    pub executor: &'a Executor,
    pub view: &'a StepView,
    pub service: &'a ServiceName,
    pub action: ServiceAction,
    pub spec: &'a domain::catalog::ActionSpec,
    pub context: MacroContext,
    pub timeout: Duration,
}

impl ServiceStep<'_> {
    /// A setup problem of this action, naming it.
    fn setup(&self, problem: impl std::fmt::Display) -> StepError {
        StepError::Setup(format!(
            "service {} {}: {problem}",
            self.service, self.action
        ))
    }

    fn macro_error(&self) -> impl Fn(MacroError) -> StepError + '_ {
        move |error| self.setup(error)
    }

    /// The step ran and ended badly.
    fn failed(&self, how: String, exit_code: Option<i64>) -> StepError {
        StepError::Failed {
            what: format!("{} {}", self.service, self.action),
            node: self.view.node,
            host: self.view.host(),
            how,
            exit_code,
        }
    }

    fn text_field(&self, name: &str) -> Option<&str> {
        self.spec.fields.get(name).and_then(Value::as_str)
    }

    /// A text field with its macros expanded (plain values, not shell-quoted).
    fn expanded_text(&self, name: &str) -> Result<Option<String>, StepError> {
        self.text_field(name)
            .map(|text| expand(text, &self.context, name).map_err(self.macro_error()))
            .transpose()
    }

    /// An object field (or its JSON text) with every name checked by `rule` and every
    /// value's macros expanded.
    fn expanded_object(&self, name: &str, rule: NameRule) -> Result<Map<String, Value>, StepError> {
        let Some(value) = self.spec.fields.get(name) else {
            return Ok(Map::new());
        };
        let object =
            object_field(value).map_err(|problem| self.setup(format!("field {name} {problem}")))?;
        let mut expanded = Map::new();
        for (key, value) in object {
            rule.check(&key)
                .map_err(|problem| self.setup(format!("field {name}: {problem}")))?;
            let value = expand_json(&value, &self.context, &format!("{name}.{key}"))
                .map_err(self.macro_error())?;
            expanded.insert(key, value);
        }
        Ok(expanded)
    }

    /// A resource field, parsed.
    fn resource_field(
        &self,
        name: &str,
        rule: domain::catalog::automator::ResourceRule,
    ) -> Result<Option<ResourcePath>, StepError> {
        self.text_field(name)
            .map(|text| {
                ResourcePath::parse(text, rule)
                    .map_err(|problem| self.setup(format!("field {name}: {problem}")))
            })
            .transpose()
    }

    /// What Corral tells every automator about the step, by name without the
    /// `corral_` prefix: the cluster's id and name, the node, its host, the service and
    /// action, the job, the cluster's config (macros expanded) and the service's part
    /// of it.
    fn corral_facts(&self) -> Result<Vec<(&'static str, Value)>, StepError> {
        let view = self.view;
        let mut config: Value = serde_json::from_str(&view.cluster.config_json)
            .map_err(|error| StepError::Setup(format!("cluster config is unreadable: {error}")))?;
        // Parameter values are what a user typed: data, never macros to expand.
        let parameters = config
            .as_object_mut()
            .and_then(|config| config.shift_remove(domain::catalog::parameters::CONFIG_KEY));
        let mut config =
            expand_json(&config, &self.context, "config").map_err(self.macro_error())?;
        if let (Some(parameters), Some(config)) = (parameters, config.as_object_mut()) {
            config.insert(
                domain::catalog::parameters::CONFIG_KEY.to_owned(),
                parameters,
            );
        }
        let service_config = config
            .get(self.service.as_str())
            .cloned()
            .unwrap_or(Value::Null);
        Ok(vec![
            ("cluster_id", Value::from(view.cluster.id.clone())),
            ("cluster_name", Value::from(view.cluster.name.clone())),
            ("job_id", Value::from(view.job_id.as_str())),
            ("node", Value::from(view.node)),
            ("host", Value::from(view.host())),
            ("service", Value::from(self.service.as_str())),
            ("action", Value::from(self.action.as_str())),
            ("config", config),
            ("service_config", service_config),
        ])
    }

    /// Runs `command` on the node over its SSH session and returns how it exited.
    async fn run_on_node(
        &self,
        command: &str,
        output: &mpsc::Sender<OutputChunk>,
    ) -> Result<crate::ssh::ExitStatus, StepError> {
        let target = self.executor.ssh_target(&self.view.node_record()?).await?;
        let outcome = self
            .executor
            .inner
            .ssh
            .run(
                &target,
                command,
                RunOptions {
                    timeout: self.timeout,
                    output: Some(output.clone()),
                },
            )
            .await?;
        Ok(outcome.exit)
    }

    /// The step's end from a remote command's exit status.
    fn outcome(&self, exit: crate::ssh::ExitStatus) -> Result<StepOutcome, StepError> {
        if exit.success() {
            return Ok(StepOutcome::ran(Some(0)));
        }
        let how = match exit.signal_name() {
            Some(signal) => format!(
                "exited with code {}, which is how a command killed by signal {signal} ends",
                exit.code()
            ),
            None => format!("exited with code {}", exit.code()),
        };
        Err(self.failed(how, Some(i64::from(exit.code()))))
    }
}

/// Corral's facts as environment variables (`CORRAL_CLUSTER_ID`…; the config as JSON
/// text, `CORRAL_CONFIG_JSON`), as shell steps have always had them.
fn corral_environment(facts: &[(&str, Value)]) -> Vec<(String, String)> {
    facts
        .iter()
        .map(|(name, value)| {
            let name = name.to_uppercase();
            match value {
                // The config is JSON whatever it holds.
                value if name.ends_with("CONFIG") => {
                    (format!("CORRAL_{name}_JSON"), value.to_string())
                }
                Value::String(text) => (format!("CORRAL_{name}"), text.clone()),
                other => (format!("CORRAL_{name}"), other.to_string()),
            }
        })
        .collect()
}

/// The remote command of a step run on the node: environment, working directory (made
/// when missing), then `body`.
fn remote_command(env: &[(String, String)], workdir: &str, body: &str) -> String {
    let mut command = String::new();
    for (name, value) in env {
        command.push_str(&format!("export {name}={}\n", shell_quote(value)));
    }
    // `mkdir` only when the directory is missing: a process less per step after the first.
    command.push_str(&format!(
        "cd {workdir} 2>/dev/null || {{ mkdir -p {workdir} && cd {workdir}; }} || exit 96\n\
         {body}\n"
    ));
    command
}

/// The service's own directory on the node, where its steps run.
fn service_dir(service: &ServiceName) -> String {
    crate::node_scripts::in_home(&crate::node_scripts::service_dir(service.as_str()))
}

/// Where bootstrap put a plugin resource on the node, as a shell word: files as they
/// are, archives unpacked into `<name>.d`.
fn resource_on_node(path: &ResourcePath) -> String {
    let base =
        crate::node_scripts::in_home(&crate::node_scripts::resource_file(path.kind, &path.name));
    match (path.kind, path.inner.as_str()) {
        (domain::catalog::automator::ARCHIVES, "") => format!("{base}.d"),
        (domain::catalog::automator::ARCHIVES, inner) => format!("{base}.d/{}", shell_quote(inner)),
        _ => base,
    }
}

/// A shell line failing the step with a clear message when `path` (a shell word) is
/// missing on the node.
fn require_on_node(path_word: &str, resource: &ResourcePath, test: &str) -> String {
    let shown = if resource.inner.is_empty() {
        format!("{}/{}", resource.kind, resource.name)
    } else {
        format!("{}/{}/{}", resource.kind, resource.name, resource.inner)
    };
    format!(
        "[ {test} {path_word} ] || {{ echo {} >&2; exit 127; }}",
        shell_quote(&format!(
            "corral: plugin resource {shown} is not on this node: upload and stage it, then \
             retry (or re-bootstrap with a reconfigure)"
        ))
    )
}
