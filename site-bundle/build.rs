//! Lists every file of the bundle in `$CORRAL_EMBED_SITE_DIR/pkg` as an `include_bytes!`
//! the crate compiles in. `scripts/env.sh` sets the variable; a build without it (a bare
//! `cargo build`) embeds nothing, and `corral serve` then says so at start-up.
//!
//! The directory is watched, so rebuilding the bundle re-embeds it. While the variable
//! names a directory that does not exist yet (a clean clone before `scripts/build.sh`),
//! cargo re-runs this script on every build until it appears.

use std::fmt::Write as _;
use std::path::PathBuf;

const SITE_DIR_VAR: &str = "CORRAL_EMBED_SITE_DIR";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-env-changed={SITE_DIR_VAR}");
    let mut files = Vec::new();
    if let Some(site_dir) = std::env::var_os(SITE_DIR_VAR) {
        let pkg = PathBuf::from(site_dir).join("pkg");
        println!("cargo:rerun-if-changed={}", pkg.display());
        match std::fs::read_dir(&pkg) {
            Ok(entries) => {
                for entry in entries {
                    let entry = entry?;
                    if entry.file_type()?.is_file() {
                        files.push(entry.path());
                    }
                }
            }
            Err(_) => println!(
                "cargo:warning=no browser bundle at {}: this corral serves pages without scripts (run scripts/build.sh)",
                pkg.display()
            ),
        }
    }
    // A stable order keeps the generated code, and so the build, reproducible.
    files.sort();
    let mut code = String::from("pub static FILES: &[File] = &[\n");
    for path in &files {
        let name = path
            .file_name()
            .and_then(|name| name.to_str())
            .ok_or_else(|| format!("bundle file name is not UTF-8: {}", path.display()))?;
        let path = path
            .to_str()
            .ok_or_else(|| format!("bundle path is not UTF-8: {}", path.display()))?;
        writeln!(
            code,
            "    File {{ name: {name:?}, bytes: include_bytes!({path:?}) }},"
        )?;
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?);
    std::fs::write(out.join("files.rs"), code)?;
    Ok(())
}
