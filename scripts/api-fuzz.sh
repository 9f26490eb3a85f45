#!/usr/bin/env bash
# Checks the API against its own OpenAPI document on a live `corral serve` (fresh SQLite
# data dir, free port), as a superadmin with an API token:
# 1. the document is valid OpenAPI (openapi-spec-validator);
# 2. a Python client generated from it (openapi-python-client) creates, changes and
#    deletes a cluster (scripts/api-client-check.py);
# 3. schemathesis sends generated inputs to every documented operation and checks that
#    no response is a server error (5xx).
# Exits non-zero on any finding.
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
MAX_EXAMPLES=${API_FUZZ_EXAMPLES:-25}

data=$(mktemp -d)
log=$data/server.log
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$CORRAL_BIN" serve --listen "127.0.0.1:$port" --data-dir "$data" >"$data/stdout" 2>"$log" &
server=$!
# shellcheck disable=SC2317  # called by the trap
cleanup() { kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$data"; }
trap cleanup EXIT

for _ in $(seq 1 100); do
  grep -q "Corral is running at" "$data/stdout" 2>/dev/null && break
  sleep 0.2
done
password=$(sed -n 's/.*with password \([^ ]*\) .*/\1/p' "$data/stdout")
[ -n "$password" ] || { echo "api-fuzz: the server did not start"; cat "$log"; exit 1; }
base="http://127.0.0.1:$port"
# Sign in as the first admin and mint a token for schemathesis.
jar=$data/cookies
csrf=$(curl -sf -c "$jar" -H 'content-type: application/json' \
  -d "{\"username\":\"admin\",\"password\":\"$password\"}" "$base/api/v1/session" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["csrf_token"])')
token=$(curl -sf -b "$jar" -H "x-csrf-token: $csrf" -H 'content-type: application/json' \
  -d '{"name":"schemathesis"}' "$base/api/v1/tokens" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["secret"])')
# Some catalog to aim at, so cluster and catalog operations get past "not found".
curl -sf -H "authorization: Bearer $token" -H 'content-type: application/json' \
  --data-binary @"$ROOT/testdata/lifecycle/catalog.json" "$base/api/v1/catalog/import" >/dev/null

curl -sf "$base/api/v1/openapi.json" >"$data/openapi.json"
"$VENV/bin/openapi-spec-validator" "$data/openapi.json"
# No post-generation hooks: they would run ruff, which is not installed.
printf 'post_hooks: []\n' >"$data/client-config.yaml"
"$VENV/bin/openapi-python-client" generate --path "$data/openapi.json" \
  --config "$data/client-config.yaml" --output-path "$data/client" --overwrite --fail-on-warning
PYTHONPATH="$data/client" "$VENV/bin/python" "$ROOT/scripts/api-client-check.py" "$base" "$token"

# Signing out or revoking would cut schemathesis off mid-run; those paths have tests.
"$VENV/bin/st" run "$base/api/v1/openapi.json" \
  --url "$base" \
  --header "Authorization: Bearer $token" \
  --checks not_a_server_error \
  --max-examples "$MAX_EXAMPLES" \
  --exclude-path "/api/v1/session" \
  --exclude-path "/api/v1/session/logout-everywhere" \
  --exclude-path "/api/v1/tokens/{id}" \
  --exclude-path "/api/v1/me/password" \
  --no-color
status=$?
if grep -q '"level":"ERROR"\|ERROR' "$log"; then
  echo "api-fuzz: the server logged errors:"; grep 'ERROR' "$log" | head -20
fi
exit $status
