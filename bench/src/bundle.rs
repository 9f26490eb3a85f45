//! `bench bundle`: what a user's browser downloads, on a cold first visit to the portal
//! and to an admin page and on a repeat visit, against a baseline in the same run (a
//! browser that accepts no compression: what every visitor got before precompression).
//!
//! Browsers are the only honest measure of this (preloads, what the loader fetches,
//! the cache), so the measuring is `end2end/bench/bundle.mjs` in chromium, against the
//! `corral` binary next to this one (or `CORRAL_BIN`), which must carry the bundle:
//! build it with `scripts/build.sh`, or `CORRAL_EMBED_SITE_DIR=target/site cargo build
//! --release -p server` after it.

use std::path::Path;
use std::process::Command;

use crate::BenchError;

pub fn run(args: &[String]) -> Result<String, BenchError> {
    if let Some(arg) = args.first() {
        return Err(BenchError::Usage(format!("unknown argument {arg:?}")));
    }
    let corral = crate::corral_binary()?;
    let end2end = Path::new(env!("CARGO_MANIFEST_DIR")).join("../end2end");
    let output = Command::new("node")
        .arg("bench/bundle.mjs")
        .current_dir(&end2end)
        .env("CORRAL_BIN", &corral)
        .output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    match stdout.lines().find(|line| line.starts_with("bundle ")) {
        Some(line) if output.status.success() => Ok(line.to_owned()),
        _ => Err(BenchError::Failed(format!(
            "the browser measurement failed ({}):\n{stdout}{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ))),
    }
}
