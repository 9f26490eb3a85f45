#!/bin/sh
# Bootstrap's first step on a node: checks that puppet is there when a service needs it,
# makes the folders, writes the node's facts, puts the users' keys in place and lists
# the plugin resources already copied, one "<key> <sha256>" line each.
# Arguments: PUPPET_MISSING FACTS FACTS_FILE SHA_DIR KEYS_FILE KEYS FOLDER...
# (PUPPET_MISSING is the message to fail with when puppet is missing, empty when no
# service needs puppet; KEYS_FILE is the authorized_keys file the users' keys go in,
# empty to leave keys alone; KEYS holds one key line each, empty for none; paths are
# relative to the home folder.)
puppet_missing=$1 facts=$2 facts_file=$3 sha_dir=$4 keys_file=$5 keys=$6
shift 6
if [ -n "$puppet_missing" ]; then
  command -v puppet >/dev/null 2>&1 || {
    printf '%s\n' "$puppet_missing" >&2
    exit 3
  }
fi
set -e
cd "$HOME"
mkdir -p "$@"
printf '%s\n' "$facts" >"$facts_file.partial" && mv "$facts_file.partial" "$facts_file"
# The users' keys live between two marker lines that Corral owns; every other line of
# the file (Corral's own key among them) is kept as it is.
begin='# corral: users'"'"' keys begin (managed by Corral: lines up to the end marker are replaced)'
end='# corral: users'"'"' keys end'
if [ -n "$keys_file" ] && { [ -n "$keys" ] || [ -f "$keys_file" ]; }; then
  keys_dir=$(dirname "$keys_file")
  mkdir -p "$keys_dir"
  chmod 700 "$keys_dir"
  partial="$keys_file.corral-partial"
  {
    if [ -f "$keys_file" ]; then
      awk -v b="$begin" -v e="$end" '$0 == b { skip = 1; next } $0 == e { skip = 0; next } !skip' "$keys_file"
    fi
    if [ -n "$keys" ]; then
      printf '%s\n%s\n%s\n' "$begin" "$keys" "$end"
    fi
  } >"$partial"
  chmod 600 "$partial"
  mv "$partial" "$keys_file"
fi
for f in "$sha_dir"/*; do
  [ -f "$f" ] && printf '%s %s\n' "${f##*/}" "$(cat "$f")"
done
exit 0
