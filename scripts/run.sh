#!/usr/bin/env bash
# Installs what is missing, builds, and runs Corral on the embedded default
# (SQLite in ./corral-data, local nodes). Extra arguments go to `corral serve`.
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
"$ROOT/scripts/bootstrap.sh"
# Docker for the demo's `docker` provider; without it Corral still runs (local nodes).
"$ROOT/scripts/dockerd.sh" ||
  echo "run: warning: Docker is not available; the docker provider's nodes will fail" >&2
"$ROOT/scripts/build.sh"
cd "$ROOT"
exec "$CORRAL_BIN" serve --data-dir "${CORRAL_DATA_DIR:-$ROOT/corral-data}" "$@"
