//! `automators`: what Corral's Ansible and Puppet steps cost against the same work done
//! by hand, and the demo's `kv-automated` created end to end against the same services
//! written in shell (issue 42).
//!
//! One `corral serve` (the binary next to this one, or `CORRAL_BIN`) on the embedded
//! default (SQLite, local nodes, the demo catalog loaded at its first start). The client
//! signs in as the first admin and imports the demo catalog plus `automators/catalog.json`:
//! `kv-shell`, kv-automated's layout with its services in shell (the demo's `kv`, and
//! `lb-kv`, the demo's balancer in front of the kv nodes).
//!
//! - Creates: `kv-shell` and `kv-automated` of `NODES` nodes, alternately, `--runs` times
//!   each; each is deleted before the next create. A create's time is its job's, from
//!   the server's own timestamps (submitted to finished). The first kv-automated job's
//!   tasks are printed on stderr, as a timeline.
//! - Steps: a kv-automated of 2 nodes (one kv-ansible, one lb-puppet), then `--runs`
//!   rounds of: a `start` change of kv-ansible (its step runs `kv.yml --tags start`, 3
//!   tasks: settings written, server already running, health answered) and, by hand on
//!   the same node, the same playbook with the same variables: `ansible-playbook`
//!   tuned (pipelining, an SSH ControlPersist master, piped transfers, the interpreter
//!   given), its master fresh each run as a Corral step's is (`baseline_s`), and kept from
//!   the run before (`baseline_warm_s`, which no single step can have); then a `start`
//!   change of lb-puppet (`puppet apply` of `lb.pp`, its exec already satisfied) and the
//!   same `puppet apply` by hand over an SSH master of its own (`puppet_baseline_s`). A
//!   step's time is its task's, from the server (claimed to recorded). Medians.
//!
//! Prints one line: `automators ansible_step_s= baseline_s= ratio= baseline_warm_s=
//! puppet_step_s= puppet_baseline_s= puppet_ratio= kv_automated_s= kv_shell_s= nodes=
//! runs=`. The targets (issue 42): `ratio` ≤ 1.2 and `kv_automated_s` ≤ 10 at 3 nodes.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

use api_types::{ClusterChangeRequest, ClusterDetail, JobView, NodeView, TaskAction, TaskView};
use engine::provider::{LocalNodeState, NodeRecord, LOCAL_PROVIDER};
use serde_json::{json, Value};
use tokio::process::Command;

use crate::served::{
    create_request, failed, sign_in, wait_for_job, with_server_log, Client, Server,
};
use crate::BenchError;

/// The services and template `bench automators` adds to the demo catalog.
const EXTRA_CATALOG: &str = include_str!("automators/catalog.json");
/// The size the target is set at.
const NODES: u32 = 3;
const WORKER_SLOTS: usize = 8;
const ANSIBLE_SERVICE: &str = "kv-ansible";
const PUPPET_SERVICE: &str = "lb-puppet";
/// The lb-puppet `start` step's facts, as the demo catalog gives them.
const LB_PORT: &str = "8000";
/// The kv-ansible `start` step's port, as the demo catalog gives it.
const KV_PORT: u16 = 7070;

pub fn run(args: &[String]) -> Result<String, BenchError> {
    let runs = crate::parse_count(args, "--runs", 3)?;
    let corral = crate::corral_binary()?;
    eprintln!("automators: corral is {}", corral.display());
    crate::run_in_scratch_dir("corral-automators-", |base| async move {
        let data = base.join("data");
        std::fs::create_dir_all(&data)?;
        let server = Server::start(&corral, &data, WORKER_SLOTS)?;
        let measured = measure(&server, &base, &data, runs).await;
        drop(server);
        engine::provider::LocalProvider::kill_everything_under(&data.join("nodes"));
        measured.map_err(|error| with_server_log(error, &data))
    })
}

async fn measure(
    server: &Server,
    base: &Path,
    data: &Path,
    runs: usize,
) -> Result<String, BenchError> {
    let client = sign_in(server).await?;
    import_catalog(&client).await?;

    // Alternately, so that whatever else loads the machine weighs on both alike.
    let (mut automated, mut shell) = (Vec::new(), Vec::new());
    for run in 0..runs {
        let created = create(&client, "kv-shell", NODES, &format!("shell-{run}")).await?;
        shell.push(created.seconds());
        delete(&client, &created.cluster_id).await?;
        let created = create(&client, "kv-automated", NODES, &format!("automated-{run}")).await?;
        automated.push(created.seconds());
        if run == 0 {
            eprintln!("{}", timeline(&client, &created.job).await?);
        }
        delete(&client, &created.cluster_id).await?;
        eprintln!(
            "automators: create run {run}: kv-shell {:.2} s, kv-automated {:.2} s",
            shell[run], automated[run]
        );
    }

    let steps = create(&client, "kv-automated", 2, "steps").await?;
    let detail = client.cluster(&steps.cluster_id).await?;
    let kv_node = carrying(&detail.nodes, ANSIBLE_SERVICE)?;
    let lb_node = carrying(&detail.nodes, PUPPET_SERVICE)?;
    let by_hand = ByHand::new(
        base.join("by-hand"),
        node_record(data, &steps.cluster_id, kv_node)?,
        node_record(data, &steps.cluster_id, lb_node)?,
        &detail,
        kv_node,
        lb_node,
    )?;
    // The warm master's first run, not counted.
    by_hand.ansible_playbook(Master::Kept).await?;
    let mut rounds = Rounds::default();
    for run in 0..runs {
        rounds
            .ansible_step
            .push(step_seconds(&client, &steps.cluster_id, ANSIBLE_SERVICE).await?);
        rounds
            .baseline
            .push(by_hand.ansible_playbook(Master::Fresh(run)).await?);
        rounds
            .baseline_warm
            .push(by_hand.ansible_playbook(Master::Kept).await?);
        rounds
            .puppet_step
            .push(step_seconds(&client, &steps.cluster_id, PUPPET_SERVICE).await?);
        rounds.puppet_baseline.push(by_hand.puppet_apply().await?);
        eprintln!(
            "automators: step run {run}: ansible step {:.2} s, by hand {:.2} s (warm master \
             {:.2} s); puppet step {:.2} s, by hand {:.2} s",
            rounds.ansible_step[run],
            rounds.baseline[run],
            rounds.baseline_warm[run],
            rounds.puppet_step[run],
            rounds.puppet_baseline[run]
        );
    }
    by_hand.close_masters().await;
    delete(&client, &steps.cluster_id).await?;

    let ansible_step = median(&rounds.ansible_step);
    let baseline = median(&rounds.baseline);
    let puppet_step = median(&rounds.puppet_step);
    let puppet_baseline = median(&rounds.puppet_baseline);
    Ok(format!(
        "automators ansible_step_s={ansible_step:.2} baseline_s={baseline:.2} ratio={:.2} \
         baseline_warm_s={:.2} puppet_step_s={puppet_step:.2} \
         puppet_baseline_s={puppet_baseline:.2} puppet_ratio={:.2} kv_automated_s={:.2} \
         kv_shell_s={:.2} nodes={NODES} runs={runs}",
        ansible_step / baseline,
        median(&rounds.baseline_warm),
        puppet_step / puppet_baseline,
        median(&automated),
        median(&shell),
    ))
}

#[derive(Default)]
struct Rounds {
    ansible_step: Vec<f64>,
    baseline: Vec<f64>,
    baseline_warm: Vec<f64>,
    puppet_step: Vec<f64>,
    puppet_baseline: Vec<f64>,
}

/// The demo catalog with the bench's services and templates added (an import replaces
/// the whole catalog; the demo's plugin resources stay staged).
async fn import_catalog(client: &Client) -> Result<(), BenchError> {
    let mut bundle: Value = serde_json::from_str(engine::demo::CATALOG_JSON).map_err(failed)?;
    let extra: Value = serde_json::from_str(EXTRA_CATALOG).map_err(failed)?;
    for kind in ["services", "clustertemplates"] {
        let (Some(list), Some(added)) = (bundle[kind].as_array_mut(), extra[kind].as_array())
        else {
            return Err(failed(format!("the catalogs have no {kind} list")));
        };
        list.extend(added.iter().cloned());
    }
    client.import_catalog(&bundle, false).await?;
    Ok(())
}

struct Created {
    cluster_id: String,
    job: JobView,
}

impl Created {
    /// The job's time by the server's clock: submitted to finished.
    fn seconds(&self) -> f64 {
        let finished = self.job.finished_at_ms.unwrap_or(self.job.created_at_ms);
        (finished - self.job.created_at_ms) as f64 / 1000.0
    }
}

async fn create(
    client: &Client,
    template: &str,
    size: u32,
    name: &str,
) -> Result<Created, BenchError> {
    let submitted = client
        .create_cluster(&create_request(name, template, size as usize))
        .await?;
    let job = wait_for_job(client, &submitted.job_id).await?;
    Ok(Created {
        cluster_id: submitted.cluster.id,
        job,
    })
}

async fn delete(client: &Client, cluster_id: &str) -> Result<(), BenchError> {
    let deleted = client.delete_cluster(cluster_id, false).await?;
    wait_for_job(client, &deleted.job_id).await?;
    Ok(())
}

async fn tasks(client: &Client, job_id: &str) -> Result<Vec<TaskView>, BenchError> {
    Ok(client.job_tasks(job_id, 500).await?.items)
}

/// A `start` change of `service` alone; the seconds its step took.
async fn step_seconds(client: &Client, cluster_id: &str, service: &str) -> Result<f64, BenchError> {
    let change = ClusterChangeRequest::Start {
        services: Some(vec![service.to_owned()]),
    };
    let submitted = client.change_cluster(cluster_id, &change).await?;
    wait_for_job(client, &submitted.job_id).await?;
    let steps: Vec<f64> = tasks(client, &submitted.job_id)
        .await?
        .iter()
        .filter(|task| task.service.as_deref() == Some(service) && task.action == TaskAction::Start)
        .filter_map(task_seconds)
        .collect();
    match steps.as_slice() {
        [seconds] => Ok(*seconds),
        other => Err(failed(format!(
            "the start of {service} ran {} steps, not one",
            other.len()
        ))),
    }
}

fn task_seconds(task: &TaskView) -> Option<f64> {
    Some((task.finished_at_ms? - task.started_at_ms?) as f64 / 1000.0)
}

/// The job's tasks as they ran: start and end from the job's submission, and what ran.
async fn timeline(client: &Client, job: &JobView) -> Result<String, BenchError> {
    let mut tasks = tasks(client, &job.id).await?;
    tasks.sort_by_key(|task| (task.started_at_ms, task.number));
    let mut text = format!(
        "automators: the first kv-automated job ({} tasks):",
        tasks.len()
    );
    for task in &tasks {
        let at =
            |ms: Option<i64>| ms.map_or(f64::NAN, |ms| (ms - job.created_at_ms) as f64 / 1000.0);
        text.push_str(&format!(
            "\n  {:6.2} → {:6.2} s  node {} {}",
            at(task.started_at_ms),
            at(task.finished_at_ms),
            task.node,
            task.label()
        ));
    }
    Ok(text)
}

fn carrying<'a>(nodes: &'a [NodeView], service: &str) -> Result<&'a NodeView, BenchError> {
    nodes
        .iter()
        .find(|node| node.services.iter().any(|name| name == service))
        .ok_or_else(|| failed(format!("no node carries {service}")))
}

/// The local node's record, from its node dir in the server's data dir (named by the
/// node's provider id, `<cluster id>-<number>`).
fn node_record(data: &Path, cluster_id: &str, node: &NodeView) -> Result<NodeRecord, BenchError> {
    let path = data
        .join("nodes")
        .join(format!("{cluster_id}-{}", node.number))
        .join("node.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|error| failed(format!("{}: {error}", path.display())))?;
    let record: NodeRecord = serde_json::from_str(&text).map_err(failed)?;
    if record.provider != LOCAL_PROVIDER {
        return Err(failed(format!("{} is not a local node", path.display())));
    }
    Ok(record)
}

/// Which SSH master an `ansible-playbook` run by hand uses.
#[derive(Debug, Clone, Copy)]
enum Master {
    /// A new one, closed when the run ends (as a Corral step's is); `n` names its dir.
    Fresh(usize),
    /// The one the previous `Kept` run left.
    Kept,
}

/// The same work as the steps, done by hand against the same nodes: a tuned
/// `ansible-playbook` and `puppet apply` over plain SSH, no sandbox, no relay, no queue.
struct ByHand {
    dir: PathBuf,
    lb: NodeRecord,
    /// The lb node's session HOME.
    lb_home: PathBuf,
    /// The variables kv-ansible's start step gets (those its tasks use).
    lb_facts: Vec<(String, String)>,
}

impl ByHand {
    fn new(
        dir: PathBuf,
        kv: NodeRecord,
        lb: NodeRecord,
        detail: &ClusterDetail,
        kv_node: &NodeView,
        lb_node: &NodeView,
    ) -> Result<Self, BenchError> {
        std::fs::create_dir_all(&dir)?;
        let playbook = engine::demo::RESOURCES
            .iter()
            .find(|(_, name, _)| *name == "kv.yml")
            .map(|(_, _, bytes)| *bytes)
            .ok_or_else(|| failed("the demo has no kv.yml"))?;
        std::fs::write(dir.join("kv.yml"), playbook)?;
        std::fs::write(dir.join("ansible.cfg"), "[defaults]\n")?;
        let mut known_hosts = String::new();
        for record in [&kv, &lb] {
            known_hosts.push_str(&format!(
                "[{}]:{} {}\n",
                record.host,
                record.port,
                record.host_key.to_openssh()
            ));
        }
        std::fs::write(dir.join("known_hosts"), known_hosts)?;
        let kv_host = kv_node.address.clone().unwrap_or_else(|| kv.host.clone());
        let inventory = json!({"all": {"hosts": {kv_host.clone(): {
            "ansible_host": kv.host,
            "ansible_port": kv.port,
            "ansible_ssh_private_key_file": kv.client_key_path,
            "ansible_ssh_common_args": format!(
                "-o User={} {}", kv.user, ssh_options(&dir).join(" ")
            ),
            "ansible_python_interpreter": "/usr/bin/python3",
        }}}});
        std::fs::write(dir.join("inventory.json"), inventory.to_string())?;
        let vars = json!({
            "kv_port": KV_PORT,
            "kv_leader": kv_host,
            "corral_host": kv_host,
            "corral_node": kv_node.number,
            "corral_cluster_name": detail.cluster.name,
            "corral_service": ANSIBLE_SERVICE,
        });
        std::fs::write(dir.join("vars.json"), vars.to_string())?;
        let lb_home = lb
            .state_as::<LocalNodeState>(LOCAL_PROVIDER)
            .map_err(failed)?
            .home();
        let lb_host = lb_node.address.clone().unwrap_or_else(|| lb.host.clone());
        let lb_facts = vec![
            ("corral_action", "start".to_owned()),
            ("corral_host", lb_host),
            ("corral_node", lb_node.number.to_string()),
            ("corral_cluster_name", detail.cluster.name.clone()),
            (
                "corral_service_dir",
                lb_home
                    .join("corral/services")
                    .join(PUPPET_SERVICE)
                    .display()
                    .to_string(),
            ),
            ("lb_port", LB_PORT.to_owned()),
        ]
        .into_iter()
        .map(|(name, value)| (format!("FACTER_{name}"), value))
        .collect();
        Ok(Self {
            dir,
            lb,
            lb_home,
            lb_facts,
        })
    }

    fn control_dir(&self, master: Master) -> PathBuf {
        match master {
            Master::Fresh(run) => self.dir.join(format!("cp-{run}")),
            Master::Kept => self.dir.join("cp-kept"),
        }
    }

    /// One run of kv.yml's start tasks against the kv node; its seconds.
    async fn ansible_playbook(&self, master: Master) -> Result<f64, BenchError> {
        let control = self.control_dir(master);
        std::fs::create_dir_all(&control)?;
        let home = self.dir.join("home");
        let mut command = Command::new("ansible-playbook");
        command
            .current_dir(&self.dir)
            .env("ANSIBLE_CONFIG", self.dir.join("ansible.cfg"))
            .env("ANSIBLE_HOME", &home)
            .env("ANSIBLE_LOCAL_TEMP", home.join("tmp"))
            .env("ANSIBLE_NOCOLOR", "1")
            .env("ANSIBLE_RETRY_FILES_ENABLED", "False")
            .env("ANSIBLE_HOST_KEY_CHECKING", "True")
            .env("ANSIBLE_PIPELINING", "True")
            .env("ANSIBLE_SSH_TRANSFER_METHOD", "piped")
            .env(
                "ANSIBLE_SSH_ARGS",
                "-o ControlMaster=auto -o ControlPersist=120s",
            )
            .env("ANSIBLE_SSH_CONTROL_PATH_DIR", &control)
            .args([
                "--inventory",
                "inventory.json",
                "--extra-vars",
                "@vars.json",
            ])
            .args(["--tags", "start", "kv.yml"]);
        let seconds = timed(command, "ansible-playbook", &[0]).await?;
        if let Master::Fresh(_) = master {
            close_masters_in(&control).await;
        }
        Ok(seconds)
    }

    /// One `puppet apply` of lb.pp with the lb-puppet start step's facts, on the lb node
    /// over an SSH master of its own (opened by the first run); its seconds.
    async fn puppet_apply(&self) -> Result<f64, BenchError> {
        let mut remote = vec!["env".to_owned()];
        remote.extend(
            self.lb_facts
                .iter()
                .map(|(name, value)| format!("{name}={}", domain::macros::shell_quote(value))),
        );
        remote.push("puppet apply --detailed-exitcodes --color=false".to_owned());
        remote.push(domain::macros::shell_quote(
            &self
                .lb_home
                .join("corral/resources/files/lb.pp")
                .display()
                .to_string(),
        ));
        let mut command = Command::new("ssh");
        command
            .args(ssh_options(&self.dir))
            .arg("-o")
            .arg(format!(
                "ControlPath={}",
                self.dir.join("puppet-master").display()
            ))
            .args(["-o", "ControlMaster=auto", "-o", "ControlPersist=120s"])
            .arg("-i")
            .arg(&self.lb.client_key_path)
            .arg("-p")
            .arg(self.lb.port.to_string())
            .arg(format!("{}@{}", self.lb.user, self.lb.host))
            .arg(remote.join(" "));
        // --detailed-exitcodes: 2 is changes applied, a success.
        timed(command, "puppet apply", &[0, 2]).await
    }

    /// Ends the masters left running.
    async fn close_masters(&self) {
        close_masters_in(&self.control_dir(Master::Kept)).await;
        close_master(&self.dir.join("puppet-master")).await;
    }
}

/// The pinned host keys and the options a careful hand run uses.
fn ssh_options(dir: &Path) -> Vec<String> {
    [
        format!("UserKnownHostsFile={}", dir.join("known_hosts").display()),
        "GlobalKnownHostsFile=/dev/null".to_owned(),
        "StrictHostKeyChecking=yes".to_owned(),
        "IdentitiesOnly=yes".to_owned(),
        "BatchMode=yes".to_owned(),
    ]
    .into_iter()
    .flat_map(|option| ["-o".to_owned(), option])
    .collect()
}

/// Runs `command` to its end: its seconds, or its output when it did not exit with one
/// of `success`.
async fn timed(mut command: Command, what: &str, success: &[i32]) -> Result<f64, BenchError> {
    command.stdin(Stdio::null()).kill_on_drop(true);
    let started = Instant::now();
    let output = command.output().await?;
    let seconds = started.elapsed().as_secs_f64();
    match output.status.code() {
        Some(code) if success.contains(&code) => Ok(seconds),
        _ => Err(failed(format!(
            "{what} by hand failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))),
    }
}

/// Ends every SSH master whose socket is in `dir`.
async fn close_masters_in(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        close_master(&entry.path()).await;
    }
}

async fn close_master(socket: &Path) {
    if !socket.exists() {
        return;
    }
    let _ = Command::new("ssh")
        .arg("-o")
        .arg(format!("ControlPath={}", socket.display()))
        .args(["-O", "exit", "node"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await;
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn the_extra_catalog_adds_services_and_templates() {
        let extra: Value = serde_json::from_str(EXTRA_CATALOG).unwrap();
        assert!(extra["services"]
            .as_array()
            .is_some_and(|list| !list.is_empty()));
        assert!(extra["clustertemplates"]
            .as_array()
            .is_some_and(|list| !list.is_empty()));
    }
}
