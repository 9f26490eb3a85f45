#!/usr/bin/env bash
# Installs what Corral needs on Debian 12, idempotently: what building and running it
# needs (scripts/run.sh), and with --tests also what only the tests need
# (scripts/test.sh: chromium, cargo-fuzz, the API checkers, moto, shellcheck). A second
# run takes about a second: every step checks before it acts.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FOR_TESTS=false
case "${1:-}" in
  --tests) FOR_TESTS=true ;;
  "") ;;
  *) echo "usage: $0 [--tests]" >&2; exit 2 ;;
esac

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

# Debian packages: the wasm-capable rustc-web toolchain, OpenSSH server for the `local`
# provider's nodes, and the data services the demo catalog's `paas` template runs on
# them (python3 runs the rest). For the `docker` provider: docker.io (dockerd with
# containerd, runc and iptables; scripts/dockerd.sh starts it, as nothing else does
# without an init system) and mmdebstrap, which builds its nodes' image (run as root it
# needs no uidmap). See docs/docker-nodes.md. The `ansible` automator runs ansible-core's
# ansible-playbook on the worker, confined by bubblewrap; the `puppet` automator runs
# puppet apply on nodes (local nodes use this host's). See docs/automators.md. brotli
# precompresses the browser bundle (scripts/build.sh). mold links the native binaries
# (scripts/env.sh): the debug `corral` and each test binary are hundreds of MB.
PKGS=(rustc-web cargo-web rust-web-src rust-web-llvm rust-web-clippy rustfmt-web lld-22 mold
      openssh-server openssh-client pkg-config
      python3 redis-server memcached docker.io mmdebstrap ansible-core puppet brotli
      bubblewrap)
# Tests only: chromium for the browser tests, shellcheck for every shell script.
if $FOR_TESTS; then PKGS+=(chromium chromium-driver shellcheck); fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 && continue
  # A Docker engine installed otherwise stays (docker-ce conflicts with docker.io).
  if [ "$p" = docker.io ] && { command -v dockerd || [ -x /usr/sbin/dockerd ]; } >/dev/null
  then continue; fi
  missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# openssh-server's, redis-server's and memcached's postinst may start system daemons on
# 127.0.0.1; Corral runs its own unprivileged ones on each node's 127.1.x.y address.
# docker.io's postinst starts no dockerd here (no init system): scripts/dockerd.sh does.

# wasm32 std built from Debian's sources, rebuilt only when Debian's rustc changes.
LIB=/usr/lib/rustlib/wasm32-unknown-unknown/lib
VER=$(/usr/bin/rustc -vV | sed -n 's/^commit-hash: //p')
if [ "$(cat "$LIB/.stamp" 2>/dev/null)" != "$VER" ]; then
  echo "bootstrap: building the wasm32 std (about 40 s)"
  tmp=$(mktemp -d)
  (cd "$tmp" && /usr/bin/cargo new -q --lib sysroot-builder)
  # Its own target dir: a CARGO_TARGET_DIR from the caller would send the rlibs elsewhere.
  (cd "$tmp/sysroot-builder" && CARGO_TARGET_DIR="$tmp/sysroot-builder/target" \
     RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 RUSTFLAGS=-Cembed-bitcode=yes \
     /usr/bin/cargo build -q --release --target wasm32-unknown-unknown \
     -Zbuild-std=std,panic_abort,panic_unwind,proc_macro)
  $SUDO rm -rf "$LIB"; $SUDO mkdir -p "$LIB"
  $SUDO cp "$tmp"/sysroot-builder/target/wasm32-unknown-unknown/release/deps/*.rlib "$LIB/"
  $SUDO rm -f "$LIB"/libsysroot_builder-*.rlib
  echo "$VER" | $SUDO tee "$LIB/.stamp" >/dev/null
  rm -rf "$tmp"
fi

# rustup sees Debian's toolchain as "web" (used for the wasm build only).
rustup toolchain list | grep -q '^web' || rustup toolchain link web /usr

# No wasm-bindgen command: the build's splitter (wasm-split) runs wasm-bindgen as a
# library pinned beside the crate, which saves a fresh machine compiling the CLI.

# wasm-opt from npm's binaryen (Debian's wasm-opt 108 writes modules browsers reject).
[ -x /opt/binaryen/bin/wasm-opt ] || $SUDO npm install -g --silent --prefix /opt/binaryen binaryen@132

if ! $FOR_TESTS; then
  echo "bootstrap: ok"
  exit 0
fi

# cargo-fuzz (libFuzzer targets in fuzz/, run by scripts/fuzz.sh) on rustup's stable
# toolchain; the pinned version is the one tested here.
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "bootstrap: installing cargo-fuzz 0.13.2 (about 2 min)"
  cargo install -q --locked cargo-fuzz --version 0.13.2
fi

# Browser-test driver: playwright-core only (it never downloads a browser).
if [ ! -d "$ROOT/end2end/node_modules/playwright-core" ]; then
  (cd "$ROOT/end2end" && npm ci --silent --no-audit --no-fund)
fi
# The API's checks against its OpenAPI document, in their own virtualenv: schemathesis
# (fuzzing), openapi-spec-validator and openapi-python-client (a generated client);
# moto for the ec2 provider's tests.
VENV=${CORRAL_VENV:-$HOME/.cache/corral/venv}
[ -x "$VENV/bin/pip" ] || python3 -m venv "$VENV"
if [ ! -x "$VENV/bin/st" ]; then
  echo "bootstrap: installing schemathesis"
  "$VENV/bin/pip" install -q --disable-pip-version-check "schemathesis==4.*"
fi
if [ ! -x "$VENV/bin/openapi-python-client" ] || [ ! -x "$VENV/bin/openapi-spec-validator" ]; then
  echo "bootstrap: installing openapi-spec-validator and openapi-python-client"
  "$VENV/bin/pip" install -q --disable-pip-version-check \
    "openapi-spec-validator==0.7.*" "openapi-python-client==0.26.*"
fi
# The `ec2` provider's tests run against moto, an emulator of AWS's APIs (its server
# mode answers the EC2 Query API on a local port).
if [ ! -x "$VENV/bin/moto_server" ]; then
  echo "bootstrap: installing moto (the ec2 provider's test double)"
  "$VENV/bin/pip" install -q --disable-pip-version-check "moto[server]==5.*"
fi
echo "bootstrap: ok"
