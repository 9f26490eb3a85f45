//! `wasm-split INPUT.wasm OUT_DIR`: splits the frontend's wasm, linked with
//! `--emit-relocs`, at its split points (Leptos's `#[lazy_route]` and `#[lazy]`).
//!
//! It writes into `OUT_DIR`:
//! - `main.wasm`, the module every page loads, for `wasm-bindgen` to finish;
//! - one `.wasm` per chunk: the code reachable only from some split points, fetched
//!   the first time one of them runs;
//! - `__wasm_split.js`, the loader the main module imports chunks through (it imports
//!   `initSync` from `./corral.js`, the name `wasm-bindgen` gives the main module's
//!   JavaScript, so all of them are served from one directory);
//! - `__wasm_split_manifest.json`, which chunks each split point needs (Leptos's
//!   format), for the server's preload links.
//!
//! `scripts/build.sh` runs it; see docs/bundle.md for the whole pipeline.

use std::path::PathBuf;

use anyhow::{bail, Context};

/// The main module's JavaScript, as the loader imports it (`wasm-bindgen --out-name`).
const MAIN_MODULE: &str = "./corral.js";
/// The loader's module name, as the main module imports it.
const LINK_NAME: &str = "./__wasm_split.js";
const MANIFEST: &str = "__wasm_split_manifest.json";

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, out_dir] = args.as_slice() else {
        bail!("usage: wasm-split INPUT.wasm OUT_DIR");
    };
    let out_dir = PathBuf::from(out_dir);
    let wasm = std::fs::read(input).with_context(|| format!("cannot read {input}"))?;
    std::fs::create_dir_all(&out_dir)
        .with_context(|| format!("cannot create {}", out_dir.display()))?;
    let main_out = out_dir.join("main.wasm");

    let mut options = wasm_split_cli_support::Options::new(&wasm);
    options.output_dir = &out_dir;
    options.main_out_path = &main_out;
    options.link_name = LINK_NAME;
    options.main_module = MAIN_MODULE;
    let split = wasm_split_cli_support::transform(options)
        .map_err(|error| anyhow::anyhow!("cannot split {input}: {error:?}"))?;

    let manifest = serde_json::to_string_pretty(&split.prefetch_map)?;
    std::fs::write(out_dir.join(MANIFEST), manifest)
        .with_context(|| format!("cannot write {MANIFEST}"))?;
    println!(
        "wasm-split: {} split points in {} chunks",
        split.prefetch_map.len(),
        split.split_modules.len()
    );
    Ok(())
}
