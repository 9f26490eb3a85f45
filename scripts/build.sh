#!/usr/bin/env bash
# Builds the browser bundle (wasm, JS, CSS) into target/site/pkg and the `corral` binary,
# saying how long each part took.
#
# On two cores the bundle leaves one idle for long stretches (the release link's LTO runs
# on one codegen unit), so the native builds start beside it: first the splitter the
# bundle needs after its compile, then `corral`. The two sides use different target
# dirs, so neither waits for the other's lock. That first native build embeds no bundle
# (it must not read the directory the bundle is being written to); the last step builds
# `corral` again with it, which recompiles only site-bundle, the server library and the
# link.
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"

# `timed NAME COMMAND...` runs COMMAND and prints how long it took.
timed() {
  local name=$1 started=$SECONDS
  shift
  "$@"
  echo "build: $name took $((SECONDS - started)) s"
}

binary_without_bundle() {
  env -u CORRAL_EMBED_SITE_DIR cargo build -q -p server --bin corral
}

# The native side: the splitter (then says so in $splitter_ready), then `corral`. Two
# cargo runs, not one: building both packages at once would unify their dependencies'
# features, and the last step's `corral` alone would then rebuild those dependencies.
splitter_ready=$WASM_TARGET_DIR/splitter-ready
native_side() {
  timed "the splitter and wasm-bindgen (beside the bundle)" cargo build -q -p wasm-split
  : >"$splitter_ready"
  timed "corral without the bundle (beside it)" binary_without_bundle
}

# Waits until the native side has built the splitter; fails if that side failed.
wait_for_splitter() {
  local started=$SECONDS
  until [[ -e $splitter_ready ]]; do
    # Gone without the mark: the splitter failed (its side is reaped at the end).
    if ! kill -0 "$native" 2>/dev/null && [[ ! -e $splitter_ready ]]; then
      echo "build: the splitter did not build (see above)" >&2
      return 1
    fi
    sleep 1
  done
  echo "build: bundle: waited $((SECONDS - started)) s for the splitter"
}

compile_wasm() {
  # Linked with relocations kept, which the splitter needs to tell what each split
  # point (a lazy route) reaches; passed to this crate's link only, so the
  # dependencies' cached builds stay valid.
  RUSTUP_TOOLCHAIN=web CARGO_TARGET_DIR=$WASM_TARGET_DIR \
    cargo rustc -q -p frontend --lib --crate-type cdylib --target wasm32-unknown-unknown \
    --profile wasm-release -- -Clink-arg=--emit-relocs
}

split_and_bind() {
  local split_dir=$WASM_TARGET_DIR/split
  rm -rf "$split_dir" "$SITE_DIR/pkg"
  # The main module every page loads and one chunk per group of lazy routes, then
  # wasm-bindgen on the main module, all into the bundle's directory
  # (wasm-split/src/main.rs, docs/bundle.md).
  "$CARGO_TARGET_DIR/debug/wasm-split" \
    "$WASM_TARGET_DIR/wasm32-unknown-unknown/wasm-release/frontend.wasm" \
    "$split_dir" "$SITE_DIR/pkg"
}

optimise_main_module() {
  # The module every first page loads; the chunks come without their custom sections
  # only, as wasm-opt saved them little for much time (wasm-split/src/main.rs).
  wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue \
    "$SITE_DIR/pkg/corral_bg.wasm" -o "$SITE_DIR/pkg/corral_bg.wasm"
}

add_styles_and_scripts() {
  cp style/main.css "$SITE_DIR/pkg/corral.css"
  # The node terminal and the session player: our loaders and the libraries they load
  # when first used (frontend/js/package.json), vendored from node_modules into the
  # scripts' directory, which names them relatively (docs/bundle.md).
  "$ROOT/scripts/vendor-js.sh" "$SITE_DIR/pkg"
  cp style/favicon.svg "$SITE_DIR/pkg/favicon.svg"
}

# Every file of the bundle the server serves precompressed, NUL-separated.
compressible_files() {
  find "$SITE_DIR/pkg" -maxdepth 1 -type f \( -name '*.wasm' -o -name '*.js' -o -name '*.css' \) -print0
}

compress() {
  # Compressed once here at the highest levels, so the server never compresses per
  # request; it picks the form each browser accepts (server/src/http/bundle.rs).
  compressible_files | xargs -0 -P "$(nproc)" -n 8 brotli --best --force --keep
  compressible_files | xargs -0 -P "$(nproc)" -n 8 gzip --best --force --keep --no-name
}

echo "build: browser bundle and, beside it, the splitter and the corral binary's dependencies"
mkdir -p "$WASM_TARGET_DIR"
rm -f "$splitter_ready"
native_side &
native=$!
# A failed bundle step ends the script; the native side must not outlive it.
trap 'pkill -P "$native" 2>/dev/null; kill "$native" 2>/dev/null || true' EXIT
timed "bundle: wasm compile (release, LTO)" compile_wasm
wait_for_splitter
timed "bundle: split and bind" split_and_bind
timed "bundle: wasm-opt (main module)" optimise_main_module
add_styles_and_scripts
timed "bundle: compression" compress
wait "$native"
trap - EXIT
timed "corral binary (the bundle built in)" cargo build -q -p server --bin corral
