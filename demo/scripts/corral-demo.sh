#!/bin/sh
# Runs one of the demo catalog's services on a local node: corral-demo.sh ACTION KIND [ARGS]
#   ACTION  install | configure | start | probe | stop | remove
#   KIND    kv | app | lb | role (python3 servers in corral-demo.py) | redis | memcached
#   ARGS    --port N (start, probe), --backends A,B (configure lb), --release R (install:
#           the release an app serves)
# Corral runs it in the service's own directory ($HOME/corral/services/NAME), so the pid
# file and log of each service live apart. start returns only once the service answers
# its health check, and fails with the service's log otherwise.
set -eu
action=${1:?usage: corral-demo.sh ACTION KIND [ARGS]}
kind=${2:?usage: corral-demo.sh ACTION KIND [ARGS]}
shift 2
demo="$HOME/corral/resources/scripts/corral-demo.py"
host=${CORRAL_HOST:?CORRAL_HOST is not set}
# Few malloc arenas: each reserves 64 MiB of address space, which counts against the
# hardware type's memory cap (ulimit -v) though it is never used.
export MALLOC_ARENA_MAX=2

port=""
backends=""
release=""
prev=""
for arg in "$@"; do
  case "$prev" in
    --port) port=$arg ;;
    --backends) backends=$arg ;;
    --release) release=$arg ;;
  esac
  prev=$arg
done

need() {
  command -v "$1" > /dev/null 2>&1 && return 0
  echo "$1 is not installed on this machine: $2" >&2
  exit 1
}

# Whether process $1 still runs. A service that exited stays a zombie until its parent
# reaps it, and its parent is whatever adopted it (PID 1 on a local node): some init
# programs reap only every second or two, so `kill -0` alone would wait on a corpse.
alive() {
  kill -0 "$1" 2> /dev/null || return 1
  state=$(sed 's/.*) //' "/proc/$1/stat" 2> /dev/null | cut -c1)
  [ "$state" != Z ] && [ -n "$state" ]
}

running() {
  [ -f pid ] && alive "$(cat pid)"
}

stop() {
  [ -f pid ] || return 0
  pid=$(cat pid)
  # setsid made the service its own process group: end it with its children.
  kill -TERM -- "-$pid" 2> /dev/null || kill -TERM "$pid" 2> /dev/null || true
  tries=0
  while alive "$pid" && [ "$tries" -lt 250 ]; do
    sleep 0.02
    tries=$((tries + 1))
  done
  kill -KILL -- "-$pid" 2> /dev/null || true
  rm -f pid
}

case "$action" in
  install)
    need python3 "install python3 (apt-get install python3)"
    case "$kind" in
      redis) need redis-server "run scripts/bootstrap.sh (it installs redis-server)" ;;
      memcached) need memcached "run scripts/bootstrap.sh (it installs memcached)" ;;
    esac
    mkdir -p data
    # The release the app serves from its next start (an upgrade's reinstall changes it).
    [ -z "$release" ] || printf '%s\n' "$release" > release
    echo "$kind installed on $host${release:+ (release $release)}"
    ;;
  configure)
    if [ "$kind" = lb ]; then
      # The lb re-reads this file when it changes: a reconfigure needs no restart.
      printf '%s\n' "$backends" | tr ',' '\n' | sed '/^$/d' > backends.new
      mv backends.new backends
      echo "lb backends: $(tr '\n' ' ' < backends)"
    fi
    ;;
  start)
    if running; then
      echo "$kind already running (pid $(cat pid))"
      exit 0
    fi
    : "${port:?start needs --port}"
    case "$kind" in
      kv | app | role)
        setsid python3 "$demo" "$kind" "$@" > service.log 2>&1 < /dev/null &
        check="--url http://$host:$port/health"
        ;;
      lb)
        [ -f backends ] || : > backends
        setsid python3 "$demo" lb --port "$port" --backends-file "$PWD/backends" \
          > service.log 2>&1 < /dev/null &
        check="--url http://$host:$port/lb/health"
        ;;
      redis)
        need redis-server "run scripts/bootstrap.sh (it installs redis-server)"
        mkdir -p data
        # Protected mode (no password: loopback clients only) suits a local cluster,
        # whose nodes all have loopback addresses. A container's address is on its
        # cluster's own network, which only that cluster's nodes (and the host) reach,
        # and protected mode would refuse even the node itself there.
        case $host in 127.*) protected=yes ;; *) protected=no ;; esac
        setsid redis-server --bind "$host" --port "$port" --dir "$PWD/data" --save '' \
          --protected-mode "$protected" --appendonly no --daemonize no \
          > service.log 2>&1 < /dev/null &
        check="--port $port --send PING\\r\\n --expect +PONG"
        ;;
      memcached)
        need memcached "run scripts/bootstrap.sh (it installs memcached)"
        user=""
        # Never as root: a node running as root (an old local node) has it drop to nobody.
        [ "$(id -u)" = 0 ] && user="-u nobody"
        # shellcheck disable=SC2086
        setsid memcached -l "$host" -p "$port" -U 0 -m 32 $user > service.log 2>&1 < /dev/null &
        check="--port $port --send version\\r\\n --expect VERSION"
        ;;
      *)
        echo "unknown kind $kind" >&2
        exit 2
        ;;
    esac
    echo $! > pid
    # shellcheck disable=SC2086
    if ! python3 "$demo" probe $check --timeout 20; then
      echo "$kind did not become healthy on $host:$port; its log:" >&2
      tail -n 30 service.log >&2 || true
      stop
      exit 1
    fi
    echo "$kind answering on $host:$port (pid $(cat pid))"
    ;;
  probe)
    # The monitor's health check: whether the running service answers right now.
    : "${port:?probe needs --port}"
    case "$kind" in
      redis) check="--port $port --send PING\\r\\n --expect +PONG" ;;
      memcached) check="--port $port --send version\\r\\n --expect VERSION" ;;
      lb) check="--url http://$host:$port/lb/health" ;;
      *) check="--url http://$host:$port/health" ;;
    esac
    # shellcheck disable=SC2086
    exec python3 "$demo" probe $check --timeout 3
    ;;
  stop)
    stop
    echo "$kind stopped on $host"
    ;;
  remove)
    stop
    rm -rf data backends release service.log
    echo "$kind removed from $host"
    ;;
  *)
    echo "unknown action $action: use install, configure, start, probe, stop or remove" >&2
    exit 2
    ;;
esac
