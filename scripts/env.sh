# shellcheck shell=bash disable=SC2034  # sourced: its variables are the callers'
# Shared settings for Corral's scripts; sourced, not run.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
# The wasm build uses Debian's rustc-web toolchain; its own target dir avoids
# rebuilding everything each time the toolchain switches.
WASM_TARGET_DIR=$CARGO_TARGET_DIR/wasm
# Where the build writes the browser bundle, which the binary embeds (site-bundle/build.rs).
SITE_DIR=$ROOT/target/site
export CORRAL_EMBED_SITE_DIR=$SITE_DIR
# The digest of what the bundle in $SITE_DIR/pkg was made from (scripts/bundle.sh).
BUNDLE_STAMP=$SITE_DIR/bundle-inputs.sha256
CORRAL_BIN=$CARGO_TARGET_DIR/debug/corral
export PATH=/opt/binaryen/bin:$HOME/.cargo/bin:$PATH
# Native binaries are linked by mold where it is installed (bootstrap.sh installs it):
# the debug `corral` took 16 s to link with GNU ld on two cores, 5 s with mold, and
# every test binary is as large.
# Set here, not in .cargo/config.toml, so a machine without mold still builds. A build
# with and one without do not share their cache (the flags differ), so scripts that
# run bootstrap.sh call this again after it, before their first build.
link_with_mold_if_installed() {
  if command -v mold >/dev/null; then
    export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS="-Clink-arg=-fuse-ld=mold"
  fi
}
link_with_mold_if_installed
# schemathesis lives in its own virtualenv (installed by bootstrap.sh).
VENV=${CORRAL_VENV:-$HOME/.cache/corral/venv}

# `corral` without the browser bundle built in: what scripts/run.sh serves (with
# --site-dir), and what scripts/build.sh builds beside the bundle on a first build.
build_corral_without_bundle() {
  env -u CORRAL_EMBED_SITE_DIR cargo build -q -p server --bin corral
}

# `timed WHO NAME COMMAND...` runs COMMAND and prints `WHO: NAME took N s`.
timed() {
  local who=$1 name=$2 started=$SECONDS
  shift 2
  "$@"
  echo "$who: $name took $((SECONDS - started)) s"
}
