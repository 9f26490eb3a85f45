#!/usr/bin/env bash
# Makes the upgrade fixture of a release: the databases that release's `corral` writes,
# which every later binary must migrate and serve (server/tests/it/upgrade.rs). Run it on a
# clean checkout of the release commit, after `cargo build -p server`:
#
#   scripts/make-upgrade-fixture.sh [RELEASE-NAME]     # default: the short commit hash
#
# It starts the built `corral serve` twice, on a fresh SQLite data dir and on a private
# database of the PostgreSQL at CORRAL_TEST_POSTGRES_URL (default the tests' server,
# postgres://postgres@127.0.0.1:5432/postgres; created, dumped, dropped), and through the
# API makes: a tenant `acme` with a tenant admin and a user, API tokens, credentials
# for an `exec` provider (the test plugin, whose check passes only with them), a
# catalog, a finished two-node cluster `shop` on local nodes, and a create of cluster
# `later` left queued (the tenant is marked for dedicated workers, which no process
# runs). It writes into testdata/upgrade/RELEASE/:
#   secret.key      the data dir's key, which sealed the credentials (both runs share it)
#   sqlite.db       the SQLite database, vacuumed
#   postgres.sql    pg_dump --no-owner --no-privileges --inserts of the PostgreSQL one
#   sqlite.json, postgres.json   what is in each: ids, passwords, token secrets
# The secrets are test-only: the fixture is public. Needs curl and python3.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RELEASE=${1:-$(git -C "$ROOT" rev-parse --short HEAD)}
CORRAL=${CORRAL:-${CARGO_TARGET_DIR:-$ROOT/target}/debug/corral}
PG_ADMIN_URL=${CORRAL_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}
OUT="$ROOT/testdata/upgrade/$RELEASE"
PLUGINS="$ROOT/engine/tests/plugins"

# Fixed test-only values: the upgrade test signs in and calls with them.
ALICE_PASSWORD="alice-upgrade-fixture-pw"
BOB_PASSWORD="bob-upgrade-fixture-pw"
PROVIDER_TOKEN="inhouse-upgrade-fixture-token"

die() { echo "make-upgrade-fixture: $*" >&2; exit 1; }

[ -x "$CORRAL" ] || die "no corral binary at $CORRAL (build it, or set CORRAL)"
[ -e "$OUT" ] && die "$OUT exists: a release's fixture is made once"
if [ -n "$(git -C "$ROOT" status --porcelain -- migrations)" ]; then
  die "migrations/ has uncommitted changes: the fixture must hold the release's schema"
fi
for tool in curl python3 pg_dump psql; do
  command -v "$tool" >/dev/null || die "$tool is needed"
done

WORK=$(mktemp -d /tmp/corral-fixture.XXXXXX)
SERVER_PID=""
PG_DB=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
  for data in "$WORK"/*/; do kill_nodes "$data"; done
  if [ -n "$PG_DB" ]; then
    psql -q "$PG_ADMIN_URL" -c "DROP DATABASE IF EXISTS $PG_DB WITH (FORCE)" >/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# Kills the local nodes' processes (sshd and what its steps started) under data dir $1,
# found by process id: sshd is started with `-f DATA/nodes/...` and every process of a
# node's steps carries CORRAL_LOCAL_NODE=DATA/nodes/... in its environment.
kill_nodes() {
  local nodes="${1%/}/nodes/" proc pid
  for proc in /proc/[0-9]*; do
    pid=${proc#/proc/}
    # A process may end meanwhile: its files are then gone, which is no error.
    if { tr '\0' '\n' < "/proc/$pid/cmdline"; } 2>/dev/null | grep -qF -- "$nodes" ||
       { tr '\0' '\n' < "/proc/$pid/environ"; } 2>/dev/null | grep -qF "CORRAL_LOCAL_NODE=$nodes"
    then
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
}

# json FIELD: the top-level FIELD of the JSON object on standard input.
json() { python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

# api METHOD PATH TOKEN [BODY]: one API call as the token's user; fails on an error answer.
api() {
  local args=(-sS --fail-with-body -X "$1" -H "Authorization: Bearer $3")
  if [ $# -ge 4 ]; then args+=(-H 'content-type: application/json' --data "$4"); fi
  curl "${args[@]}" "$URL/api/v1$2"
}

# token_for USER PASSWORD: signs in with a session and makes a full API token.
token_for() {
  local jar="$WORK/$1.cookies" csrf
  csrf=$(curl -sS --fail-with-body -c "$jar" -H 'content-type: application/json' \
    --data "{\"username\": \"$1\", \"password\": \"$2\"}" "$URL/api/v1/session" | json csrf_token)
  curl -sS --fail-with-body -b "$jar" -X POST -H "x-csrf-token: $csrf" \
    -H 'content-type: application/json' --data '{"name": "upgrade-fixture"}' \
    "$URL/api/v1/tokens" | json secret
}

# wait_job TOKEN JOB STATE: waits (up to 2 minutes) for the job to be in STATE.
wait_job() {
  local state=""
  for _ in $(seq 1 240); do
    state=$(api GET "/jobs/$2" "$1" | json state)
    [ "$state" = "$3" ] && return 0
    case "$state" in failed|cancelled) break ;; esac
    sleep 0.5
  done
  die "job $2 is $state, not $3: $(api GET "/jobs/$2" "$1")"
}

# start DATA [ARGS...]: starts corral serve on DATA; sets URL, ADMIN_PASSWORD, SERVER_PID.
start() {
  local data=$1 out="$1.out"
  shift
  "$CORRAL" serve --listen 127.0.0.1:0 --data-dir "$data" --provider-plugins "$PLUGINS" \
    "$@" > "$out" 2> "$data.log" &
  SERVER_PID=$!
  URL=""
  for _ in $(seq 1 120); do
    URL=$(sed -n 's|^Corral is running at \(http://[^ ]*\)/$|\1|p' "$out")
    [ -n "$URL" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || die "corral serve stopped: $(tail -n 5 "$data.log")"
    sleep 0.5
  done
  [ -n "$URL" ] || die "corral serve did not start in a minute"
  ADMIN_PASSWORD=$(sed -n 's/.*with password \([^ ]*\).*/\1/p' "$out")
  [ -n "$ADMIN_PASSWORD" ] || die "the first start printed no admin password"
}

stop() {
  kill -TERM "$SERVER_PID"
  wait "$SERVER_PID" || die "corral serve did not stop cleanly"
  SERVER_PID=""
}

# populate BACKEND: makes everything the fixture holds on the running server and writes
# the manifest BACKEND.json.
populate() {
  local admin_token tenant alice_token sha catalog shop_job shop later_job later
  admin_token=$(token_for admin "$ADMIN_PASSWORD")
  tenant=$(api POST /tenants "$admin_token" '{"name": "acme", "local_nodes": true}' | json id)
  api POST /users "$admin_token" \
    "{\"username\": \"alice\", \"password\": \"$ALICE_PASSWORD\", \"role\": \"tenant-admin\", \"tenant\": \"acme\"}" >/dev/null
  api POST /users "$admin_token" \
    "{\"username\": \"bob\", \"password\": \"$BOB_PASSWORD\", \"role\": \"user\", \"tenant\": \"acme\"}" >/dev/null
  alice_token=$(token_for alice "$ALICE_PASSWORD")
  sha=$(printf '%s' "$PROVIDER_TOKEN" | sha256sum | cut -d' ' -f1)
  catalog=$(sed "s/EXPECT_TOKEN_SHA256/$sha/" "$ROOT/testdata/upgrade/catalog.json")
  api POST /catalog/import "$alice_token" "$catalog" >/dev/null
  api PUT /providers/inhouse/credentials "$alice_token" "{\"token\": \"$PROVIDER_TOKEN\"}" >/dev/null
  # The credentials work now: the upgrade test asks the same check after migrating.
  api POST /providers/inhouse/test "$alice_token" '{}' > "$WORK/check.json"
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); sys.exit(0 if r.get("passed") else 1)' \
    "$WORK/check.json" || die "the provider check failed: $(cat "$WORK/check.json")"

  shop_job=$(api POST /clusters "$alice_token" '{"name": "shop", "template": "box", "size": 2}' | json job_id)
  wait_job "$alice_token" "$shop_job" succeeded
  shop=$(api GET /jobs/"$shop_job" "$alice_token" | json cluster_id)
  # No process serves acme's dedicated workers: its next create waits in the queue.
  api PUT "/tenants/$tenant/dedicated-workers" "$admin_token" '{"dedicated_workers": true}' >/dev/null
  later_job=$(api POST /clusters "$alice_token" '{"name": "later", "template": "box", "size": 1}' | json job_id)
  sleep 2
  wait_job "$alice_token" "$later_job" queued
  later=$(api GET /jobs/"$later_job" "$alice_token" | json cluster_id)

  python3 - "$OUT/$1.json" <<PY
import json, os, sys
manifest = {
    "release": "$RELEASE",
    "commit": "$(git -C "$ROOT" rev-parse HEAD)",
    "corral_version": "$("$CORRAL" --version)",
    "newest_migration": sorted(os.listdir("$ROOT/migrations/$1"))[-1],
    "tenant": {"name": "acme", "id": "$tenant", "dedicated_workers": True},
    "users": {
        "admin": {"password": "$ADMIN_PASSWORD", "role": "superadmin", "token": "$admin_token"},
        "alice": {"password": "$ALICE_PASSWORD", "role": "tenant-admin", "token": "$alice_token"},
        "bob": {"password": "$BOB_PASSWORD", "role": "user"},
    },
    "provider": {"name": "inhouse", "plugin": "corral-test-provider", "token": "$PROVIDER_TOKEN"},
    "clusters": {
        "shop": {"id": "$shop", "template": "box", "size": 2, "job": "$shop_job", "job_state": "succeeded"},
        "later": {"id": "$later", "template": "box", "size": 1, "job": "$later_job", "job_state": "queued"},
    },
}
with open(sys.argv[1], "w") as out:
    json.dump(manifest, out, indent=2)
    out.write("\n")
PY
}

mkdir -p "$OUT"

# SQLite.
mkdir -m 0700 "$WORK/sqlite"
start "$WORK/sqlite"
populate sqlite
stop
kill_nodes "$WORK/sqlite"
python3 -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute("VACUUM INTO ?", (sys.argv[2],))' \
  "$WORK/sqlite/corral.db" "$OUT/sqlite.db"
cp "$WORK/sqlite/secret.key" "$OUT/secret.key"

# PostgreSQL, with the same secret key.
PG_DB="corral_fixture_$(date +%s)_$$"
psql -q "$PG_ADMIN_URL" -c "CREATE DATABASE $PG_DB" >/dev/null
PG_URL="${PG_ADMIN_URL%/*}/$PG_DB"
mkdir -m 0700 "$WORK/postgres"
install -m 0600 "$OUT/secret.key" "$WORK/postgres/secret.key"
start "$WORK/postgres" --database-url "$PG_URL"
populate postgres
stop
kill_nodes "$WORK/postgres"
pg_dump --no-owner --no-privileges --inserts --file "$OUT/postgres.sql" "$PG_URL"

echo "make-upgrade-fixture: wrote $OUT:"
ls -l "$OUT"
