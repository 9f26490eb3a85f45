//! The benchmarks measured in a browser, whose numbers only a browser gives honestly:
//!
//! - `bench bundle`: what a user's browser downloads, on a cold first visit to the
//!   portal and to an admin page and on a repeat visit, against a baseline in the same
//!   run (a browser that accepts no compression: what every visitor got before
//!   precompression). Preloads, what the loader fetches and the cache all count.
//! - `bench solver`: how long the "try it" panel takes to solve, plan and show a
//!   100-node layout in the browser, against a 10-node one.
//!
//! The measuring is a script of `end2end/bench/` in chromium, against the `corral`
//! binary next to this one (or `CORRAL_BIN`), which must carry the bundle: build it
//! with `scripts/build.sh`, or `CORRAL_EMBED_SITE_DIR=target/site cargo build
//! --release -p server` after it.

use std::path::Path;
use std::process::Command;

use crate::BenchError;

/// A browser benchmark: the script under `end2end/` and the line it prints.
pub struct BrowserBench {
    script: &'static str,
    line: &'static str,
}

pub const BUNDLE: BrowserBench = BrowserBench {
    script: "bench/bundle.mjs",
    line: "bundle ",
};

pub const SOLVER: BrowserBench = BrowserBench {
    script: "bench/solver.mjs",
    line: "solver ",
};

pub fn run(bench: BrowserBench, args: &[String]) -> Result<String, BenchError> {
    if let Some(arg) = args.first() {
        return Err(BenchError::Usage(format!("unknown argument {arg:?}")));
    }
    let corral = crate::corral_binary()?;
    let end2end = Path::new(env!("CARGO_MANIFEST_DIR")).join("../end2end");
    let output = Command::new("node")
        .arg(bench.script)
        .current_dir(&end2end)
        .env("CORRAL_BIN", &corral)
        .output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    match stdout.lines().find(|line| line.starts_with(bench.line)) {
        Some(line) if output.status.success() => Ok(line.to_owned()),
        _ => Err(BenchError::Failed(format!(
            "the browser measurement failed ({}):\n{stdout}{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ))),
    }
}
