//! `wasm-split INPUT.wasm SPLIT_DIR PKG_DIR`: splits the frontend's wasm, linked with
//! `--emit-relocs`, at its split points (Leptos's `#[lazy_route]` and `#[lazy]`), then
//! runs wasm-bindgen on the main module.
//!
//! It writes into `SPLIT_DIR`:
//! - `main.wasm`, the module every page loads, for wasm-bindgen to finish;
//! - one `.wasm` per chunk: the code reachable only from some split points, fetched
//!   the first time one of them runs;
//! - `__wasm_split.js`, the loader the main module imports chunks through (it imports
//!   `initSync` from `./corral.js`, the name `wasm-bindgen` gives the main module's
//!   JavaScript, so all of them are served from one directory), with Corral's reload
//!   for a chunk that cannot be loaded ([`RELOAD_ON_MISSING_CHUNK`]);
//! - `__wasm_split_manifest.json`, which chunks each split point needs (Leptos's
//!   format), for the server's preload links.
//!
//! Then into `PKG_DIR`, the bundle's directory: `corral.js` and `corral_bg.wasm`, what
//! wasm-bindgen makes of `main.wasm` (with the same options as `wasm-bindgen --target web
//! --no-typescript --keep-lld-exports --no-demangle --out-name corral`), and a copy of
//! every other file of `SPLIT_DIR`, the chunks without their custom sections
//! ([`without_custom_sections`]). wasm-bindgen runs here as a library, pinned to the
//! version of the `wasm-bindgen` crate the frontend links, so no separately installed
//! `wasm-bindgen` command has to match it (installing one took a fresh machine about
//! four minutes of compiling).
//!
//! `scripts/build.sh` runs it; see docs/bundle.md for the whole pipeline.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

/// The main module's JavaScript, as the loader imports it (`wasm-bindgen --out-name`).
const MAIN_MODULE: &str = "./corral.js";
/// The loader's module name, as the main module imports it.
const LINK_NAME: &str = "./__wasm_split.js";
const MANIFEST: &str = "__wasm_split_manifest.json";
/// wasm-bindgen's `--out-name`: the main module's files are `corral.js` and
/// `corral_bg.wasm`.
const OUT_NAME: &str = "corral";
/// What the main module's JavaScript imports when the split went wrong: wasm-bindgen's
/// placeholders, which no browser can provide.
const PLACEHOLDER_IMPORT: &str = "__wbindgen_placeholder__";

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
    let [input, out_dir, pkg_dir] = args.as_slice() else {
        bail!("usage: wasm-split INPUT.wasm SPLIT_DIR PKG_DIR");
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
    bind_main_module(&main_out, Path::new(pkg_dir))?;
    copy_chunks(&out_dir, &main_out, Path::new(pkg_dir))
}

/// Runs wasm-bindgen on the main module into `pkg_dir`, with every option as the
/// `wasm-bindgen` command sets it for the flags named in the overview, and fails when
/// the result still imports placeholders (a split gone wrong).
fn bind_main_module(main: &Path, pkg_dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(pkg_dir)
        .with_context(|| format!("cannot create {}", pkg_dir.display()))?;
    let mut bindgen = wasm_bindgen_cli_support::Bindgen::new();
    bindgen
        .web(true)
        .map_err(|error| anyhow::anyhow!("wasm-bindgen --target web: {error}"))?;
    bindgen
        .input_path(main)
        .out_name(OUT_NAME)
        .debug(false)
        .demangle(false)
        .keep_lld_exports(true)
        .keep_debug(false)
        .remove_name_section(false)
        .remove_producers_section(false)
        .typescript(false)
        .split_linked_modules(false);
    bindgen
        .generate(pkg_dir)
        .map_err(|error| anyhow::anyhow!("wasm-bindgen on {}: {error:#}", main.display()))?;
    let script = pkg_dir.join(format!("{OUT_NAME}.js"));
    let text = std::fs::read_to_string(&script)
        .with_context(|| format!("cannot read {}", script.display()))?;
    if text.contains(PLACEHOLDER_IMPORT) {
        bail!(
            "{} still imports wasm-bindgen placeholders: the split went wrong",
            script.display()
        );
    }
    Ok(())
}

/// Copies the chunks, the loader and the manifest (every file of `split_dir` but the
/// main module, which wasm-bindgen has finished) into `pkg_dir`, the chunks without
/// their custom sections.
fn copy_chunks(split_dir: &Path, main: &Path, pkg_dir: &Path) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(split_dir)
        .with_context(|| format!("cannot read {}", split_dir.display()))?
    {
        let path = entry?.path();
        if path == main || !path.is_file() {
            continue;
        }
        let Some(name) = path.file_name() else {
            continue;
        };
        let target = pkg_dir.join(name);
        if path
            .extension()
            .is_some_and(|extension| extension == "wasm")
        {
            let chunk =
                std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
            let stripped = without_custom_sections(&chunk)
                .with_context(|| format!("cannot read {} as wasm", path.display()))?;
            std::fs::write(&target, stripped)
                .with_context(|| format!("cannot write {}", target.display()))?;
        } else {
            std::fs::copy(&path, &target).with_context(|| {
                format!("cannot copy {} into {}", path.display(), pkg_dir.display())
            })?;
        }
    }
    Ok(())
}

/// `wasm` without its custom sections (the function names, over half of a chunk, and
/// the producers), every other section as it was.
///
/// This is all the chunks get: `wasm-opt -Oz` took about 20 s of CPU per megabyte of
/// chunk code, some two minutes per build, and saved about 2 % of the chunks' brotli
/// size (some came out larger); the main module, which every first page loads, still
/// goes through it (scripts/build.sh), where it saves about a quarter.
fn without_custom_sections(wasm: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut module = wasm_encoder::Module::new();
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        let payload = payload?;
        if matches!(payload, wasmparser::Payload::CustomSection(_)) {
            continue;
        }
        if let Some((id, range)) = payload.as_section() {
            let data = usize::try_from(range.start)
                .ok()
                .zip(usize::try_from(range.end).ok())
                .and_then(|(start, end)| wasm.get(start..end))
                .with_context(|| format!("section {id} ends past the module's end"))?;
            module.section(&wasm_encoder::RawSection { id, data });
        }
    }
    Ok(module.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module with one function type, one function and its code, and the given
    /// custom sections before them.
    fn module(customs: &[(&str, &[u8])]) -> Vec<u8> {
        let mut module = wasm_encoder::Module::new();
        for (name, data) in customs {
            module.section(&wasm_encoder::CustomSection {
                name: (*name).into(),
                data: (*data).into(),
            });
        }
        let mut types = wasm_encoder::TypeSection::new();
        types.ty().function([], [wasm_encoder::ValType::I32]);
        module.section(&types);
        let mut functions = wasm_encoder::FunctionSection::new();
        functions.function(0);
        module.section(&functions);
        let mut code = wasm_encoder::CodeSection::new();
        let mut body = wasm_encoder::Function::new([]);
        body.instructions().i32_const(7).end();
        code.function(&body);
        module.section(&code);
        module.finish()
    }

    #[test]
    fn custom_sections_go_and_everything_else_stays() {
        let bare = module(&[]);
        let cases: [&[(&str, &[u8])]; 3] = [
            &[],
            &[("name", b"\x01\x02\x03")],
            &[("name", b"names"), ("producers", b"rustc")],
        ];
        for customs in cases {
            let stripped = without_custom_sections(&module(customs)).unwrap();
            assert_eq!(stripped, bare, "{customs:?}");
            wasmparser::Validator::new()
                .validate_all(&stripped)
                .unwrap();
        }
    }

    #[test]
    fn a_file_that_is_not_wasm_is_refused() {
        assert!(without_custom_sections(b"not wasm").is_err());
    }
}
