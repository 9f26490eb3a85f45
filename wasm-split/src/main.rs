//! `wasm-split INPUT.wasm OUT_DIR`: splits the frontend's wasm, linked with
//! `--emit-relocs`, at its split points (Leptos's `#[lazy_route]` and `#[lazy]`).
//!
//! It writes into `OUT_DIR`:
//! - `main.wasm`, the module every page loads, for `wasm-bindgen` to finish;
//! - one `.wasm` per chunk: the code reachable only from some split points, fetched
//!   the first time one of them runs;
//! - `__wasm_split.js`, the loader the main module imports chunks through (it imports
//!   `initSync` from `./corral.js`, the name `wasm-bindgen` gives the main module's
//!   JavaScript, so all of them are served from one directory), with Corral's reload
//!   for a chunk that cannot be loaded ([`RELOAD_ON_MISSING_CHUNK`]);
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

/// Where the loader reports a chunk it could not load, before telling the main module
/// (which then stops: its split point cannot go on without the chunk).
const LOADER_FAILURE: &str = "            console.error(e);\n            success = false;";
/// Added to the loader: a chunk that cannot be loaded is most often one of an older
/// build, asked for by a tab opened before the server was upgraded, which no longer has
/// it. Loading the page again gets the page and the scripts of the running build: the
/// page a link just clicked was going to (the router changes the address only once the
/// new route's chunks are in, so the address still names the page the click left), or
/// else the page as it is. At most once a minute, so a chunk missing from the running
/// build too does not reload the tab for ever; the error stays in the console.
const RELOAD_ON_MISSING_CHUNK: &str = r#"
let corralLeavingFor;
document.addEventListener("click", (event) => {
    const link = event.target instanceof Element ? event.target.closest("a[href]") : null;
    if (link && link.origin === location.origin) {
        corralLeavingFor = { href: link.href, at: Date.now() };
    }
}, true);
function reloadForMissingChunk() {
    const key = "corral-chunk-reload";
    const now = Date.now();
    let last = 0;
    try { last = Number(sessionStorage.getItem(key)) || 0; } catch (_) {}
    if (now - last < 60000) return;
    try { sessionStorage.setItem(key, String(now)); } catch (_) {}
    if (corralLeavingFor && now - corralLeavingFor.at < 10000) {
        location.assign(corralLeavingFor.href);
    } else {
        location.reload();
    }
}
"#;

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

    let loader_path = out_dir.join(LINK_NAME.trim_start_matches("./"));
    let loader = std::fs::read_to_string(&loader_path)
        .with_context(|| format!("cannot read {}", loader_path.display()))?;
    // A splitter whose loader reads otherwise must fail the build, not lose the reload.
    if loader.matches(LOADER_FAILURE).count() != 1 {
        bail!(
            "{} no longer reports a failed chunk load as expected; update RELOAD_ON_MISSING_CHUNK's hook",
            loader_path.display()
        );
    }
    let loader = loader.replacen(
        LOADER_FAILURE,
        &format!("{LOADER_FAILURE}\n            reloadForMissingChunk();"),
        1,
    );
    std::fs::write(&loader_path, format!("{loader}{RELOAD_ON_MISSING_CHUNK}"))
        .with_context(|| format!("cannot write {}", loader_path.display()))?;

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
