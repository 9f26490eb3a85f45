// Plays a recorded node terminal session on the audit page (docs/reaching-nodes.md).
//
// The audit page's Play buttons load this module the first time one is clicked (as
// the cluster page's Terminal buttons load terminal.js: app/src/terminal.rs marks the
// button data-player-pending, adds this script once and fires `corral-player`). It
// loads asciinema-player, vendored beside it in the bundle's script directory, and
// plays the asciicast the button names (GET /api/v1/audit/{id}/recording, the tenant's
// admins only) in a panel docked at the bottom of the window.

import { dock, headerButton, undock } from './dock.js';

const here = new URL('.', import.meta.url);

let library;
/** asciinema-player (a classic script setting window.AsciinemaPlayer) and its styles. */
function loadPlayer() {
  library ??= new Promise((resolve, reject) => {
    const link = document.createElement('link');
    link.rel = 'stylesheet';
    link.href = new URL('asciinema-player.css', here).href;
    document.head.append(link);
    const script = document.createElement('script');
    script.src = new URL('asciinema-player.js', here).href;
    script.onload = () => resolve(window.AsciinemaPlayer);
    script.onerror = () => reject(new Error('asciinema-player did not load'));
    document.head.append(script);
  });
  return library;
}

let open = null;

async function play(src, label) {
  const AsciinemaPlayer = await loadPlayer();
  open?.dispose();
  const download = document.createElement('a');
  download.href = src;
  download.download = 'session.cast';
  download.textContent = 'Download .cast';
  download.className = 'terminal-hint';
  const close = headerButton('Close', 'player-close');
  const { panel, screen } = dock({
    kind: 'player',
    label: `Recording of ${label}`,
    testid: 'player',
    title: `Recording · ${label}`,
    controls: [download, close],
  });
  const player = AsciinemaPlayer.create(src, screen, { fit: 'both', autoPlay: true, idleTimeLimit: 2 });
  open = {
    dispose() {
      player.dispose();
      undock(panel);
      open = null;
    },
  };
  close.addEventListener('click', () => open?.dispose());
}

function playPending() {
  for (const button of document.querySelectorAll('[data-player-pending]')) {
    button.removeAttribute('data-player-pending');
    const { playerSrc, playerLabel } = button.dataset;
    play(playerSrc, playerLabel ?? 'session').catch((error) => console.error('corral player:', error));
  }
}

document.addEventListener('corral-player', playPending);
playPending();
