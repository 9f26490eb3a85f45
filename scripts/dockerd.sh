#!/usr/bin/env bash
# Makes sure a Docker daemon answers, for the `docker` provider's nodes (containers that
# each run their own sshd; see docs/docker-nodes.md). Machines without an init system
# (no systemd here) never start dockerd by themselves, so this starts it in the
# background, logging to $HOME/.cache/corral/dockerd.log, and waits until `docker info`
# answers (30 s at most, CORRAL_DOCKERD_TIMEOUT to change). Quick when it already runs.
#
#   scripts/dockerd.sh            run: exits 0 once Docker answers, 1 (with the log's
#                                 tail on stderr) when it does not
#   source scripts/dockerd.sh     sourced: only defines corral_dockerd, which does the
#                                 same and returns instead of exiting
#
# A DOCKER_HOST naming another daemon than the local one is only checked, never started.

corral_dockerd() {
  local sock=/var/run/docker.sock
  local log=$HOME/.cache/corral/dockerd.log
  local timeout=${CORRAL_DOCKERD_TIMEOUT:-30}
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  # Talk to the daemon as this user if the socket lets us, else through sudo (then
  # Corral itself, run as this user, cannot use Docker: said once it answers).
  local docker=(docker)
  if [ -n "$sudo" ] && [ -S "$sock" ] && [ ! -w "$sock" ]; then docker=(sudo docker); fi

  if [ -n "${DOCKER_HOST:-}" ] && [ "$DOCKER_HOST" != "unix://$sock" ]; then
    if "${docker[@]}" info >/dev/null 2>&1; then
      _corral_dockerd_client "${docker[@]}"
      return
    fi
    echo "dockerd: DOCKER_HOST=$DOCKER_HOST does not answer (docker info failed)" >&2
    return 1
  fi
  if [ -S "$sock" ] && "${docker[@]}" info >/dev/null 2>&1; then
    _corral_dockerd_client "${docker[@]}"
    return
  fi
  local dockerd
  dockerd=$(command -v dockerd || { [ -x /usr/sbin/dockerd ] && echo /usr/sbin/dockerd; })
  if [ -z "$dockerd" ]; then
    echo "dockerd: not installed (scripts/bootstrap.sh installs Debian's docker.io)" >&2
    return 1
  fi
  mkdir -p "$(dirname "$log")"

  # One starter at a time, holding the lock until the daemon answers: a second script
  # arriving meanwhile waits here and then finds it running.
  local status=0
  {
    if ! flock -w "$timeout" 9; then
      echo "dockerd: another script has been starting dockerd for ${timeout} s" >&2
      status=1
    elif ! { [ -S "$sock" ] && "${docker[@]}" info >/dev/null 2>&1; }; then
      _corral_dockerd_start || status=1
    fi
  } 9>>"$(dirname "$log")/dockerd.lock"
  [ "$status" = 0 ] && _corral_dockerd_client "${docker[@]}"
  return "$status"
}

# Starts dockerd unless one is already starting (its pid file names a live process),
# then waits for `docker info`. Uses corral_dockerd's locals.
_corral_dockerd_start() {
  local started="" pid
  pid=$(cat /var/run/docker.pid 2>/dev/null || true)
  if [ -n "$pid" ] && $sudo kill -0 "$pid" 2>/dev/null; then
    echo "dockerd: waiting for the daemon already starting (pid $pid)" >&2
  else
    # A stale pid file or socket left by a dead daemon, dockerd replaces itself.
    echo "dockerd: starting (no init system here); log in $log" >&2
    printf '\n--- %s: started by scripts/dockerd.sh\n' "$(date -u +%FT%TZ)" >>"$log"
    # Its own session, so it outlives the script (and terminal) that started it; and
    # not the lock's descriptor, which it would otherwise hold as long as it runs.
    (cd / && exec $sudo setsid "$dockerd" >>"$log" 2>&1 </dev/null 9>&-) &
    started=$!
  fi
  # Microseconds, from bash's clock (a `docker info` against a daemon still starting
  # can itself take a while, so the deadline is the clock's, not a count of tries).
  local begun=${EPOCHREALTIME/./} now=${EPOCHREALTIME/./}
  until [ -S "$sock" ] && "${docker[@]}" info >/dev/null 2>&1; do
    # Gone: neither the process started nor the one in the pid file lives (checked
    # after a second: setsid may fork before dockerd writes its pid file).
    local gone=""
    if [ -n "$started" ] && [ $((now - begun)) -ge 1000000 ] \
      && ! $sudo kill -0 "$started" 2>/dev/null; then
      pid=$(cat /var/run/docker.pid 2>/dev/null || true)
      if [ -z "$pid" ] || ! $sudo kill -0 "$pid" 2>/dev/null; then gone=1; fi
    fi
    if [ -n "$gone" ] || [ $((now - begun)) -ge $((timeout * 1000000)) ]; then
      if [ -n "$gone" ]; then
        echo "dockerd: the daemon exited while starting; the end of $log:" >&2
      else
        echo "dockerd: docker info gave no answer in ${timeout} s; the end of $log:" >&2
      fi
      # (without gRPC's chatter, which buries the reason)
      grep -v 'module=grpc' "$log" | tail -n 30 >&2 || true
      return 1
    fi
    sleep 0.2
    now=${EPOCHREALTIME/./}
    # A fresh socket is root's: go through sudo when this user may not use it.
    if [ -n "$sudo" ] && [ -S "$sock" ] && [ ! -w "$sock" ]; then docker=(sudo docker); fi
  done
  now=$(((${EPOCHREALTIME/./} - begun) / 100000))
  echo "dockerd: ready after $((now / 10)).$((now % 10)) s" >&2
}

# The `docker` first on PATH must speak to this daemon (a newer CLI negotiates down to
# an older daemon's API; one too new for it fails): warn, naming one that works.
_corral_dockerd_client() {
  if "$@" version --format '{{.Server.Version}}' >/dev/null 2>&1; then
    if [ "$1" = sudo ]; then
      echo "dockerd: warning: $(id -un) may not use /var/run/docker.sock; add it to" \
        "the docker group for Corral's docker provider" >&2
    fi
    return 0
  fi
  echo "dockerd: warning: $(command -v docker) cannot talk to this dockerd:" \
    "$("$@" version 2>&1 | tail -n 1)" >&2
  if [ -x /usr/bin/docker ]; then
    echo "dockerd: /usr/bin/docker (Debian's, the daemon's version) does:" \
      "put /usr/bin before $(dirname "$(command -v docker)") on PATH" >&2
  fi
  return 0
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -uo pipefail
  corral_dockerd
  exit $?
fi
