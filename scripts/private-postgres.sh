#!/usr/bin/env bash
# A private PostgreSQL server for fault tests: one a test may stop and start as it
# likes, never the shared server at 127.0.0.1:5432. Its cluster lives in DIR/data,
# it listens on 127.0.0.1:PORT only (and a socket in DIR), every local login is
# trusted, and the superuser is `postgres`. Durability is traded for speed (fsync
# off): a stop, even `immediate`, loses nothing, only a machine crash could (so
# commits stay synchronous: an asynchronous commit still in PostgreSQL's memory
# would be lost by an immediate stop).
#
#   scripts/private-postgres.sh start DIR PORT     initdb on first use, then start;
#                                                  returns once it accepts connections
#   scripts/private-postgres.sh stop DIR [MODE]    pg_ctl stop -m MODE (fast, immediate
#                                                  or smart; default fast); quiet when
#                                                  it is not running
#
# PostgreSQL refuses to run as root, so as root the server runs as the `postgres`
# user (DIR is handed to it). PG_BIN names the binaries' directory (default: the
# newest under /usr/lib/postgresql).

set -euo pipefail

usage() {
  echo "usage: $0 start DIR PORT | stop DIR [fast|immediate|smart]" >&2
  exit 2
}

pg_bin() {
  if [ -n "${PG_BIN:-}" ]; then
    echo "$PG_BIN"
    return
  fi
  local newest
  newest=$(find /usr/lib/postgresql -mindepth 1 -maxdepth 1 -type d 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$newest" ] || [ ! -x "$newest/bin/pg_ctl" ]; then
    echo "private-postgres: no PostgreSQL binaries under /usr/lib/postgresql (set PG_BIN)" >&2
    exit 1
  fi
  echo "$newest/bin"
}

# Runs a PostgreSQL binary as the user that owns the cluster.
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

[ $# -ge 2 ] || usage
command=$1
dir=$2
bin=$(pg_bin)

case "$command" in
  start)
    [ $# -eq 3 ] || usage
    port=$3
    mkdir -p "$dir"
    if [ "$(id -u)" = 0 ]; then
      chown postgres: "$dir"
    fi
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --no-sync \
        --encoding=UTF8 --locale=C >"$dir/initdb.log" 2>&1 || {
        cat "$dir/initdb.log" >&2
        exit 1
      }
    fi
    options="-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir"
    options="$options -c max_connections=300 -c fsync=off -c full_page_writes=off"
    if ! as_owner "$bin/pg_ctl" start -D "$dir/data" -w -t 60 -l "$dir/postgres.log" \
      -o "$options" >/dev/null; then
      tail -n 20 "$dir/postgres.log" >&2 || true
      exit 1
    fi
    ;;
  stop)
    [ $# -le 3 ] || usage
    mode=${3:-fast}
    case "$mode" in fast | immediate | smart) ;; *) usage ;; esac
    if [ -f "$dir/data/postmaster.pid" ]; then
      as_owner "$bin/pg_ctl" stop -D "$dir/data" -m "$mode" -w -t 60 >/dev/null
    fi
    ;;
  *)
    usage
    ;;
esac
