#!/usr/bin/env bash
# Builds the browser bundle (wasm, JS, CSS) into target/site/pkg and the `corral` binary.
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"

echo "build: browser bundle"
# Linked with relocations kept, which the splitter needs to tell what each split point
# (a lazy route) reaches; passed to this crate's link only, so the dependencies' cached
# builds stay valid.
RUSTUP_TOOLCHAIN=web CARGO_TARGET_DIR=$WASM_TARGET_DIR \
  cargo rustc -q -p frontend --lib --crate-type cdylib --target wasm32-unknown-unknown \
  --profile wasm-release -- -Clink-arg=--emit-relocs
SPLIT_DIR=$WASM_TARGET_DIR/split
rm -rf "$SPLIT_DIR" "$SITE_DIR/pkg"
mkdir -p "$SITE_DIR/pkg"
# The main module every page loads, and one chunk per group of lazy routes
# (wasm-split/src/main.rs, docs/bundle.md).
cargo run -q -p wasm-split -- \
  "$WASM_TARGET_DIR/wasm32-unknown-unknown/wasm-release/frontend.wasm" "$SPLIT_DIR"
wasm-bindgen --target web --no-typescript --keep-lld-exports --no-demangle \
  --out-dir "$SITE_DIR/pkg" --out-name corral "$SPLIT_DIR/main.wasm"
# A split that went wrong leaves the main module importing placeholders no browser can
# provide; fail here rather than in every page.
if grep -q "__wbindgen_placeholder__" "$SITE_DIR/pkg/corral.js"; then
  echo "build: the split main module still imports wasm-bindgen placeholders" >&2
  exit 1
fi
find "$SPLIT_DIR" -maxdepth 1 -type f ! -name main.wasm -exec cp {} "$SITE_DIR/pkg/" \;
for wasm in "$SITE_DIR"/pkg/*.wasm; do
  wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue \
    "$wasm" -o "$wasm"
done
cp style/main.css "$SITE_DIR/pkg/corral.css"
# The node terminal and the session player: our loaders and the libraries they load
# when first used (frontend/js/package.json), vendored from node_modules into the
# scripts' directory, which names them relatively (docs/bundle.md).
"$ROOT/scripts/vendor-js.sh" "$SITE_DIR/pkg"
cp style/favicon.svg "$SITE_DIR/pkg/favicon.svg"
# Compressed once here at the highest levels, so the server never compresses per
# request; it picks the form each browser accepts (server/src/http/bundle.rs).
for file in "$SITE_DIR"/pkg/*.wasm "$SITE_DIR"/pkg/*.js "$SITE_DIR"/pkg/*.css; do
  brotli --best --force --keep "$file"
  gzip --best --force --keep --no-name "$file"
done

echo "build: corral binary (the bundle built in)"
cargo build -q -p server --bin corral
