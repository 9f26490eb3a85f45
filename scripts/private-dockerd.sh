#!/usr/bin/env bash
# A Docker daemon of a test's own, for fault tests that kill and restart the engine:
# the machine's dockerd (scripts/dockerd.sh) serves other tests at the same time and
# must never be touched. Everything the private daemon has is under DIR: its socket
# (DIR/docker.sock), pid file, data root, exec root (containerd's state and socket
# included) and log (DIR/dockerd.log).
#
#   scripts/private-dockerd.sh start DIR POOL   start it (or start it again after a kill)
#                                               and wait until it answers (30 s at most)
#   scripts/private-dockerd.sh kill DIR         SIGKILL dockerd and its containerd, as a
#                                               crash would (containers' shims live on)
#   scripts/private-dockerd.sh stop DIR POOL    stop it for good and clean up after it:
#                                               every process and mount it left, and its
#                                               networks' bridges
#   scripts/private-dockerd.sh load DIR IMAGE   copy IMAGE from the machine's daemon
#                                               into it (no registry, no rebuild)
#
# POOL is the private /16 its networks get their /24s from, e.g. 10.231.0.0/16; it must
# be unused on this host (no route into it), so the daemon's bridges clash with nothing.
# The daemon leaves the host's firewall alone (--iptables=false: the machine's daemon
# owns the DOCKER chains) and has no default bridge (--bridge=none); published ports go
# through docker-proxy, which is all Corral needs (sshd on 127.0.0.1). Its containers'
# cgroups are under a parent named after DIR, apart from the machine's daemon's.

set -uo pipefail

usage() {
  echo "usage: $0 start DIR POOL | kill DIR | stop DIR POOL | load DIR IMAGE" >&2
  exit 2
}

[ $# -ge 2 ] || usage
command=$1
dir=$2
third=${3:-}
pool=$third
sock=$dir/docker.sock
pidfile=$dir/docker.pid
containerd_pidfile=$dir/exec/containerd/containerd.pid
log=$dir/dockerd.log
cgroup_parent=corral-private-$(basename "$dir")

# The first three octets' prefix of POOL ("10.231." for 10.231.0.0/16).
pool_prefix() {
  local base=${pool%/16}
  [ "$base" != "$pool" ] || { echo "private-dockerd: POOL must be a /16: $pool" >&2; exit 2; }
  echo "${base%.0.0}."
}

pid_of() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

start() {
  [ -n "$pool" ] || usage
  local prefix
  prefix=$(pool_prefix)
  mkdir -p "$dir/data" "$dir/exec"
  [ -f "$dir/daemon.json" ] || echo '{}' >"$dir/daemon.json"
  if pid=$(pid_of "$pidfile"); then
    echo "private-dockerd: already running (pid $pid)" >&2
  else
    # Refused on a host that routes into the pool already (another daemon's networks).
    if [ ! -e "$dir/pool-checked" ] && ip -4 route show | grep -q "^${prefix//./\\.}"; then
      echo "private-dockerd: $pool is in use on this host:" >&2
      ip -4 route show | grep "^${prefix//./\\.}" >&2
      exit 1
    fi
    touch "$dir/pool-checked"
    printf '\n--- %s: started by scripts/private-dockerd.sh\n' "$(date -u +%FT%TZ)" >>"$log"
    # Its own session, stdin from /dev/null: it outlives this script.
    (cd / && exec setsid dockerd \
      --config-file "$dir/daemon.json" \
      --host "unix://$sock" \
      --pidfile "$pidfile" \
      --data-root "$dir/data" \
      --exec-root "$dir/exec" \
      --bridge none \
      --iptables=false \
      --ip-forward=false \
      --ip-masq=false \
      --default-address-pool "base=$pool,size=24" \
      --cgroup-parent "/$cgroup_parent" \
      >>"$log" 2>&1 </dev/null) &
  fi
  local waited=0
  until DOCKER_HOST="unix://$sock" docker info >/dev/null 2>&1; do
    if [ "$waited" -ge 300 ]; then
      echo "private-dockerd: no answer on $sock in 30 s; the end of $log:" >&2
      grep -v 'module=grpc' "$log" | tail -n 20 >&2
      exit 1
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
}

kill_daemons() {
  local pid
  for file in "$pidfile" "$containerd_pidfile"; do
    if pid=$(pid_of "$file"); then kill -KILL "$pid"; fi
  done
  # Gone before this returns: a start right after must not find them.
  for file in "$pidfile" "$containerd_pidfile"; do
    local tries=0
    while pid=$(pid_of "$file") && [ "$tries" -lt 50 ]; do
      sleep 0.1
      tries=$((tries + 1))
    done
  done
}

# Processes whose command line names DIR: dockerd, containerd, the containers' shims
# and docker-proxy (which names the container's address, so it is found by its parent).
processes_naming_dir() {
  local entry
  for entry in /proc/[0-9]*/cmdline; do
    # (2>/dev/null first: a process may be gone before its cmdline is read)
    if tr '\0' ' ' 2>/dev/null <"$entry" | grep -qF -- "$dir/"; then
      entry=${entry#/proc/}
      echo "${entry%/cmdline}"
    fi
  done
}

stop() {
  [ -n "$pool" ] || usage
  local prefix pid
  prefix=$(pool_prefix)
  # Asked first, so it stops its containers and unmounts what it mounted.
  if pid=$(pid_of "$pidfile"); then
    kill -TERM "$pid"
    local tries=0
    while kill -0 "$pid" 2>/dev/null && [ "$tries" -lt 200 ]; do
      sleep 0.1
      tries=$((tries + 1))
    done
  fi
  # Then whatever is left: the containers' processes (by their cgroups), and every
  # process naming DIR.
  local procs
  for procs in /sys/fs/cgroup/*/"$cgroup_parent"/*/cgroup.procs \
    /sys/fs/cgroup/"$cgroup_parent"/*/cgroup.procs; do
    [ -f "$procs" ] || continue
    while read -r pid; do kill -KILL "$pid" 2>/dev/null; done <"$procs"
  done
  for pid in $(processes_naming_dir); do
    [ "$pid" = "$$" ] || kill -KILL "$pid" 2>/dev/null
  done
  sleep 0.2
  # Mounts under DIR (overlays, shm, network namespaces), deepest first.
  awk -v dir="$dir/" 'index($2, dir) == 1 { print $2 }' /proc/mounts | sort -r |
    while read -r mount; do umount -l "$mount" 2>/dev/null; done
  # Its networks' bridges: the links holding an address of the pool.
  ip -4 -o addr show | awk -v prefix="$prefix" 'index($4, prefix) == 1 { print $2 }' |
    sort -u | while read -r link; do ip link delete "$link" 2>/dev/null; done
  # Empty cgroups it made.
  for procs in /sys/fs/cgroup/*/"$cgroup_parent" /sys/fs/cgroup/"$cgroup_parent"; do
    [ -d "$procs" ] || continue
    find "$procs" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  rm -rf "$dir/data" "$dir/exec"
}

load() {
  local image=$third
  [ -n "$image" ] || usage
  docker save "$image" | DOCKER_HOST="unix://$sock" docker load --quiet
}

case $command in
  start) start ;;
  load) load ;;
  kill) kill_daemons ;;
  stop) stop ;;
  *) usage ;;
esac
