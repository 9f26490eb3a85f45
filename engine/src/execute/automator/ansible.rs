//! The `ansible` automator: `ansible-playbook` run on the worker against the one node
//! of the task.
//!
//! Each run gets a fresh work dir holding the playbook (a `files` resource, or an
//! `archives` resource unpacked), an inventory of the one node, a `known_hosts` with
//! the node's pinned host key (strict checking), a copy of the node's client key and
//! the variables as a file (`-e @vars.yml`, never through a shell): the action's
//! `extra_vars` with macros expanded, and Corral's own (`corral_host`,
//! `corral_cluster_name`, `corral_config`…).
//!
//! A playbook is tenant code, and its controller side (lookups, templates, `delegate_to:
//! localhost`) runs on this host. So it runs confined ([`sandbox`]): in bubblewrap
//! namespaces with the system read-only, a private `/tmp`, no network but a relay to
//! the step's node ([`relay`]), as the tenant's node user when this process is root,
//! with an environment of its own. The work dir is written by this process before that
//! user can touch it ([`work_dir`]). Any tenant may use it, whichever its providers.
//! Its whole process group (and with it the sandbox's pid namespace) is killed when the
//! step times out or is cancelled; its work dir is removed when the step ends.
//!
//! One SSH connection serves the whole step (a ControlPersist master whose socket is in
//! the sandbox's private `/tmp`, gone with the sandbox), with pipelining on.

mod relay;
mod sandbox;
mod work_dir;

use std::path::PathBuf;
use std::process::Stdio;

use domain::catalog::automator::{NameRule, ResourcePath, ResourceRule, ARCHIVES};
use serde_json::{json, Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::Command;
use tokio::sync::mpsc;

use self::relay::Relay;
use self::sandbox::{Writable, BWRAP, WORK};
use self::work_dir::{Controller, WorkDir, PLAYBOOK_DIR};
use super::{Automator, Output, ServiceStep, StepFuture};
use crate::execute::{note, StepError, StepOutcome};
use crate::ssh::{OutputChunk, OutputStream, SshTarget};

/// The program, from Debian's `ansible-core`.
const ANSIBLE_PLAYBOOK: &str = "ansible-playbook";

/// The controller's PATH: system programs only, nothing of the server's.
const CONTROLLER_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// The node's Python, found on its PATH (docs/automators.md: nodes need Python 3).
const PYTHON_INTERPRETER: &str = "/usr/bin/env python3";

/// The facts a play gathers unless it names its own `gather_subset`: all of Ansible's
/// own, not Facter's and Ohai's (`!facter` alone would mean the minimal set).
const GATHER_SUBSET: &str = "all,!facter,!ohai";

pub(super) struct Ansible;

impl Automator for Ansible {
    fn run<'a>(&'a self, step: &'a ServiceStep<'a>, output: &'a Output) -> StepFuture<'a> {
        Box::pin(run(step, output))
    }
}

async fn run(
    step: &ServiceStep<'_>,
    output: &mpsc::Sender<OutputChunk>,
) -> Result<StepOutcome, StepError> {
    let playbook = step
        .resource_field("playbook", ResourceRule::File)?
        .ok_or_else(|| step.setup("an ansible action needs a `playbook` field"))?;
    let extra_vars = step.expanded_object("extra_vars", NameRule::AnsibleVariable)?;
    let corral_vars: Map<String, Value> = step
        .corral_facts()?
        .into_iter()
        .map(|(name, value)| (format!("corral_{name}"), value))
        .collect();
    let vars = vars_file(&extra_vars, &corral_vars);
    let tags = step.expanded_text("tags")?;
    let record = step.view.node_record()?;
    if crate::provider::shares_client_key(&record) {
        // The run gets a copy of the node's client key, which tenant code can read.
        return Err(step.setup(
            "this exec node was made before exec keys were per tenant and still accepts \
             the key every tenant's exec nodes then shared, which a playbook could read and \
             use on other tenants' nodes: replace the node (delete it from the cluster and \
             add one) to run Ansible on it",
        ));
    }
    let target = step.executor.ssh_target(&record).await?;
    let tenant = &step.view.cluster.tenant_id;
    let playbook_bytes = resource_bytes(step, &playbook).await?;
    let user = crate::provider::tenant_host_user(tenant, &step.view.node_id()).await?;
    let work = WorkDir::new(Controller::of(user))
        .map_err(|error| step.setup(format!("work dir: {error}")))?;
    let (_relay, socket) = Relay::start(work.root(), (target.host.clone(), target.port))
        .map_err(|error| step.setup(format!("relay to the node: {error}")))?;
    work.hand_over_socket(&socket)
        .map_err(|error| step.setup(format!("relay to the node: {error}")))?;
    let playbook_path = stage_playbook(&work, &playbook, &playbook_bytes)
        .await
        .map_err(|error| step.setup(error))?;
    write_connection(&work, step, &target, &vars)
        .map_err(|error| step.setup(format!("work dir: {error}")))?;

    let mut command = confined(&work, Writable::Nothing);
    command
        .arg(ANSIBLE_PLAYBOOK)
        .arg("--inventory")
        .arg(inside("inventory.json"))
        .arg("--extra-vars")
        .arg(format!("@{}", inside("vars.yml").display()));
    if let Some(tags) = tags.filter(|tags| !tags.trim().is_empty()) {
        command.arg("--tags").arg(tags);
    }
    command.arg(&playbook_path);
    let mut child = command.spawn().map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => step.setup(format!(
            "{BWRAP} is not installed on this worker's host (Debian's bubblewrap package, \
             which confines Ansible's controller): install it there, then retry"
        )),
        _ => step.setup(format!("could not start {ANSIBLE_PLAYBOOK}: {error}")),
    })?;
    // A timeout or a cancelled step kills the group: the sandbox's leader, and with it
    // its pid namespace (ansible's forks, their ssh clients and master). Declared after
    // `child`, so it is dropped first, while the leader is not reaped yet and the group
    // id cannot have been reused.
    let mut group = ProcessGroup(child.id());
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let watch = async {
        let (failure, _) = tokio::join!(
            forward(stdout, OutputStream::Stdout, output, true),
            forward(stderr, OutputStream::Stderr, output, false),
        );
        let status = child.wait().await;
        (failure, status)
    };
    let (failure, status) = match tokio::time::timeout(step.timeout, watch).await {
        Ok(ended) => ended,
        Err(_) => {
            return Err(step.failed(
                format!(
                    "{ANSIBLE_PLAYBOOK} ran longer than {} s and was stopped",
                    step.timeout.as_secs()
                ),
                None,
            ))
        }
    };
    // Reaped: its group id may be reused from now on, so the group is left alone.
    group.reaped();
    let status = status.map_err(|error| step.setup(format!("{ANSIBLE_PLAYBOOK}: {error}")))?;
    if status.success() {
        return Ok(StepOutcome::ran(Some(0)));
    }
    let code = status.code();
    let exited = match code {
        Some(code) => format!("{ANSIBLE_PLAYBOOK} exited with code {code}"),
        None => format!("{ANSIBLE_PLAYBOOK} was killed by a signal"),
    };
    let how = match failure {
        Some(FailedTask { task, host }) => {
            format!("failed at Ansible task \"{task}\" on host {host} ({exited})")
        }
        None => exited,
    };
    note(output, &format!("{how}\n")).await;
    Err(step.failed(how, code.map(i64::from)))
}

/// The staged version's bytes of the tenant's resource `path` names.
async fn resource_bytes(step: &ServiceStep<'_>, path: &ResourcePath) -> Result<Vec<u8>, StepError> {
    let executor = step.executor;
    let store = executor.store();
    let resources = &executor.inner.resources;
    let staged = resources
        .staged(store, &step.view.cluster.tenant_id)
        .await
        .map_err(|error| StepError::Setup(error.to_string()))?;
    let version = staged
        .iter()
        .find(|version| version.kind.as_str() == path.kind && version.name == path.name)
        .ok_or_else(|| {
            step.setup(format!(
                "plugin resource {}/{} has no staged version: upload and stage it, then retry",
                path.kind, path.name
            ))
        })?;
    resources
        .read(store, version)
        .await
        .map_err(|error| StepError::Setup(error.to_string()))
}

/// A failing task as Ansible's default output names it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FailedTask {
    task: String,
    host: String,
}

/// Copies `stream` into the step's output as it comes; when `parse`, also follows
/// `TASK [...]` headers and returns the first task a host failed in.
async fn forward(
    stream: Option<impl AsyncRead + Unpin>,
    kind: OutputStream,
    output: &mpsc::Sender<OutputChunk>,
    parse: bool,
) -> Option<FailedTask> {
    let mut reader = BufReader::new(stream?);
    let mut tracker = TaskTracker::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if parse {
            tracker.read_line(&String::from_utf8_lossy(&line));
        }
        let _ = output
            .send(OutputChunk {
                stream: kind,
                bytes: line.clone(),
            })
            .await;
    }
    tracker.failed
}

/// Follows the play's task headers and host results.
#[derive(Debug, Default)]
struct TaskTracker {
    current: Option<String>,
    failed: Option<FailedTask>,
}

impl TaskTracker {
    fn read_line(&mut self, line: &str) {
        let line = line.trim_end();
        for header in ["TASK [", "RUNNING HANDLER ["] {
            if let Some(rest) = line.strip_prefix(header) {
                if let Some(end) = rest.rfind(']') {
                    self.current = Some(rest[..end].to_owned());
                }
                return;
            }
        }
        if self.failed.is_some() {
            return;
        }
        for result in ["fatal: [", "failed: ["] {
            if let Some(rest) = line.strip_prefix(result) {
                let host = rest.split(']').next().unwrap_or_default().to_owned();
                self.failed = Some(FailedTask {
                    task: self
                        .current
                        .clone()
                        .unwrap_or_else(|| "(before any task)".to_owned()),
                    host,
                });
                return;
            }
        }
    }
}

/// Kills a process group when dropped, unless its leader was reaped (a group already
/// gone is fine).
struct ProcessGroup(Option<u32>);

impl ProcessGroup {
    fn reaped(&mut self) {
        self.0 = None;
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        if let Some(pid) = self
            .0
            .and_then(|id| i32::try_from(id).ok())
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

/// `name` in the work dir as the sandbox sees it.
fn inside(name: &str) -> PathBuf {
    PathBuf::from(WORK).join(name)
}

/// Puts the playbook in place and returns its path inside the sandbox: a file as it
/// is, an archive unpacked (by `tar`, confined, as the controller's user) under
/// `playbook/`.
async fn stage_playbook(
    work: &WorkDir,
    playbook: &ResourcePath,
    bytes: &[u8],
) -> Result<PathBuf, String> {
    let in_dir = PathBuf::from(WORK).join(PLAYBOOK_DIR);
    if playbook.kind != ARCHIVES {
        work.write(&format!("{PLAYBOOK_DIR}/{}", playbook.name), bytes)
            .map_err(|error| format!("work dir: {error}"))?;
        return Ok(in_dir.join(&playbook.name));
    }
    work.write(&playbook.name, bytes)
        .map_err(|error| format!("work dir: {error}"))?;
    work.open_playbook_dir()
        .map_err(|error| format!("work dir: {error}"))?;
    let mut tar = confined(work, Writable::PlaybookDir);
    tar.arg("tar")
        .arg("-xf")
        .arg(inside(&playbook.name))
        .arg("--no-same-owner")
        .arg("--no-same-permissions")
        .arg("-C")
        .arg(&in_dir);
    let unpacked = tar
        .output()
        .await
        .map_err(|error| format!("could not run tar in the sandbox ({BWRAP}): {error}"))?;
    if !unpacked.status.success() {
        return Err(format!(
            "archives/{} could not be unpacked: {}",
            playbook.name,
            String::from_utf8_lossy(&unpacked.stderr).trim()
        ));
    }
    // Only a regular file (read, never written: the directory is the controller's
    // now). A link would only point inside the sandbox's view, but a missing playbook
    // is better said here than by ansible-playbook.
    match std::fs::symlink_metadata(work.path(PLAYBOOK_DIR).join(&playbook.inner)) {
        Ok(meta) if meta.is_file() => Ok(in_dir.join(&playbook.inner)),
        _ => Err(format!(
            "archives/{} has no playbook file {}",
            playbook.name, playbook.inner
        )),
    }
}

/// The inventory of the one node, its pinned host key, the client key, the relay's
/// proxy and the variables.
fn write_connection(
    work: &WorkDir,
    step: &ServiceStep<'_>,
    target: &SshTarget,
    vars: &str,
) -> std::io::Result<()> {
    let key = std::fs::read(target.client_key.path())?;
    work.write("client_key", &key)?;
    let known_host = if target.port == 22 {
        target.host.clone()
    } else {
        format!("[{}]:{}", target.host, target.port)
    };
    work.write(
        "known_hosts",
        format!("{known_host} {}\n", target.host_key.to_openssh()).as_bytes(),
    )?;
    work.write(relay::PROXY_SCRIPT, relay::PROXY_SCRIPT_TEXT.as_bytes())?;
    let inventory = json!({"all": {"hosts": {inventory_name(step): {
        // The node's address names it for known_hosts; the connection itself goes
        // through the relay.
        "ansible_host": target.host,
        "ansible_port": target.port,
        "ansible_ssh_private_key_file": inside("client_key"),
        // The user goes to ssh, not to `ansible_user`: Ansible expands `~` (its
        // remote temp dir, `dest: ~/x`) as `~<ansible_user>`, the user's home in
        // the node's passwd file, while a local node's sessions have a HOME of
        // their own. Without `ansible_user`, `~` is the session's HOME.
        "ansible_ssh_common_args": format!(
            "-o User={} -o UserKnownHostsFile={} -o GlobalKnownHostsFile=/dev/null \
             -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes -o BatchMode=yes \
             -o ProxyUseFdpass=yes -o ProxyCommand=\"python3 {} {}\"",
            target.user,
            inside("known_hosts").display(),
            inside(relay::PROXY_SCRIPT).display(),
            inside(relay::SOCKET).display(),
        ),
        // Named, not discovered: discovery costs every step two more round trips to
        // the node (a shell listing interpreters, then Python reading the platform).
        // Through `env`, any `python3` on the node's PATH serves, as for shell steps; a
        // play's own `ansible_python_interpreter` still wins.
        "ansible_python_interpreter": PYTHON_INTERPRETER,
    }}}});
    work.write("inventory.json", inventory.to_string().as_bytes())?;
    work.write("vars.yml", vars.as_bytes())?;
    // Settings of our own only: not the host's /etc/ansible, not a file in the
    // playbook's tree.
    work.write("ansible.cfg", b"[defaults]\n")?;
    Ok(())
}

/// A command that runs a program (its first argument, added by the caller) as the
/// controller: confined, as its user, in a process group of its own, with an
/// environment of its own.
fn confined(work: &WorkDir, writable: Writable) -> Command {
    let mut command = Command::new(BWRAP);
    command.args(sandbox::arguments(
        &sandbox::system_entries(),
        work.root(),
        writable,
    ));
    let home = PathBuf::from(sandbox::HOME);
    command
        .env_clear()
        .env("PATH", CONTROLLER_PATH)
        .env("HOME", &home)
        .env("LANG", "C.UTF-8")
        .env("PYTHONUNBUFFERED", "1")
        .env("ANSIBLE_CONFIG", inside("ansible.cfg"))
        .env("ANSIBLE_HOME", home.join(".ansible"))
        .env("ANSIBLE_LOCAL_TEMP", home.join(".ansible/tmp"))
        .env("ANSIBLE_NOCOLOR", "1")
        .env("ANSIBLE_FORCE_COLOR", "0")
        .env("ANSIBLE_HOST_KEY_CHECKING", "True")
        .env("ANSIBLE_RETRY_FILES_ENABLED", "False")
        .env("ANSIBLE_STDOUT_CALLBACK", "default")
        .env("ANSIBLE_PIPELINING", "True")
        // A play that gathers facts gets them all but Facter's and Ohai's: on a node
        // with Puppet (the demo's balancer nodes, Corral's node image) Ansible's `facter`
        // subset runs `facter --puppet`, which loads Puppet: ~2 s of CPU a step, for
        // `facter_*` facts plays rarely read. A play asks for them with `gather_subset`.
        .env("ANSIBLE_GATHER_SUBSET", GATHER_SUBSET)
        // Files go through the SSH session itself: nodes need no sftp subsystem.
        .env("ANSIBLE_SSH_TRANSFER_METHOD", "piped")
        // One SSH connection for the whole step: a master whose socket is in the
        // private home (Ansible's default place), which dies with the sandbox when the
        // playbook ends.
        .env(
            "ANSIBLE_SSH_ARGS",
            "-o ControlMaster=auto -o ControlPersist=300s",
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Controller::TenantUser { uid, gid } = work.controller {
        command.uid(uid).gid(gid);
    }
    command
}

/// The variables file (`-e @vars.yml`): YAML in JSON's flow style. The action's
/// `extra_vars` are the catalog author's and may use Jinja (`"{{ corral_host }}:7070"`);
/// Corral's own values carry what users typed (the cluster's config, its name), so
/// every string of them is tagged `!unsafe`: Ansible never evaluates it as a template
/// (a config value `{{ lookup('pipe', ...) }}` stays that text).
fn vars_file(extra_vars: &Map<String, Value>, corral_vars: &Map<String, Value>) -> String {
    let mut entries: Vec<String> = extra_vars
        .iter()
        .map(|(name, value)| format!("{}: {value}", Value::from(name.as_str())))
        .collect();
    entries.extend(
        corral_vars
            .iter()
            .map(|(name, value)| format!("{}: {}", Value::from(name.as_str()), unsafe_yaml(value))),
    );
    format!("{{{}}}\n", entries.join(", "))
}

/// `value` in YAML flow style with every string tagged `!unsafe` (a JSON string is a
/// valid YAML double-quoted scalar).
fn unsafe_yaml(value: &Value) -> String {
    match value {
        Value::String(_) => format!("!unsafe {value}"),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(unsafe_yaml).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(object) => format!(
            "{{{}}}",
            object
                .iter()
                .map(|(key, value)| format!(
                    "{}: {}",
                    Value::from(key.as_str()),
                    unsafe_yaml(value)
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

/// The node's name in the inventory and in Ansible's output: its address as the
/// cluster knows it.
fn inventory_name(step: &ServiceStep<'_>) -> String {
    step.view.host()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corral_values_are_unsafe_and_extra_vars_are_not() {
        let extra = json!({"greeting": "{{ corral_host }}"});
        let corral = json!({"corral_config": {"motto": "{{ x }}", "ports": [1, "a\"b"]}});
        let (Value::Object(extra), Value::Object(corral)) = (extra, corral) else {
            unreachable!()
        };
        assert_eq!(
            vars_file(&extra, &corral),
            "{\"greeting\": \"{{ corral_host }}\", \"corral_config\": {\"motto\": !unsafe \
             \"{{ x }}\", \"ports\": [1, !unsafe \"a\\\"b\"]}}\n"
        );
    }

    #[test]
    fn the_first_failing_task_and_its_host_are_found() {
        let mut tracker = TaskTracker::default();
        for line in [
            "PLAY [all] *****",
            "TASK [Gathering Facts] *****",
            "ok: [10.0.0.2]",
            "TASK [Write the greeting [v2]] *****",
            "fatal: [10.0.0.2]: FAILED! => {\"msg\": \"boom\"}",
            "RUNNING HANDLER [restart] ****",
            "failed: [10.0.0.2] (item=x) => {}",
        ] {
            tracker.read_line(line);
        }
        assert_eq!(
            tracker.failed,
            Some(FailedTask {
                task: "Write the greeting [v2]".into(),
                host: "10.0.0.2".into()
            })
        );
    }
}
