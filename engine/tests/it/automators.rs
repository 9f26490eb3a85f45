//! Automators end to end on `local` nodes (`testdata/automators`: a catalog, the
//! playbooks and manifest under `files/`, trees under `archived/`): an Ansible playbook
//! and a Puppet manifest given values with spaces, quotes and `$(...)` write them
//! exactly, the playbook's HTTP server answers, Ansible's and Puppet's own lines are in
//! the job's output, a failing playbook names its task, and an automator Corral does not
//! have (Coopr's `chef-solo`) is refused before anything is made.

use std::io::{Read, Write};
use std::time::Duration;

use crate::lab::Lab;
use domain::names::{ClusterName, TemplateName};
use domain::solver::SolveRequest;
use engine::operations::{create_cluster, preview_create, CreateRequest, OperationError};
use engine::queue::{JobId, JobState, SubmitOptions, TaskState};
use engine::resources::ResourceKind;
use engine::service::ServiceError;
use engine::store::tenants::DEFAULT_TENANT_ID;
use engine::store::{now_ms, Backend};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/automators");
const JOB_LIMIT: Duration = Duration::from_secs(180);

/// The value both services are given, with everything a shell would act on.
const GREETING: &str =
    "hello \"world\", it's $(touch /tmp/corral-pwned) `id` ; exit 1 $HOME \\ done";

async fn lab(backend: Backend) -> Lab {
    let bundle = std::fs::read_to_string(format!("{FIXTURES}/catalog.json")).unwrap();
    let mut resources: Vec<(ResourceKind, &str, Vec<u8>)> =
        ["greeter.yml", "broken.yml", "motd.pp", "probe.yml"]
            .into_iter()
            .map(|name| {
                let bytes = std::fs::read(format!("{FIXTURES}/files/{name}")).unwrap();
                (ResourceKind::Files, name, bytes)
            })
            .collect();
    for (name, folder) in [("play.tgz", "play"), ("puppet.tgz", "puppet")] {
        resources.push((ResourceKind::Archives, name, tgz(folder)));
    }
    Lab::start_catalog(backend, &bundle, &resources).await
}

/// `archived/<folder>` packed as a gzipped tar of its contents.
fn tgz(folder: &str) -> Vec<u8> {
    let packed = std::process::Command::new("tar")
        .args([
            "-czf",
            "-",
            "-C",
            &format!("{FIXTURES}/archived/{folder}"),
            ".",
        ])
        .output()
        .unwrap();
    assert!(packed.status.success());
    packed.stdout
}

/// Every line the job's tasks wrote, stdout and stderr.
async fn job_output(lab: &Lab, job_id: &JobId) -> String {
    let mut text = String::new();
    for task in lab.queue.job_tasks(job_id).await.unwrap() {
        for attempt in lab.queue.task_attempts(&task.id).await.unwrap() {
            text.push_str(&attempt.stdout);
            text.push_str(&attempt.stderr);
        }
    }
    text
}

fn http_get(host: &str, port: u16, path: &str) -> String {
    let mut stream = std::net::TcpStream::connect((host, port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

async fn ansible_and_puppet_write_exact_values_and_serve(backend: Backend) {
    let _ = std::fs::remove_file("/tmp/corral-pwned");
    let _ = std::fs::remove_file("/tmp/corral-pwned-ansible");
    let lab = lab(backend).await;
    let (cluster, job) = lab.create_from("automators", "automators", 2).await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);

    let nodes = lab.store.list_nodes(&cluster.id).await.unwrap();
    let greeter_node = nodes
        .iter()
        .find(|node| node.services_json.contains("greeter"))
        .unwrap();
    let motd_node = nodes
        .iter()
        .find(|node| node.services_json.contains("motd"))
        .unwrap();
    let greeter_host = greeter_node.hostname.clone().unwrap();

    let (code, greeting) = lab
        .run_on_node(
            &cluster.id,
            greeter_node.number,
            "cat corral/services/greeter/www/greeting.txt",
        )
        .await;
    assert_eq!((code, greeting.as_str()), (0, GREETING));
    let (_, corral) = lab
        .run_on_node(
            &cluster.id,
            greeter_node.number,
            "cat corral/services/greeter/www/corral.json",
        )
        .await;
    let corral: serde_json::Value = serde_json::from_str(&corral).unwrap();
    assert_eq!(corral["host"], greeter_host.as_str());
    assert_eq!(corral["cluster"], "automators");
    assert_eq!(corral["port"], 7171);
    // The cluster's config is data, never a template Ansible evaluates.
    assert_eq!(
        corral["motto"],
        "{{ lookup('pipe', 'touch /tmp/corral-pwned-ansible') }}"
    );
    assert!(!std::path::Path::new("/tmp/corral-pwned-ansible").exists());

    let (code, motd) = lab
        .run_on_node(
            &cluster.id,
            motd_node.number,
            "cat corral/services/motd/motd.txt; echo; cat corral/services/motd/node.txt",
        )
        .await;
    assert_eq!(code, 0);
    assert_eq!(
        motd,
        format!(
            "{GREETING} on {greeter_host}\nautomators node {} install\n",
            motd_node.number
        )
    );
    assert!(
        !std::path::Path::new("/tmp/corral-pwned").exists(),
        "a value ran as a command"
    );

    // The playbook's server answers with the greeting.
    let answer = http_get(&greeter_host, 7171, "/greeting.txt");
    assert!(answer.starts_with("HTTP/1.0 200"), "{answer}");
    assert!(answer.ends_with(GREETING), "{answer}");

    // What a step costs with each automator (for the record, not a check).
    for task in lab.queue.job_tasks(&job).await.unwrap() {
        let Some(service) = &task.service else {
            continue;
        };
        for attempt in lab.queue.task_attempts(&task.id).await.unwrap() {
            eprintln!(
                "automator_step node={} service={service} action={} ms={}",
                task.node,
                task.action.as_str(),
                attempt.finished_at_ms - attempt.started_at_ms
            );
        }
    }

    // Ansible's and Puppet's own lines are the tasks' output.
    let output = job_output(&lab, &job).await;
    for line in [
        "TASK [Write the greeting]",
        "PLAY RECAP",
        "Notice: Applied catalog",
        "puppet applied changes",
    ] {
        assert!(output.contains(line), "{line:?} missing from:\n{output}");
    }

    let deleted = lab
        .change(
            &cluster.id,
            engine::operations::ClusterChange::Delete { force: false },
        )
        .await;
    assert_eq!(lab.wait(&deleted, JOB_LIMIT).await, JobState::Succeeded);
    assert_eq!(lab.live_processes(), Vec::<i32>::new());
}

async fn a_failing_playbook_names_its_task(backend: Backend) {
    let lab = lab(backend).await;
    let (_cluster, job) = lab.create_from("broken", "broken", 1).await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Failed);
    let tasks = lab.queue.job_tasks(&job).await.unwrap();
    let failed = tasks
        .iter()
        .find(|task| task.state == TaskState::Failed)
        .unwrap();
    let attempts = lab.queue.task_attempts(&failed.id).await.unwrap();
    let error = attempts.last().unwrap().error.clone().unwrap();
    assert!(
        error.contains("broken install")
            && error.contains("failed at Ansible task \"Check the impossible\" on host"),
        "{error}"
    );
    let output = job_output(&lab, &job).await;
    assert!(output.contains("fatal: ["), "{output}");
    // The job's error, which `corral job show` and the job page's failure panel show.
    let job_error = lab.queue.job(&job).await.unwrap().error.unwrap();
    assert!(
        job_error.contains("failed at Ansible task \"Check the impossible\""),
        "{job_error}"
    );
}

async fn chef_solo_is_refused_before_anything_is_made(backend: Backend) {
    let lab = lab(backend).await;
    let request = CreateRequest {
        tenant_id: DEFAULT_TENANT_ID.to_owned(),
        owner_id: None,
        name: ClusterName::parse("legacy").unwrap(),
        template: TemplateName::parse("legacy").unwrap(),
        solve: SolveRequest::of_size(1),
        config: serde_json::Map::new(),
    };
    let refused = preview_create(&lab.store, &request, now_ms())
        .await
        .unwrap_err();
    assert!(matches!(refused, OperationError::UnsupportedAutomators(_)));
    assert_eq!(
        refused.to_string(),
        "service legacy: action install uses automator chef-solo, which is not available \
         here: automators are shell, ansible, puppet"
    );
    let ServiceError::Invalid { details, .. } = ServiceError::from(refused) else {
        panic!("not an invalid request");
    };
    assert_eq!(
        details[0].path,
        "services.legacy.provisioner.actions.install.type"
    );
    let submitted = create_cluster(&lab.queue, &request, SubmitOptions::default(), now_ms()).await;
    assert!(submitted.is_err());
    assert!(lab
        .store
        .list_clusters(DEFAULT_TENANT_ID)
        .await
        .unwrap()
        .is_empty());
}

/// Ansible's controller side runs confined, so a tenant that may not have `local`
/// nodes may use it with any provider (a docker-only tenant runs the demo's
/// kv-automated in `demo_templates::kv_automated_on_docker`).
async fn ansible_is_open_to_tenants_without_local_nodes(backend: Backend) {
    let lab = lab(backend).await;
    let mut bundle: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{FIXTURES}/catalog.json")).unwrap())
            .unwrap();
    bundle["providers"] = serde_json::json!([{"name": "docker", "providertype": "docker"}]);
    bundle["hardwaretypes"][0]["providermap"] = serde_json::json!({"docker": {"flavor": "small"}});
    bundle["imagetypes"][0]["providermap"] =
        serde_json::json!({"docker": {"image": "corral-node"}});
    for template in bundle["clustertemplates"].as_array_mut().unwrap() {
        template["defaults"]["provider"] = "docker".into();
    }
    let tenant = lab
        .store
        .create_tenant(&engine::store::tenants::NewTenant {
            name: "outsiders".to_owned(),
            max_clusters: None,
            max_nodes: None,
            provider_types: vec!["docker".to_owned()],
        })
        .await
        .unwrap();
    let catalog = domain::catalog::coopr::import_bundle(&bundle.to_string()).unwrap();
    engine::catalog::import(&lab.store, &tenant.id, &catalog, None, now_ms())
        .await
        .unwrap();
    let request = CreateRequest {
        tenant_id: tenant.id.clone(),
        owner_id: None,
        name: ClusterName::parse("probe").unwrap(),
        template: TemplateName::parse("automators").unwrap(),
        solve: SolveRequest::of_size(2),
        config: serde_json::Map::new(),
    };
    preview_create(&lab.store, &request, now_ms())
        .await
        .expect("a docker-only tenant may run playbooks");
}

/// A playbook's `delegate_to: localhost` task is tenant code on this host: it sees
/// neither this host's /tmp, nor its loopback services, nor root's files, and can
/// change neither the system nor its own run's files; the node is still reached,
/// through the relay.
async fn the_controller_is_confined(backend: Backend) {
    const HOST_FILE: &str = "/tmp/corral-confinement-probe";
    std::fs::write(HOST_FILE, "on the host").unwrap();
    std::fs::set_permissions(
        HOST_FILE,
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    // PostgreSQL listens on this host's loopback in every environment these tests run
    // in: the probe must not reach what this process can.
    std::net::TcpStream::connect(("127.0.0.1", 5432)).expect("postgres on the host's loopback");
    let lab = lab(backend).await;
    let (cluster, job) = lab.create_from("probe", "probe", 1).await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let output = job_output(&lab, &job).await;
    for seen in [
        "probe host_tmp_file=no",
        "probe host_loopback=no",
        "probe write_etc=no",
        "probe write_work_dir=no",
        "probe root_home=no",
        "probe relay_socket=yes",
    ] {
        assert!(output.contains(seen), "{seen:?} missing from:\n{output}");
    }
    assert!(!std::path::Path::new("/etc/corral-confinement-probe").exists());
    let node = &lab.store.list_nodes(&cluster.id).await.unwrap()[0];
    let (code, reached) = lab
        .run_on_node(&cluster.id, node.number, "cat probe.txt")
        .await;
    assert_eq!((code, reached.as_str()), (0, "reached"));
}

/// The first review's root escalation: a process of the tenant's node user (left
/// running by a shell step) plants links in the Ansible run's work dir while root
/// writes the run's files, so that root writes into a file of the link's choosing.
/// Root now writes only into a directory that user cannot write: the racer sees the
/// work dir and plants nothing, and the target is untouched. (It also sees the work dirs
/// of the tests beside it: the `playbook/` of a run unpacking an archive is that user's
/// by design, and root never writes there, so the racer does not count links in it.)
async fn a_racing_tenant_process_plants_nothing_in_the_work_dir(backend: Backend) {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: the race needs nodes of their own OS user (this process as root)");
        return;
    }
    const TARGET: &str = "/tmp/corral-race-target";
    const RACER: &str = "/tmp/corral-race-work-dir.sh";
    std::fs::write(TARGET, "root's").unwrap();
    std::fs::copy(format!("{FIXTURES}/race_work_dir.sh"), RACER).unwrap();
    for path in [TARGET, RACER] {
        std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o644))
            .unwrap();
    }
    let lab = lab(backend).await;
    let (racer_cluster, job) = lab.create_from("marker", "racer", 1).await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let racer = lab.store.list_nodes(&racer_cluster.id).await.unwrap()[0].number;
    let (code, _) = lab
        .run_on_node(
            &racer_cluster.id,
            racer,
            &format!("setsid nohup bash {RACER} {TARGET} >/dev/null 2>&1 </dev/null &"),
        )
        .await;
    assert_eq!(code, 0);

    // Two runs, so the racer is surely looping when the second one's files are written.
    for name in ["probe-a", "probe-b"] {
        let (_cluster, job) = lab.create_from("probe", name, 1).await;
        assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    }
    let (_, _) = lab
        .run_on_node(&racer_cluster.id, racer, "touch stop")
        .await;
    let (_, seen) = lab.run_on_node(&racer_cluster.id, racer, "cat seen").await;
    let (_, planted) = lab
        .run_on_node(&racer_cluster.id, racer, "cat planted")
        .await;
    assert!(
        seen.lines().count() >= 1,
        "the racer never saw a work dir, so it proved nothing"
    );
    assert_eq!(planted, "", "links planted in a run's work dir");
    assert_eq!(std::fs::read_to_string(TARGET).unwrap(), "root's");
    let meta = std::fs::metadata(TARGET).unwrap();
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&meta), 0);
}

/// A playbook tree and a Puppet module path shipped as archives: the playbook's role
/// and the manifest's module are found inside them.
async fn playbooks_and_modules_come_from_archives(backend: Backend) {
    let lab = lab(backend).await;
    let (cluster, job) = lab.create_from("archived", "archived", 1).await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let node = &lab.store.list_nodes(&cluster.id).await.unwrap()[0];
    let (code, written) = lab
        .run_on_node(
            &cluster.id,
            node.number,
            "cat corral/services/role-play/role.txt; echo; \
             cat corral/services/module-manifest/module.txt",
        )
        .await;
    assert_eq!(code, 0);
    assert_eq!(
        written,
        format!(
            "from the role on {}\nfrom the module",
            node.hostname.clone().unwrap()
        )
    );
}

/// A play that says nothing of facts, as most playbooks written elsewhere: it gathers
/// them (Ansible's default, kept) and reads Ansible's own, network and hardware ones
/// included, with the node's Python 3 (named, not discovered). Corral leaves out only
/// the `facter` and `ohai` subsets, which a play asks for with `gather_subset`.
const FACTS_PLAYBOOK: &str = r#"- name: Facts
  hosts: all
  tasks:
    - name: Record what the facts say
      ansible.builtin.copy:
        dest: "~/corral/services/facts/facts.txt"
        content: "{{ ansible_facts.system }} lo={{ 'lo' in ansible_facts.interfaces }} mounts={{ ansible_facts.mounts is defined }} python{{ ansible_facts.python.version.major }}"
"#;

async fn a_play_that_gathers_facts_reads_them(backend: Backend) {
    let mut bundle: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{FIXTURES}/catalog.json")).unwrap())
            .unwrap();
    bundle["services"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "name": "facts",
            "provisioner": {"actions": {"install": {
                "type": "ansible", "fields": {"playbook": "files/facts.yml"}
            }}}
        }));
    bundle["clustertemplates"].as_array_mut().unwrap().push(serde_json::json!({
        "name": "facts",
        "compatibility": {"services": ["facts"], "hardwaretypes": ["small"], "imagetypes": ["debian"]},
        "defaults": {"services": ["facts"], "provider": "local", "hardwaretype": "small",
                     "imagetype": "debian", "config": {}}
    }));
    let lab = Lab::start_catalog(
        backend,
        &bundle.to_string(),
        &[(
            ResourceKind::Files,
            "facts.yml",
            FACTS_PLAYBOOK.as_bytes().to_vec(),
        )],
    )
    .await;
    let (cluster, job) = lab.create_from("facts", "facts", 1).await;
    assert_eq!(
        lab.wait(&job, JOB_LIMIT).await,
        JobState::Succeeded,
        "{}",
        job_output(&lab, &job).await
    );
    let output = job_output(&lab, &job).await;
    assert!(output.contains("TASK [Gathering Facts]"), "{output}");
    let node = &lab.store.list_nodes(&cluster.id).await.unwrap()[0];
    let (code, facts) = lab
        .run_on_node(
            &cluster.id,
            node.number,
            "cat corral/services/facts/facts.txt",
        )
        .await;
    assert_eq!(
        (code, facts.as_str()),
        (0, "Linux lo=True mounts=True python3")
    );
}

engine::on_both_backends!(
    a_play_that_gathers_facts_reads_them,
    playbooks_and_modules_come_from_archives,
    ansible_is_open_to_tenants_without_local_nodes,
    the_controller_is_confined,
    a_racing_tenant_process_plants_nothing_in_the_work_dir,
    ansible_and_puppet_write_exact_values_and_serve,
    a_failing_playbook_names_its_task,
    chef_solo_is_refused_before_anything_is_made,
);
