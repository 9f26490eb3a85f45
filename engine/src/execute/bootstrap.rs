//! Bootstrap: prepares a confirmed node for service actions. Makes Corral's folders
//! under the node's home (one per service of the node), writes the node's facts (`$HOME/corral/node.json`) and copies
//! the tenant's staged plugin resources, skipping those already there (by checksum), so
//! a re-bootstrap (reconfigure) ships only what changed.

use std::collections::BTreeMap;

use domain::catalog::automator::{automators_used, AutomatorType};
use domain::macros::shell_quote;
use tokio::sync::mpsc;

use super::automator::PUPPET_MISSING;
use super::view::TaskView;
use super::{note, Executor, NodeState, StepError, StepOutcome};
use crate::resources::{ResourceKind, ResourceVersion};
use crate::ssh::{OutputChunk, OutputStream, RunOptions, SshTarget};

/// Raw bytes per upload command (64 KiB of base64): small enough that no step's text
/// weighs on the node's shell, large enough that an archive takes few round trips.
const UPLOAD_CHUNK: usize = 48 * 1024;

const PREPARE: &str = r#"set -e
cd "$HOME"
mkdir -p corral/services corral/resources/scripts corral/resources/archives \
  corral/resources/files corral/resources/.sha
printf '%s\n' "$1" > corral/node.json.partial && mv corral/node.json.partial corral/node.json
for f in corral/resources/.sha/*; do
  [ -f "$f" ] && printf '%s %s\n' "${f##*/}" "$(cat "$f")"
done
exit 0"#;

pub(super) async fn run(
    executor: &Executor,
    view: &TaskView,
    output: &mpsc::Sender<OutputChunk>,
) -> Result<StepOutcome, StepError> {
    let record = view.node_record()?;
    let target = executor.ssh_target(&record).await?;
    let layout_node = view.layout_node()?;
    let facts = serde_json::json!({
        "cluster_id": view.cluster.id,
        "cluster_name": view.cluster.name,
        "node": view.node,
        "host": record.host,
        "services": layout_node.services,
    });
    let mut prepare = format!("set -- {}\n", shell_quote(&facts.to_string()));
    let puppet_services: Vec<&str> = layout_node
        .services
        .iter()
        .filter(|service| {
            automators_used(&view.catalog, [*service]).contains(&AutomatorType::Puppet)
        })
        .map(|service| service.as_str())
        .collect();
    if !puppet_services.is_empty() {
        // Found now, not at the first puppet step after everything else was installed.
        let missing = format!(
            "corral: {PUPPET_MISSING} (service(s) {} use the puppet automator)",
            puppet_services.join(", ")
        );
        prepare.push_str(&format!(
            "command -v puppet >/dev/null 2>&1 || {{ echo {} >&2; exit 3; }}\n",
            shell_quote(&missing)
        ));
    }
    // Each service's own folder, where its steps run: there before any automator needs
    // it (Ansible's tasks write into it by path and make nothing first).
    let folders: Vec<String> = layout_node
        .services
        .iter()
        .map(|service| {
            format!(
                "\"$HOME\"/corral/services/{}",
                shell_quote(service.as_str())
            )
        })
        .collect();
    if !folders.is_empty() {
        prepare.push_str(&format!("mkdir -p {} || exit 1\n", folders.join(" ")));
    }
    prepare.push_str(PREPARE);
    let listing = capture(executor, view, &target, &prepare).await?;
    let on_node: BTreeMap<&str, &str> = listing
        .lines()
        .filter_map(|line| line.split_once(' '))
        .collect();
    let store = &executor.inner.store;
    let staged = executor
        .inner
        .resources
        .staged(store, &view.cluster.tenant_id)
        .await
        .map_err(|error| StepError::Setup(error.to_string()))?;
    let mut copied = Vec::new();
    for resource in &staged {
        if on_node.get(sha_file(resource).as_str()) == Some(&resource.sha256.as_str()) {
            continue;
        }
        let bytes = executor
            .inner
            .resources
            .read(store, resource)
            .await
            .map_err(|error| StepError::Setup(error.to_string()))?;
        upload(executor, view, &target, resource, &bytes).await?;
        copied.push(format!(
            "{}/{} v{}",
            resource.kind, resource.name, resource.version
        ));
    }
    let summary = if copied.is_empty() {
        format!(
            "node ready; {} plugin resource(s) already current\n",
            staged.len()
        )
    } else {
        format!("node ready; copied {}\n", copied.join(", "))
    };
    note(output, &summary).await;
    executor.save_node(view, &record, NodeState::Ready).await?;
    Ok(StepOutcome::ran(Some(0)))
}

/// Writes the resource in chunks, then moves it into place (unpacking archives) and
/// records its checksum.
async fn upload(
    executor: &Executor,
    view: &TaskView,
    target: &SshTarget,
    resource: &ResourceVersion,
    bytes: &[u8],
) -> Result<(), StepError> {
    use base64::Engine as _;
    let dir = format!("\"$HOME\"/corral/resources/{}", resource.kind);
    let name = shell_quote(&resource.name);
    let encoded = format!("{dir}/.{}.b64", resource.name.replace('\'', ""));
    let mut first = true;
    // An empty resource still needs its (empty) upload file.
    let chunks: Vec<&[u8]> = if bytes.is_empty() {
        vec![&[]]
    } else {
        bytes.chunks(UPLOAD_CHUNK).collect()
    };
    for chunk in chunks {
        let redirect = if first { ">" } else { ">>" };
        first = false;
        let text = base64::engine::general_purpose::STANDARD.encode(chunk);
        capture(
            executor,
            view,
            target,
            &format!("printf %s '{text}' {redirect} {encoded}"),
        )
        .await?;
    }
    let install = match resource.kind {
        ResourceKind::Scripts => format!("chmod 755 {dir}/{name}.partial && "),
        ResourceKind::Archives => format!(
            "rm -rf {dir}/{name}.d && mkdir -p {dir}/{name}.d && \
             tar -xf {dir}/{name}.partial -C {dir}/{name}.d && "
        ),
        ResourceKind::Files => String::new(),
    };
    capture(
        executor,
        view,
        target,
        &format!(
            "set -e\nbase64 -d {encoded} > {dir}/{name}.partial\nrm -f {encoded}\n\
             {install}mv {dir}/{name}.partial {dir}/{name}\n\
             printf %s {sha} > \"$HOME\"/corral/resources/.sha/{key}",
            sha = shell_quote(&resource.sha256),
            key = shell_quote(&sha_file(resource)),
        ),
    )
    .await?;
    Ok(())
}

fn sha_file(resource: &ResourceVersion) -> String {
    format!("{}__{}", resource.kind, resource.name)
}

/// Runs a bootstrap command, returning its stdout; a non-zero exit fails the step with
/// the command's stderr.
async fn capture(
    executor: &Executor,
    view: &TaskView,
    target: &SshTarget,
    command: &str,
) -> Result<String, StepError> {
    let (sender, mut receiver) = mpsc::channel(64);
    let options = RunOptions {
        timeout: executor.inner.settings.step_timeout,
        output: Some(sender),
    };
    let collect = async {
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        while let Some(chunk) = receiver.recv().await {
            match chunk.stream {
                OutputStream::Stdout => stdout.extend_from_slice(&chunk.bytes),
                OutputStream::Stderr | OutputStream::Notice => {
                    stderr.extend_from_slice(&chunk.bytes);
                }
            }
        }
        (stdout, stderr)
    };
    let (outcome, (stdout, stderr)) =
        tokio::join!(executor.inner.ssh.run(target, command, options), collect);
    let outcome = outcome?;
    if outcome.exit.success() {
        Ok(String::from_utf8_lossy(&stdout).into_owned())
    } else {
        Err(StepError::Failed {
            what: "bootstrap".to_owned(),
            node: view.node,
            host: view.host(),
            how: format!(
                "exited with code {}: {}",
                outcome.exit.code(),
                String::from_utf8_lossy(&stderr).trim()
            ),
            exit_code: Some(i64::from(outcome.exit.code())),
        })
    }
}
