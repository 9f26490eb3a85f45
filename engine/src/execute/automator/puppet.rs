//! The `puppet` automator: `puppet apply` of a manifest on the node, over the node's SSH
//! session like a shell step.
//!
//! The manifest (and the optional module path) are plugin resources bootstrap already
//! copied to the node. Each of the action's `facts` (macros expanded) becomes a fact of
//! the same name through `FACTER_<name>`, beside Corral's own (`corral_host`,
//! `corral_cluster_name`…; the config as JSON text; `corral_service_dir`, the folder the
//! run starts in). The run uses
//! `--detailed-exitcodes`: 0 (nothing to change) and 2 (changes applied) succeed; 1
//! (the manifest did not compile), 4 and 6 (resources failed) fail the step.

use domain::catalog::automator::{NameRule, ResourceRule, CORRAL_PREFIX};
use domain::macros::shell_quote;
use serde_json::Value;

use super::{
    corral_environment, remote_command, require_on_node, resource_on_node, service_dir, Automator,
    Output, ServiceStep, StepFuture,
};
use crate::execute::{note, StepError, StepOutcome};

pub(super) struct Puppet;

/// The message of a node without Puppet, also used by bootstrap.
pub(crate) const PUPPET_MISSING: &str =
    "puppet is not installed on this node: its image must include Debian's puppet package";

impl Automator for Puppet {
    fn run<'a>(&'a self, step: &'a ServiceStep<'a>, output: &'a Output) -> StepFuture<'a> {
        Box::pin(async move {
            let command = command(step)?;
            let exit = step.run_on_node(&command, output).await?;
            match exit.code() {
                0 => Ok(StepOutcome::ran(Some(0))),
                2 => {
                    note(output, "puppet applied changes (detailed exit code 2)\n").await;
                    Ok(StepOutcome::ran(Some(2)))
                }
                code => {
                    let meaning = match code {
                        1 => "the manifest could not be applied",
                        4 => "some resources failed",
                        6 => "changes were applied and some resources failed",
                        _ => "",
                    };
                    match meaning {
                        "" => step.outcome(exit),
                        meaning => Err(step.failed(
                            format!("puppet apply exited with code {code}: {meaning}"),
                            Some(i64::from(code)),
                        )),
                    }
                }
            }
        })
    }
}

fn command(step: &ServiceStep<'_>) -> Result<String, StepError> {
    let manifest = step
        .resource_field("manifest", ResourceRule::File)?
        .ok_or_else(|| step.setup("a puppet action needs a `manifest` field"))?;
    let modulepath = step.resource_field("modulepath", ResourceRule::Directory)?;
    let facts = step.corral_facts()?;
    let mut env = corral_environment(&facts);
    for (name, value) in facts {
        env.push((format!("FACTER_{CORRAL_PREFIX}{name}"), fact_text(value)));
    }
    for (name, value) in step.expanded_object("facts", NameRule::Fact)? {
        env.push((format!("FACTER_{name}"), fact_text(value)));
    }
    let manifest_word = resource_on_node(&manifest);
    let mut body = vec![
        format!(
            "command -v puppet >/dev/null 2>&1 || {{ echo {} >&2; exit 127; }}",
            shell_quote(&format!("corral: {PUPPET_MISSING}"))
        ),
        require_on_node(&manifest_word, &manifest, "-f"),
    ];
    let mut apply = "puppet apply --detailed-exitcodes --color=false".to_owned();
    if let Some(modulepath) = &modulepath {
        let word = resource_on_node(modulepath);
        body.push(require_on_node(&word, modulepath, "-d"));
        apply.push_str(&format!(" --modulepath {word}"));
    }
    // The service's folder on the node, where the step runs: manifests need absolute paths.
    body.push(format!("export FACTER_{CORRAL_PREFIX}service_dir=\"$PWD\""));
    body.push(format!("exec {apply} {manifest_word}"));
    Ok(remote_command(
        &env,
        &service_dir(step.service),
        &body.join("\n"),
    ))
}

/// Facts set through the environment are text: strings as they are, anything else as
/// its JSON.
fn fact_text(value: Value) -> String {
    match value {
        Value::String(text) => text,
        other => other.to_string(),
    }
}
