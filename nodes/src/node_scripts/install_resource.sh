#!/bin/sh
# Bootstrap's last step for one plugin resource: decodes the uploaded base64, makes
# scripts executable or unpacks archives next to themselves (NAME.d), moves the resource
# into place and records its checksum.
# Arguments: HOW ENCODED FILE SHA SHA_FILE
# (HOW is plain, executable or unpack; paths are relative to the home folder.)
how=$1 encoded=$2 file=$3 sha=$4 sha_file=$5
set -e
cd "$HOME"
base64 -d "$encoded" >"$file.partial"
rm -f "$encoded"
case $how in
plain) ;;
executable) chmod 755 "$file.partial" ;;
unpack)
  rm -rf "$file.d"
  mkdir -p "$file.d"
  tar -xf "$file.partial" -C "$file.d"
  ;;
*)
  printf 'corral: unknown way to install a resource: %s\n' "$how" >&2
  exit 2
  ;;
esac
mv "$file.partial" "$file"
printf %s "$sha" >"$sha_file"
