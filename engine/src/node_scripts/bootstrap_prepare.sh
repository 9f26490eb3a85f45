#!/bin/sh
# Bootstrap's first step on a node: checks that puppet is there when a service needs it,
# makes the folders, writes the node's facts and lists the plugin resources already
# copied, one "<key> <sha256>" line each.
# Arguments: PUPPET_MISSING FACTS FACTS_FILE SHA_DIR FOLDER...
# (PUPPET_MISSING is the message to fail with when puppet is missing, empty when no
# service needs puppet; paths are relative to the home folder.)
puppet_missing=$1 facts=$2 facts_file=$3 sha_dir=$4
shift 4
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
for f in "$sha_dir"/*; do
  [ -f "$f" ] && printf '%s %s\n' "${f##*/}" "$(cat "$f")"
done
exit 0
