#!/usr/bin/env bash
# Installs what running needs, builds, and runs Corral on the embedded default
# (SQLite in ./corral-data, local nodes). Extra arguments go to `corral serve`.
# Each phase says how long it took: a first run on a fresh machine spends its time
# installing and building; later runs take seconds.
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

# `phase NAME COMMAND...` runs COMMAND and prints how long it took.
phase() {
  local name=$1 started=$SECONDS
  shift
  "$@"
  echo "run: $name took $((SECONDS - started)) s"
}

docker_engine() {
  # Docker for the demo's `docker` provider; without it Corral still runs (local nodes).
  "$ROOT/scripts/dockerd.sh" ||
    echo "run: warning: Docker is not available; the docker provider's nodes will fail" >&2
}

phase "install (scripts/bootstrap.sh)" "$ROOT/scripts/bootstrap.sh"
phase "docker engine" docker_engine
phase "build (browser bundle and corral)" "$ROOT/scripts/build.sh"
cd "$ROOT"
exec "$CORRAL_BIN" serve --data-dir "${CORRAL_DATA_DIR:-$ROOT/corral-data}" "$@"
