//! The resources half of `corral catalog import`: every file of a folder becomes a
//! plugin resource of one kind (`scripts`, or `files` for playbooks and manifests),
//! so the services of the imported catalog find them on their nodes. A file whose
//! staged version already has the same bytes is left alone, so importing twice adds
//! no versions.
//!
//! The steps are separate so the import can order them for all-or-nothing: [`read`]
//! every file before anything is sent, [`upload`] new versions (unstaged, so nodes
//! still get what they got before), and [`stage`] them only once the catalog is in.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use api_types::ResourceView;
use domain::catalog::automator::is_resource_name;
use engine::resources::MAX_RESOURCE_BYTES;
use sha2::{Digest, Sha256};

use super::super::remote::Client;
use super::local_files::{read_capped, refuse_link, EntryKind, Links};

/// One file to make a resource of, with its bytes already read.
#[derive(Debug)]
pub struct Resource {
    /// `scripts` or `files`.
    pub kind: &'static str,
    pub name: String,
    pub path: PathBuf,
    bytes: Vec<u8>,
    sha256: String,
    /// The server's staged version of this name has these very bytes.
    pub staged_already: bool,
}

impl Resource {
    /// `scripts/web.sh`, as the output and the server name it.
    pub fn label(&self) -> String {
        format!("{}/{}", self.kind, self.name)
    }
}

/// Reads every file of `dir` as a resource of `kind`, refusing the first one the
/// server would refuse (its name or size, checked before it is read) and any symbolic
/// link (never followed: it could publish any file the user can read). Hidden files
/// (`.gitkeep`) and subfolders are not resources and are skipped.
pub fn read(dir: &Path, kind: &'static str) -> anyhow::Result<Vec<Resource>> {
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let entry = entry.with_context(|| format!("cannot read {}", dir.display()))?;
        let path = entry.path();
        let hidden = path
            .file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with('.'));
        if hidden {
            continue;
        }
        let file_type = entry
            .file_type()
            .with_context(|| format!("cannot read {}", path.display()))?;
        if refuse_link(&path, EntryKind::of_type(file_type))? == EntryKind::File {
            paths.push(path);
        }
    }
    paths.sort();
    paths.into_iter().map(|path| read_one(path, kind)).collect()
}

fn read_one(path: PathBuf, kind: &'static str) -> anyhow::Result<Resource> {
    let Some(name) = path
        .file_name()
        .and_then(|name| name.to_str())
        .filter(|name| is_resource_name(name))
        .map(str::to_owned)
    else {
        bail!(
            "{}: not a valid resource name: use 1-128 letters, digits, '.', '_' or '-'",
            path.display()
        );
    };
    let bytes = read_capped(&path, MAX_RESOURCE_BYTES, Links::Refuse)?;
    let sha256 = hex::encode(Sha256::digest(&bytes));
    Ok(Resource {
        kind,
        name,
        path,
        bytes,
        sha256,
        staged_already: false,
    })
}

/// Marks the resources whose staged version on the server has the same bytes.
pub async fn mark_staged(client: &Client, resources: &mut [Resource]) -> anyhow::Result<()> {
    if resources.is_empty() {
        return Ok(());
    }
    let listed = client.resources(500).await?;
    let staged: Vec<&ResourceView> = listed.items.iter().filter(|item| item.staged).collect();
    for resource in resources {
        resource.staged_already = staged.iter().any(|item| {
            item.kind == resource.kind
                && item.name == resource.name
                && item.sha256 == resource.sha256
        });
    }
    Ok(())
}

/// A version uploaded but not staged yet.
pub struct Uploaded<'a> {
    resource: &'a Resource,
    version: i64,
}

/// Uploads a new version of every resource not staged already. Nothing is
/// staged, so until [`stage`] runs nodes get exactly what they got before.
pub async fn upload<'a>(
    client: &Client,
    resources: &'a [Resource],
) -> anyhow::Result<Vec<Uploaded<'a>>> {
    let mut uploaded = Vec::new();
    for resource in resources.iter().filter(|resource| !resource.staged_already) {
        let answer = client
            .upload_resource(resource.kind, &resource.name, resource.bytes.clone())
            .await
            .with_context(|| format!("cannot upload {}", resource.path.display()))?;
        uploaded.push(Uploaded {
            resource,
            version: answer.version,
        });
    }
    Ok(uploaded)
}

/// Stages the uploaded versions, printing each.
pub async fn stage(client: &Client, uploaded: &[Uploaded<'_>]) -> anyhow::Result<()> {
    for Uploaded { resource, version } in uploaded {
        let label = resource.label();
        client
            .stage_resource(resource.kind, &resource.name, *version)
            .await
            .with_context(|| {
                format!(
                    "the catalog is imported but {label} version {version} is not staged; \
                     run the import again to stage it"
                )
            })?;
        println!("{label}: version {version} uploaded and staged");
    }
    Ok(())
}
