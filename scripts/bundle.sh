#!/usr/bin/env bash
# Builds the browser bundle (wasm split into a main module and chunks, its JavaScript
# loaders, the stylesheet, the vendored libraries, each precompressed) into
# target/site/pkg, saying how long each part took. docs/bundle.md says what is in it.
#
# The bundle is rebuilt only when what it is made from changed: its inputs' digest is
# kept beside it, and a bundle whose digest matches is left as it is (rewriting it would
# make a binary that embeds it rebuild). Exits 0 either way; the digest file tells
# callers whether the bundle changed.
#
# The splitter (this workspace's wasm-split, a native program) is built here, after the
# wasm compile, unless the caller builds it: scripts/build.sh builds it beside the wasm
# compile and says so by creating the file named in $CORRAL_SPLITTER_READY (or exits
# without it if that failed, which this script notices through $CORRAL_SPLITTER_BUILDER,
# the pid building it).
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"

compile_wasm() {
  # Linked with relocations kept, which the splitter needs to tell what each split
  # point (a lazy route) reaches; passed to this crate's link only, so the
  # dependencies' cached builds stay valid.
  RUSTUP_TOOLCHAIN=web CARGO_TARGET_DIR=$WASM_TARGET_DIR \
    cargo rustc -q -p frontend --lib --crate-type cdylib --target wasm32-unknown-unknown \
    --profile wasm-release -- -Clink-arg=--emit-relocs
}

# Waits until the caller has built the splitter; fails if it could not.
wait_for_splitter() {
  local started=$SECONDS
  until [[ -e $CORRAL_SPLITTER_READY ]]; do
    # Gone without the mark: the splitter failed (the caller reports how).
    if ! kill -0 "${CORRAL_SPLITTER_BUILDER:?}" 2>/dev/null && [[ ! -e $CORRAL_SPLITTER_READY ]]; then
      echo "bundle: the splitter did not build (see above)" >&2
      return 1
    fi
    sleep 1
  done
  echo "bundle: waited $((SECONDS - started)) s for the splitter"
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

# What the bundle is made from, as one digest: the compiled wasm, the splitter, the
# styles, the vendored scripts' sources and the scripts that make it.
inputs_digest() {
  {
    sha256sum "$WASM_TARGET_DIR/wasm32-unknown-unknown/wasm-release/frontend.wasm" \
      "$CARGO_TARGET_DIR/debug/wasm-split" "$ROOT/scripts/bundle.sh" "$ROOT/scripts/vendor-js.sh"
    find "$ROOT/style" "$ROOT/frontend/js" -path '*/node_modules' -prune -o -type f -print0 \
      | sort -z | xargs -0 sha256sum
  } | sha256sum | cut -d' ' -f1
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

mkdir -p "$WASM_TARGET_DIR" "$SITE_DIR"
timed bundle "wasm compile (release, LTO)" compile_wasm
if [[ -n ${CORRAL_SPLITTER_READY:-} ]]; then
  wait_for_splitter
else
  timed bundle "the splitter and wasm-bindgen" cargo build -q -p wasm-split
fi
digest=$(inputs_digest)
if [[ -d $SITE_DIR/pkg && $(cat "$BUNDLE_STAMP" 2>/dev/null) == "$digest" ]]; then
  echo "bundle: its inputs are unchanged; the bundle in $SITE_DIR/pkg is kept"
  exit 0
fi
rm -f "$BUNDLE_STAMP"
timed bundle "split and bind" split_and_bind
timed bundle "wasm-opt (main module)" optimise_main_module
add_styles_and_scripts
timed bundle "compression" compress
echo "$digest" >"$BUNDLE_STAMP"
