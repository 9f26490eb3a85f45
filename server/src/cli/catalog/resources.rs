//! The resources half of `corral catalog import`: every file of a folder uploaded as a
//! plugin resource of one kind (`scripts`, or `files` for playbooks and manifests) and
//! staged, so the services of the imported catalog find them on their nodes. A file
//! whose staged version already has the same bytes is left alone, so importing twice
//! adds no versions.

use std::path::Path;

use anyhow::Context;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::super::remote::Client;

/// Uploads and stages every file of `dir` as a resource of `kind`.
pub async fn upload(client: &Client, dir: &Path, kind: &str, dry_run: bool) -> anyhow::Result<()> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    let listed = client.get("/api/v1/resources?limit=500").await?;
    let staged: Vec<&Value> = listed["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["kind"] == kind && item["staged"] == true)
        .collect();
    for path in files {
        let Some(name) = path.file_name().and_then(|name| name.to_str()) else {
            continue;
        };
        let bytes =
            std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let sha: String = Sha256::digest(&bytes)
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        if staged
            .iter()
            .any(|item| item["name"] == name && item["sha256"] == sha.as_str())
        {
            println!("{kind}/{name}: staged already");
            continue;
        }
        if dry_run {
            println!("{kind}/{name}: would be uploaded and staged");
            continue;
        }
        let uploaded = client
            .post_bytes(&format!("/api/v1/resources/{kind}/{name}"), bytes)
            .await
            .with_context(|| format!("cannot upload {}", path.display()))?;
        let version = uploaded["version"].as_i64().unwrap_or(1);
        client
            .post(
                &format!("/api/v1/resources/{kind}/{name}/versions/{version}/stage"),
                &json!({}),
            )
            .await
            .with_context(|| format!("cannot stage {kind}/{name} version {version}"))?;
        println!("{kind}/{name}: version {version} uploaded and staged");
    }
    Ok(())
}
