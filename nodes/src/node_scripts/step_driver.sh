#!/usr/bin/env bash
# The step driver: one per SSH session, fed each step as a frame on stdin (a header
# line "<nonce> <length>", then exactly <length> bytes of sh). How and why it works
# so is told in nodes/src/ssh/step_shell.rs. This text is quoted whole inside single
# quotes, so it never holds that character, comments included.
exec 3>&2 2>/dev/null
# Steps start in the home folder; without one they start where the login put them.
cd "$HOME" || :
corral_leader=
corral_abort() {
  [ -n "$corral_leader" ] && kill -KILL -- "-$corral_leader"
  exit "$1"
}
corral_running() {
  IFS= read -r corral_proc <"/proc/$1/stat" || {
    kill -0 "$1"
    return
  }
  case ${corral_proc##*") "} in
  [ZX]*) return 1 ;;
  ?" $$ "*) return 0 ;;
  esac
  return 1
}
trap "corral_abort 143" TERM
trap "corral_abort 129" HUP
corral_radix=.
corral_byte=unread
IFS= read -r -t 0.001 corral_byte </dev/null
[ "$corral_byte" = unread ] && corral_radix=,
unset corral_byte
while IFS=" " read -r corral_nonce corral_length &&
  LC_ALL=C IFS= read -r -N "$corral_length" corral_step; do
  set -m
  eval "(unset corral_leader corral_status corral_nonce corral_length corral_step corral_radix
$corral_step
) </dev/null 3>&- & corral_leader=\$!" 2>&3
  corral_status=$?
  set +m
  if [ -n "$corral_leader" ]; then
    corral_ms=1
    while corral_running "$corral_leader"; do
      printf -v corral_wait "0%s%03d" "$corral_radix" "$corral_ms"
      IFS= read -r -t "$corral_wait" -N 1 corral_byte
      [ $? -gt 128 ] || corral_abort 143
      corral_ms=$((corral_ms + (corral_ms + 3) / 4))
      [ "$corral_ms" -gt 50 ] && corral_ms=50
    done
    wait "$corral_leader"
    corral_status=$?
    corral_leader=
    unset corral_ms corral_wait corral_byte corral_proc
  fi
  printf "\037%s %s\n" "$corral_nonce" "$corral_status"
  printf "\037%s\n" "$corral_nonce" >&3
done
