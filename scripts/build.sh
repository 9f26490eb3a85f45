#!/usr/bin/env bash
# Builds the browser bundle (scripts/bundle.sh) and the `corral` binary with the bundle
# built in, saying how long each part took: the binary tests and releases use.
# (scripts/run.sh builds `corral` without the bundle and serves the bundle's directory.)
#
# On two cores the bundle leaves one idle for long stretches (the release link's LTO runs
# on one codegen unit), so the native builds start beside it: first the splitter the
# bundle needs after its compile, then `corral`. The two sides use different target
# dirs, so neither waits for the other's lock. That first native build embeds no bundle
# (it must not read the directory the bundle is being written to); the last step builds
# `corral` again with it, which recompiles only site-bundle, the server library and the
# link. A later build skips that first native build (the dependencies are built), and
# bundle.sh keeps an unchanged bundle as it is, so a change to the server's code
# rebuilds the binary once and nothing of the bundle.
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"

# The native side: the splitter (then says so in $CORRAL_SPLITTER_READY), then `corral`
# on a first build. Two cargo runs, not one: building both packages at once would unify
# their dependencies' features, and the last step's `corral` alone would then rebuild
# those dependencies.
export CORRAL_SPLITTER_READY=$WASM_TARGET_DIR/splitter-ready
native_side() {
  timed build "the splitter and wasm-bindgen (beside the bundle)" cargo build -q -p wasm-split
  : >"$CORRAL_SPLITTER_READY"
  # Only a first build gains: once a corral exists its dependencies are built, and this
  # build would only make the last step's build of the same binary run twice.
  if [[ ! -x $CORRAL_BIN ]]; then
    timed build "corral without the bundle (beside it)" build_corral_without_bundle
  fi
}

echo "build: browser bundle and, beside it, the splitter and the corral binary's dependencies"
mkdir -p "$WASM_TARGET_DIR"
rm -f "$CORRAL_SPLITTER_READY"
native_side &
native=$!
# A failed bundle step ends the script; the native side must not outlive it.
trap 'pkill -P "$native" 2>/dev/null; kill "$native" 2>/dev/null || true' EXIT
CORRAL_SPLITTER_BUILDER=$native "$ROOT/scripts/bundle.sh"
wait "$native"
trap - EXIT
timed build "corral binary (the bundle built in)" cargo build -q -p server --bin corral
