//! The `shell` automator: a service action's script run on its node over SSH.
//!
//! Action fields (Coopr's `script` + `args`, and Corral's `run`, `env`, `workdir`,
//! `timeout`) have their macros expanded as seen from the node, each macro value
//! shell-quoted. The script runs in the service's own directory with the cluster's facts
//! and expanded config in its environment (`CORRAL_*`); `script` names a plugin
//! resource that bootstrap copied to `$HOME/corral/resources/scripts/`.

use domain::catalog::automator::NameRule;
use domain::macros::{expand_for_shell, shell_quote};
use serde_json::Value;

use super::{
    corral_environment, remote_command, service_dir, Automator, Output, ServiceStep, StepFuture,
};

use domain::catalog::automator::is_resource_name;

pub(super) struct Shell;

impl Automator for Shell {
    fn run<'a>(&'a self, step: &'a ServiceStep<'a>, output: &'a Output) -> StepFuture<'a> {
        Box::pin(async move {
            let command = command(step)?;
            let exit = step.run_on_node(&command, output).await?;
            step.outcome(exit)
        })
    }
}

/// The remote command: environment, working directory, then the script.
fn command(step: &ServiceStep<'_>) -> Result<String, super::StepError> {
    let mut env = corral_environment(&step.corral_facts()?);
    for (name, value) in step.expanded_object("env", NameRule::Environment)? {
        let text = match value {
            Value::String(text) => text,
            other => other.to_string(),
        };
        env.push((name, text));
    }
    let workdir = match step.expanded_text("workdir")? {
        Some(dir) => shell_path(&dir),
        None => service_dir(step.service),
    };
    let body = match (step.text_field("run"), step.text_field("script")) {
        // `run` scripts are bash, and so is the shell that runs every step on the node
        // (see `ssh::step_shell`): the script is the step's text itself.
        (Some(inline), _) => {
            expand_for_shell(inline, &step.context, "run").map_err(step.macro_error())?
        }
        (None, Some(script)) => {
            if !is_resource_name(script) {
                return Err(step.setup(format!("script {script:?} is not a resource name")));
            }
            let args = match step.text_field("args") {
                Some(args) => {
                    expand_for_shell(args, &step.context, "args").map_err(step.macro_error())?
                }
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
            return Err(step.setup("a shell action needs a `run` or a `script` field"));
        }
    };
    Ok(remote_command(&env, &workdir, &body))
}

/// A directory for `cd`: relative ones are under the node's home.
fn shell_path(dir: &str) -> String {
    if dir.starts_with('/') {
        shell_quote(dir)
    } else {
        format!("\"$HOME\"/{}", shell_quote(dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
