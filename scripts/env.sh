# Shared settings for Corral's scripts; sourced, not run.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
# The wasm build uses Debian's rustc-web toolchain; its own target dir avoids
# rebuilding everything each time the toolchain switches.
WASM_TARGET_DIR=$CARGO_TARGET_DIR/wasm
# Where the server finds the browser bundle (the server's compiled-in default).
SITE_DIR=$ROOT/target/site
CORRAL_BIN=$CARGO_TARGET_DIR/debug/corral
export PATH=/opt/binaryen/bin:$HOME/.cargo/bin:$PATH
# schemathesis lives in its own virtualenv (installed by bootstrap.sh).
VENV=${CORRAL_VENV:-$HOME/.cache/corral/venv}
