#!/usr/bin/env bash
# Installs what running needs, builds, and runs Corral on the embedded default
# (SQLite in ./corral-data, local nodes). Extra arguments go to `corral serve`.
# Each phase says how long it took: a first run on a fresh machine spends its time
# installing and building; later runs take seconds.
#
# Corral does not wait for the browser bundle. Pages work without scripts, and the
# bundle (a release wasm build: on a fresh machine the longest part of the build) is
# built at the lowest priority beside `corral`, taking what that build leaves idle, and
# goes on once Corral is running. When it is done, if it changed, Corral is restarted
# (SIGTERM: it drains) to serve it; Ctrl-C stops both.
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"

docker_engine() {
  # Docker for the demo's `docker` provider; without it Corral still runs (local nodes).
  "$ROOT/scripts/dockerd.sh" ||
    echo "run: warning: Docker is not available; the docker provider's nodes will fail" >&2
}

timed run "install (scripts/bootstrap.sh)" "$ROOT/scripts/bootstrap.sh"
link_with_mold_if_installed
timed run "docker engine" docker_engine

bundle_before=$(cat "$BUNDLE_STAMP" 2>/dev/null || true)
nice -n 19 "$ROOT/scripts/bundle.sh" &
bundle=$!
timed run "build (corral; the browser bundle builds beside it)" build_corral_without_bundle

# `corral serve` in the background, serving the bundle's directory once a complete
# bundle is there (its digest file is written last).
server=""
start_corral() {
  local site=()
  if [[ -e $BUNDLE_STAMP ]]; then site=(--site-dir "$SITE_DIR"); fi
  "$CORRAL_BIN" serve --data-dir "${CORRAL_DATA_DIR:-$ROOT/corral-data}" "${site[@]}" "$@" &
  server=$!
}
stopping=false
stop_all() {
  stopping=true
  pkill -P "$bundle" 2>/dev/null || true
  kill "$bundle" 2>/dev/null || true
  if [[ -n $server ]]; then kill -TERM "$server" 2>/dev/null || true; fi
}
trap stop_all INT TERM

start_corral "$@"
if [[ ! -e $BUNDLE_STAMP ]]; then
  echo "run: the browser bundle is still being built: pages work without scripts" \
    "meanwhile, and Corral restarts to serve it when it is done"
fi
# Whichever ends first: the bundle (then Corral restarts if it changed) or Corral
# (then the bundle is stopped too, and this script ends as Corral did).
ended=""
status=0
wait -n -p ended "$bundle" "$server" || status=$?
if [[ $ended == "$server" ]]; then
  stop_all
  exit "$status"
fi
if [[ $ended == "$bundle" ]] && ((status == 0)); then
  if [[ $(cat "$BUNDLE_STAMP" 2>/dev/null) != "$bundle_before" ]]; then
    echo "run: the browser bundle is built; restarting Corral to serve it" \
      "(the first admin's login printed above stays valid)"
    kill -TERM "$server"
    wait "$server" || true
    start_corral "$@"
  fi
elif ! $stopping; then
  echo "run: warning: the browser bundle did not build (see above); Corral runs" \
    "without it: pages work, without scripts or styles" >&2
fi
wait "$server"
