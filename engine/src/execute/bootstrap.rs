//! Bootstrap: prepares a confirmed node for service actions. Makes Corral's folders
//! under the node's home (one per service of the node), writes the node's facts
//! ([`node_scripts::NODE_FACTS`]) and copies
//! the tenant's staged plugin resources, skipping those already there (by checksum), so
//! a re-bootstrap (reconfigure) ships only what changed.

use std::collections::BTreeMap;

use domain::catalog::automator::{automators_used, AutomatorType};
use tokio::sync::mpsc;

use super::automator::PUPPET_MISSING;
use super::view::StepView;
use super::{note, Executor, NodeState, StepError, StepOutcome};
use crate::node_scripts;
use crate::provider::{NodeRecord, SSH_POOL_PROVIDER};
use crate::resources::{ResourceKind, ResourceVersion};
use crate::ssh::{OutputChunk, OutputStream, RunOptions, SshTarget};

/// Raw bytes per upload command (64 KiB of base64): small enough that no step's text
/// weighs on the node's shell, large enough that an archive takes few round trips.
const UPLOAD_CHUNK: usize = 48 * 1024;

pub(super) async fn run(
    executor: &Executor,
    view: &StepView,
    output: &mpsc::Sender<OutputChunk>,
) -> Result<StepOutcome, StepError> {
    let record = match executor.bring_back(view).await? {
        Some(current) => current,
        None => view.node_record()?,
    };
    let target = executor.ssh_target(&record).await?;
    let layout_node = view.layout_node()?;
    let facts = serde_json::json!({
        "cluster_id": view.cluster.id,
        "cluster_name": view.cluster.name,
        "node": view.node,
        "host": record.host,
        "services": layout_node.services,
    });
    let puppet_services: Vec<&str> = layout_node
        .services
        .iter()
        .filter(|service| {
            automators_used(&view.catalog, [*service]).contains(&AutomatorType::Puppet)
        })
        .map(|service| service.as_str())
        .collect();
    let services: Vec<&str> = layout_node
        .services
        .iter()
        .map(|service| service.as_str())
        .collect();
    let keys = node_keys(executor, view, &record).await?;
    let prepare = prepare_command(
        &facts.to_string(),
        &services,
        &puppet_services,
        keys.as_deref(),
    );
    let listing = capture(executor, view, &target, &prepare).await?;
    let on_node: BTreeMap<&str, &str> = listing
        .lines()
        .filter_map(|line| line.split_once(' '))
        .collect();
    let store = executor.store();
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

/// The users' keys for the node, one line each (see [`Store::cluster_keys`]), or
/// `None` for a pool host an admin registered: its accounts are the admin's, and Corral
/// leaves their keys alone.
///
/// [`Store::cluster_keys`]: crate::store::Store::cluster_keys
async fn node_keys(
    executor: &Executor,
    view: &StepView,
    record: &NodeRecord,
) -> Result<Option<String>, StepError> {
    if !takes_users_keys(&record.provider) {
        return Ok(None);
    }
    let keys = executor.store().cluster_keys(&view.cluster.id).await?;
    Ok(Some(
        keys.iter()
            .map(|key| key.public_key.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    ))
}

/// Whether Corral puts users' keys on nodes of this provider: not on hosts an admin
/// registered for `ssh-pool`, whose accounts are theirs.
fn takes_users_keys(provider: &str) -> bool {
    provider != SSH_POOL_PROVIDER
}

/// Writes the resource in chunks, then moves it into place (unpacking archives) and
/// records its checksum.
async fn upload(
    executor: &Executor,
    view: &StepView,
    target: &SshTarget,
    resource: &ResourceVersion,
    bytes: &[u8],
) -> Result<(), StepError> {
    use base64::Engine as _;
    let encoded = node_scripts::in_home(&encoded_file(resource));
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
    capture(executor, view, target, &install_command(resource)).await?;
    Ok(())
}

/// The first step's text: checks for puppet when `puppet_services` need it, makes
/// Corral's folders and each service's own (where its steps run: there before any
/// automator needs it, as Ansible's tasks write into it by path and make nothing
/// first), writes the facts, puts the users' `keys` in the node user's
/// `authorized_keys` (leaving them alone when `None`) and lists the resources already
/// on the node.
fn prepare_command(
    facts: &str,
    services: &[&str],
    puppet_services: &[&str],
    keys: Option<&str>,
) -> String {
    // Found now, not at the first puppet step after everything else was installed.
    let puppet_missing = if puppet_services.is_empty() {
        String::new()
    } else {
        format!(
            "corral: {PUPPET_MISSING} (service(s) {} use the puppet automator)",
            puppet_services.join(", ")
        )
    };
    let mut folders = vec![node_scripts::SERVICES.to_owned()];
    folders.extend(
        ResourceKind::ALL
            .iter()
            .map(|kind| node_scripts::resource_dir(kind.as_str())),
    );
    folders.push(node_scripts::RESOURCE_SHAS.to_owned());
    folders.extend(
        services
            .iter()
            .map(|service| node_scripts::service_dir(service)),
    );
    let mut args = vec![
        puppet_missing.as_str(),
        facts,
        node_scripts::NODE_FACTS,
        node_scripts::RESOURCE_SHAS,
        if keys.is_some() {
            node_scripts::AUTHORIZED_KEYS
        } else {
            ""
        },
        keys.unwrap_or_default(),
    ];
    args.extend(folders.iter().map(String::as_str));
    node_scripts::BOOTSTRAP_PREPARE.with_args(&args)
}

/// The last step for one resource: decode its upload, install it, record its checksum.
fn install_command(resource: &ResourceVersion) -> String {
    let how = match resource.kind {
        ResourceKind::Scripts => "executable",
        ResourceKind::Archives => "unpack",
        ResourceKind::Files => "plain",
    };
    let sha_path = format!("{}/{}", node_scripts::RESOURCE_SHAS, sha_file(resource));
    node_scripts::INSTALL_RESOURCE.with_args(&[
        how,
        &encoded_file(resource),
        &node_scripts::resource_file(resource.kind.as_str(), &resource.name),
        &resource.sha256,
        &sha_path,
    ])
}

/// Where a resource's base64 is uploaded before it is installed, relative to the home.
fn encoded_file(resource: &ResourceVersion) -> String {
    format!(
        "{}/.{}.b64",
        node_scripts::resource_dir(resource.kind.as_str()),
        resource.name
    )
}

fn sha_file(resource: &ResourceVersion) -> String {
    format!("{}__{}", resource.kind, resource.name)
}

/// Runs a bootstrap command, returning its stdout; a non-zero exit fails the step with
/// the command's stderr.
async fn capture(
    executor: &Executor,
    view: &StepView,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node_scripts::assert_snapshot;

    fn resource(kind: ResourceKind, name: &str) -> ResourceVersion {
        ResourceVersion {
            tenant_id: "t1".to_owned(),
            kind,
            name: name.to_owned(),
            version: 3,
            sha256: "ab12".to_owned(),
            size_bytes: 10,
            staged: true,
            created_at_ms: 0,
        }
    }

    #[test]
    fn the_prepare_step_makes_every_folder_and_checks_puppet_only_when_needed() {
        let facts = r#"{"node":1,"services":["web","it's"]}"#;
        assert_snapshot(
            "bootstrap_prepare_puppet",
            &prepare_command(facts, &["web", "it's"], &["web"], Some("")),
        );
        assert_snapshot(
            "bootstrap_prepare_no_puppet",
            &prepare_command(
                facts,
                &[],
                &[],
                Some("ssh-ed25519 AAAA a\nssh-ed25519 AAAB b"),
            ),
        );
        assert_snapshot(
            "bootstrap_prepare_pool_host",
            &prepare_command(facts, &[], &[], None),
        );
    }

    #[test]
    fn users_keys_go_on_every_node_but_pool_hosts() {
        use crate::provider::{DOCKER_PROVIDER, EC2_PROVIDER, EXEC_PROVIDER, LOCAL_PROVIDER};
        for provider in [LOCAL_PROVIDER, DOCKER_PROVIDER, EC2_PROVIDER, EXEC_PROVIDER] {
            assert!(takes_users_keys(provider), "{provider}");
        }
        assert!(!takes_users_keys(SSH_POOL_PROVIDER));
    }

    /// Runs the prepare step with `sh` in `home` with these keys: its exit code.
    fn prepare_locally(home: &std::path::Path, keys: Option<&str>) -> i32 {
        std::process::Command::new("sh")
            .args(["-c", &prepare_command("{}", &[], &[], keys)])
            .env("HOME", home)
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap()
            .code()
            .unwrap()
    }

    #[test]
    fn users_keys_are_kept_between_markers_and_every_other_line_stays() {
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join(".ssh/authorized_keys");
        let read = || std::fs::read_to_string(&file).unwrap();
        // No keys and no file: nothing is made.
        assert_eq!(prepare_locally(home.path(), Some("")), 0);
        assert!(!file.exists());
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "ssh-ed25519 CORRAL corral\n").unwrap();
        assert_eq!(
            prepare_locally(home.path(), Some("ssh-ed25519 A a\nssh-rsa B b")),
            0
        );
        let first = read();
        assert!(first.starts_with("ssh-ed25519 CORRAL corral\n"), "{first}");
        assert!(
            first.contains("\nssh-ed25519 A a\nssh-rsa B b\n"),
            "{first}"
        );
        // Again with one key fewer: the block is replaced, not added to.
        assert_eq!(prepare_locally(home.path(), Some("ssh-rsa B b")), 0);
        let second = read();
        assert!(!second.contains("ssh-ed25519 A a"), "{second}");
        assert_eq!(second.matches("keys begin").count(), 1, "{second}");
        // A line someone added after the block stays; a pool host's file is left alone.
        std::fs::write(&file, format!("{second}ssh-ed25519 MINE mine\n")).unwrap();
        assert_eq!(prepare_locally(home.path(), None), 0);
        assert!(read().contains("ssh-rsa B b"));
        // No keys: the block goes, everything else stays.
        assert_eq!(prepare_locally(home.path(), Some("")), 0);
        assert_eq!(read(), "ssh-ed25519 CORRAL corral\nssh-ed25519 MINE mine\n");
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn each_kind_of_resource_is_installed_its_way() {
        assert_snapshot(
            "install_resource_script",
            &install_command(&resource(ResourceKind::Scripts, "web.sh")),
        );
        assert_snapshot(
            "install_resource_archive",
            &install_command(&resource(ResourceKind::Archives, "site.tgz")),
        );
        assert_snapshot(
            "install_resource_file",
            &install_command(&resource(ResourceKind::Files, "it's.conf")),
        );
    }

    /// Uploads `bytes` as bootstrap does (one chunk) and runs the install step with
    /// `sh`, in a fresh home: its exit code.
    fn install_locally(home: &std::path::Path, resource: &ResourceVersion, bytes: &[u8]) -> i32 {
        use base64::Engine as _;
        let folder = home.join(node_scripts::resource_dir(resource.kind.as_str()));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::create_dir_all(home.join(node_scripts::RESOURCE_SHAS)).unwrap();
        let text = base64::engine::general_purpose::STANDARD.encode(bytes);
        std::fs::write(home.join(encoded_file(resource)), text).unwrap();
        std::process::Command::new("sh")
            .args(["-c", &install_command(resource)])
            .env("HOME", home)
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap()
            .code()
            .unwrap()
    }

    #[test]
    fn an_installed_script_is_executable_and_its_checksum_recorded() {
        use std::os::unix::fs::PermissionsExt as _;
        let home = tempfile::tempdir().unwrap();
        let script = resource(ResourceKind::Scripts, "web.sh");
        assert_eq!(install_locally(home.path(), &script, b"echo hi\n"), 0);
        let installed = home.path().join("corral/resources/scripts/web.sh");
        assert_eq!(std::fs::read(&installed).unwrap(), b"echo hi\n");
        let mode = std::fs::metadata(&installed).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
        let sha = home.path().join("corral/resources/.sha/scripts__web.sh");
        assert_eq!(std::fs::read_to_string(sha).unwrap(), "ab12");
        assert!(!home.path().join(encoded_file(&script)).exists());
    }

    #[test]
    fn an_archive_that_does_not_unpack_fails_and_records_no_checksum() {
        let home = tempfile::tempdir().unwrap();
        let archive = resource(ResourceKind::Archives, "site.tgz");
        assert_ne!(install_locally(home.path(), &archive, b"not a tar"), 0);
        let sha = home.path().join("corral/resources/.sha/archives__site.tgz");
        assert!(!sha.exists(), "a re-bootstrap must copy it again");
        assert!(!home
            .path()
            .join("corral/resources/archives/site.tgz")
            .exists());
    }
}
