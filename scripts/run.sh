#!/usr/bin/env bash
# Installs what is missing, builds, and runs Corral on the embedded default
# (SQLite in ./corral-data, local nodes). Extra arguments go to `corral serve`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
"$ROOT/scripts/bootstrap.sh"
"$ROOT/scripts/build.sh"
cd "$ROOT"
exec "$CORRAL_BIN" serve --data-dir "${CORRAL_DATA_DIR:-$ROOT/corral-data}" "$@"
