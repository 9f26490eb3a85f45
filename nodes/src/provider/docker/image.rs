//! Corral's node image: Debian with sshd and what the demo services run, made here from
//! Debian's packages because no image registry may be reachable.
//!
//! `mmdebstrap` writes a root file system as a tar, which the engine imports as an
//! image (`docker import`). The tag is a hash of the recipe, so an image is built once
//! per recipe and a changed recipe builds a new one; builds in one process take turns.

use std::path::Path;

use futures::StreamExt;
use sha2::{Digest, Sha256};

use super::{describe, is_not_found};
use crate::provider::ProviderError;

/// The Debian release the image is made of.
const SUITE: &str = "bookworm";
/// What an image type names as its image for Corral's node image; its tags are
/// `corral-node:<hash of the recipe>`.
pub const NODE_IMAGE: &str = "corral-node";

/// What the image holds: sshd and the shell tools steps use, Python (for Ansible and the
/// demo's web apps), Puppet (for the `puppet` automator) and the data services the
/// demo's `paas` template runs.
pub const NODE_IMAGE_PACKAGES: &[&str] = &[
    "openssh-server",
    "python3",
    "bash",
    "iproute2",
    "procps",
    "redis-server",
    "memcached",
    "puppet",
];

/// Run inside the new root before it is packed: openssh-server's install made host keys,
/// which every container of the image would otherwise share (each node gets its own,
/// copied in before it starts).
const CUSTOMIZE: &str = r#"rm -f "$1"/etc/ssh/ssh_host_*"#;

/// Builds of the node image in this process take turns (every provider shares it): the
/// second waits and then finds the image made.
static BUILDING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Corral's node image, made on first use.
#[derive(Debug)]
pub struct NodeImage;

impl NodeImage {
    /// `corral-node:<hash of the recipe>`.
    pub fn tag() -> String {
        let mut recipe = Sha256::new();
        recipe.update(SUITE.as_bytes());
        recipe.update(CUSTOMIZE.as_bytes());
        for package in NODE_IMAGE_PACKAGES {
            recipe.update(b"\0");
            recipe.update(package.as_bytes());
        }
        let hash = recipe.finalize();
        let short: String = hash[..6].iter().map(|byte| format!("{byte:02x}")).collect();
        format!("{NODE_IMAGE}:{short}")
    }

    /// What a user waiting for the image is told: the wait is expected, and once.
    pub fn building_note(tag: &str) -> String {
        format!(
            "building Corral's node image {tag} from Debian's packages (about a minute, once \
             per Docker engine); nodes made meanwhile wait for it\n"
        )
    }

    /// The image's tag once the engine has it, building it first if it does not.
    pub async fn ensure(docker: &bollard::Docker) -> Result<String, ProviderError> {
        let tag = Self::tag();
        if exists(docker, &tag).await? {
            return Ok(tag);
        }
        let _turn = BUILDING.lock().await;
        if exists(docker, &tag).await? {
            return Ok(tag);
        }
        tracing::info!(image = %tag, "building the node image from Debian's packages");
        let started = std::time::Instant::now();
        let dir = tempfile_dir(&tag)?;
        let result = build(docker, &tag, &dir).await;
        let _ = std::fs::remove_dir_all(&dir);
        result?;
        tracing::info!(
            image = %tag,
            seconds = started.elapsed().as_secs_f64(),
            "node image built"
        );
        Ok(tag)
    }
}

/// Whether the engine has image `tag` (never asking a registry).
pub(super) async fn exists(docker: &bollard::Docker, tag: &str) -> Result<bool, ProviderError> {
    match docker.inspect_image(tag).await {
        Ok(_) => Ok(true),
        Err(error) if is_not_found(&error) => Ok(false),
        Err(error) => Err(image_error(tag, describe(&error))),
    }
}

/// A fresh directory for the root file system's tar, next to the system's temporary
/// files.
fn tempfile_dir(tag: &str) -> Result<std::path::PathBuf, ProviderError> {
    let dir = std::env::temp_dir().join(format!(
        "corral-node-image-{}-{}",
        std::process::id(),
        tag.replace(':', "-")
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|error| image_error(tag, error))?;
    Ok(dir)
}

async fn build(docker: &bollard::Docker, tag: &str, dir: &Path) -> Result<(), ProviderError> {
    let tar = dir.join("rootfs.tar");
    let output = tokio::process::Command::new("mmdebstrap")
        .arg("--variant=apt")
        .arg("--quiet")
        .arg(format!("--include={}", NODE_IMAGE_PACKAGES.join(",")))
        .arg(format!("--customize-hook={CUSTOMIZE}"))
        .arg(SUITE)
        .arg(&tar)
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|error| image_error(tag, format!("cannot run mmdebstrap: {error}")))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(image_error(
            tag,
            format!(
                "mmdebstrap failed ({}): {}",
                output.status,
                tail.join(" / ")
            ),
        ));
    }
    let (repository, version) = tag.split_once(':').unwrap_or((tag, "latest"));
    // Read whole (a few hundred MB, once per recipe): the request body must not end
    // early on a read error, or the engine would import a cut archive.
    let body = tokio::fs::read(&tar)
        .await
        .map_err(|error| image_error(tag, format!("cannot read {}: {error}", tar.display())))?;
    let mut progress = docker.create_image(
        Some(bollard::query_parameters::CreateImageOptions {
            from_src: Some("-".to_owned()),
            repo: Some(repository.to_owned()),
            tag: Some(version.to_owned()),
            ..bollard::query_parameters::CreateImageOptions::default()
        }),
        Some(bollard::body_full(body.into())),
        None,
    );
    while let Some(step) = progress.next().await {
        step.map_err(|error| image_error(tag, describe(&error)))?;
    }
    Ok(())
}

fn image_error(tag: &str, detail: impl ToString) -> ProviderError {
    ProviderError::NodeImage {
        image: tag.to_owned(),
        detail: detail.to_string(),
    }
}
