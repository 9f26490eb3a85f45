#!/usr/bin/env bash
# Copies the browser libraries the bundle vendors (frontend/js/package.json: xterm.js
# and its fit addon for the node terminal, asciinema-player for recorded sessions)
# and Corral's own loaders for them (with dock.js, the panel both dock) into the bundle
# directory given as $1. Installs them from the lockfile first when node_modules is
# missing. Source maps are left out (the bundle serves no .map files).
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
out=${1:?usage: vendor-js.sh PKG_DIR}
js=$ROOT/frontend/js
if [ ! -d "$js/node_modules/@xterm/xterm" ] || [ ! -d "$js/node_modules/asciinema-player" ]; then
  (cd "$js" && npm ci --silent --no-audit --no-fund)
fi
modules=$js/node_modules
# name in the bundle <- file in node_modules
vendor() {
  sed '/^\/\/# sourceMappingURL=/d' "$modules/$2" > "$out/$1"
}
vendor xterm.js @xterm/xterm/lib/xterm.mjs
vendor xterm-fit.js @xterm/addon-fit/lib/addon-fit.mjs
vendor xterm.css @xterm/xterm/css/xterm.css
vendor asciinema-player.js asciinema-player/dist/bundle/asciinema-player.min.js
vendor asciinema-player.css asciinema-player/dist/bundle/asciinema-player.css
cp "$js/terminal.js" "$js/player.js" "$js/dock.js" "$out/"
