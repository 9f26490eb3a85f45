#!/bin/sh
# A health check that fetches a URL from the node, with whichever client it has.
# Arguments: URL TIMEOUT_SECONDS
url=$1 timeout=$2
if command -v curl >/dev/null 2>&1; then
  curl -fsS -o /dev/null --max-time "$timeout" "$url"
elif command -v python3 >/dev/null 2>&1; then
  python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=float(sys.argv[2]))' "$url" "$timeout"
else
  echo 'neither curl nor python3 is on the node to fetch the URL' >&2
  exit 127
fi
