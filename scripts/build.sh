#!/usr/bin/env bash
# Builds the browser bundle (wasm, JS, CSS) into target/site/pkg and the `corral` binary.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"

echo "build: browser bundle"
RUSTUP_TOOLCHAIN=web CARGO_TARGET_DIR=$WASM_TARGET_DIR \
  cargo build -q -p frontend --lib --target wasm32-unknown-unknown --profile wasm-release
mkdir -p "$SITE_DIR/pkg"
wasm-bindgen --target web --no-typescript --out-dir "$SITE_DIR/pkg" --out-name corral \
  "$WASM_TARGET_DIR/wasm32-unknown-unknown/wasm-release/frontend.wasm"
wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-mutable-globals --enable-reference-types --enable-multivalue \
  "$SITE_DIR/pkg/corral_bg.wasm" -o "$SITE_DIR/pkg/corral_bg.wasm"
cp style/main.css "$SITE_DIR/pkg/corral.css"
cp style/favicon.svg "$SITE_DIR/pkg/favicon.svg"
# Compressed once here at the highest levels, so the server never compresses per
# request; it picks the form each browser accepts (server/src/http/bundle.rs).
for file in corral_bg.wasm corral.js corral.css; do
  brotli --best --force --keep "$SITE_DIR/pkg/$file"
  gzip --best --force --keep --no-name "$SITE_DIR/pkg/$file"
done

echo "build: corral binary (the bundle built in)"
cargo build -q -p server --bin corral
