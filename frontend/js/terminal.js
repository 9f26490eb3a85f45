// Corral's terminal on a node, in the browser (docs/reaching-nodes.md).
//
// The cluster page's Terminal buttons load this module the first time one is clicked
// (app/src/pages/clusters/show.rs: it marks the button data-terminal-pending, adds
// this script once and fires `corral-terminal` on the document). This module in turn
// loads xterm.js and its fit addon, vendored next to it in the bundle's script
// directory, so no page pays for them until a terminal is opened.
//
// The terminal talks to GET /api/v1/clusters/{id}/nodes/{number}/terminal, a
// WebSocket: binary messages carry keystrokes and pastes to the node and its output
// back, text messages carry window size changes ({"type":"resize",...}) to it and the
// shell's exit status ({"type":"exit",...}) back. The close code says why a session
// ended; the page offers to reconnect (a new shell) after any end.

import { dock, headerButton, undock } from './dock.js';

const here = new URL('.', import.meta.url);

/** The page's CSP nonce (scripts carry it; the DOM hides it from attributes only). */
function pageNonce() {
  return document.querySelector('script[nonce]')?.nonce ?? '';
}

let libraries;
/** xterm.js, its fit addon and its stylesheet, loaded once. */
function loadXterm() {
  libraries ??= (async () => {
    const link = document.createElement('link');
    link.rel = 'stylesheet';
    link.href = new URL('xterm.css', here).href;
    document.head.append(link);
    const [{ Terminal }, { FitAddon }] = await Promise.all([
      import(new URL('xterm.js', here).href),
      import(new URL('xterm-fit.js', here).href),
    ]);
    return { Terminal, FitAddon };
  })();
  return libraries;
}

/**
 * Runs `create` with the style elements it makes carrying the page's nonce: xterm.js
 * sizes its rows with a <style> of its own, which the page's policy allows only so.
 */
function withNonceOnStyles(create) {
  const nonce = pageNonce();
  const original = document.createElement;
  document.createElement = function (name, options) {
    const element = original.call(document, name, options);
    if (String(name).toLowerCase() === 'style') element.nonce = nonce;
    return element;
  };
  try {
    return create();
  } finally {
    document.createElement = original;
  }
}

/** Why a session ended, by the server's close code. */
function endedBecause(event) {
  switch (event.code) {
    case 1000: return 'the session ended';
    case 4000: return 'closed after being idle';
    case 4003: return 'closed: you are no longer allowed (signed out, or your role changed)';
    default: return 'disconnected';
  }
}

let open = null;

/** Opens (or moves) the docked terminal to node `node` of cluster `cluster`. */
async function openTerminal(cluster, node, label) {
  const { Terminal, FitAddon } = await loadXterm();
  open?.dispose();
  const status = document.createElement('span');
  status.className = 'terminal-status';
  status.dataset.testid = 'terminal-status';
  status.setAttribute('role', 'status');
  const hint = document.createElement('span');
  hint.className = 'muted terminal-hint';
  hint.textContent = 'Ctrl+Shift+C copies, Ctrl+Shift+V pastes';
  const reconnect = headerButton('Reconnect', 'terminal-reconnect');
  reconnect.hidden = true;
  const close = headerButton('Close', 'terminal-close');
  const { panel, screen } = dock({
    label: `Terminal on ${label}`,
    testid: 'terminal',
    title: `Terminal · ${label}`,
    controls: [status, hint, reconnect, close],
  });

  const term = new Terminal({
    cursorBlink: true,
    fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace',
    fontSize: 14,
    scrollback: 5000,
  });
  const fit = new FitAddon();
  term.loadAddon(fit);
  withNonceOnStyles(() => term.open(screen));
  fit.fit();

  // Copy and paste: Ctrl+Shift+C/V (Ctrl+C stays the shell's interrupt); the browser's
  // own paste (menu, middle click) reaches xterm.js directly.
  term.attachCustomKeyEventHandler((event) => {
    if (event.type !== 'keydown' || !event.ctrlKey || !event.shiftKey) return true;
    if (event.code === 'KeyC') {
      const selected = term.getSelection();
      if (selected) navigator.clipboard?.writeText(selected);
      return false;
    }
    if (event.code === 'KeyV') {
      navigator.clipboard?.readText().then((text) => term.paste(text));
      return false;
    }
    return true;
  });

  let socket = null;
  const encoder = new TextEncoder();
  const send = (data) => {
    if (socket?.readyState === WebSocket.OPEN) socket.send(data);
  };
  const typing = term.onData((data) => send(encoder.encode(data)));
  const binary = term.onBinary((data) => send(Uint8Array.from(data, (c) => c.charCodeAt(0))));
  const resizing = term.onResize(({ cols, rows }) =>
    send(JSON.stringify({ type: 'resize', columns: cols, rows })));

  function connect() {
    reconnect.hidden = true;
    status.textContent = 'connecting…';
    panel.dataset.state = 'connecting';
    const csrf = document.querySelector('meta[name="csrf-token"]')?.content ?? '';
    const url = new URL(
      `/api/v1/clusters/${encodeURIComponent(cluster)}/nodes/${encodeURIComponent(node)}/terminal`,
      location.href,
    );
    url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    url.searchParams.set('csrf', csrf);
    url.searchParams.set('columns', term.cols);
    url.searchParams.set('rows', term.rows);
    const ws = new WebSocket(url);
    ws.binaryType = 'arraybuffer';
    socket = ws;
    ws.onopen = () => {
      status.textContent = 'connected';
      panel.dataset.state = 'open';
      term.focus();
    };
    ws.onmessage = (event) => {
      if (typeof event.data === 'string') {
        const message = JSON.parse(event.data);
        if (message.type === 'exit') term.write(`\r\n[the shell exited with status ${message.status}]\r\n`);
        return;
      }
      term.write(new Uint8Array(event.data));
    };
    ws.onclose = (event) => {
      if (socket !== ws) return;
      socket = null;
      // A refused upgrade closes with 1006 before opening: the server's reason is in
      // its HTTP answer, which a page cannot read; say what it most likely was.
      const why = panel.dataset.state === 'connecting'
        ? 'could not connect (is the node running, and may you reach it?)'
        : endedBecause(event);
      status.textContent = why;
      panel.dataset.state = 'closed';
      panel.dataset.closeCode = String(event.code);
      reconnect.hidden = false;
    };
  }

  const observer = new ResizeObserver(() => fit.fit());
  observer.observe(screen);
  reconnect.addEventListener('click', () => {
    term.reset();
    connect();
  });
  close.addEventListener('click', () => open?.dispose());
  open = {
    dispose() {
      observer.disconnect();
      typing.dispose();
      binary.dispose();
      resizing.dispose();
      const ws = socket;
      socket = null;
      ws?.close(1000);
      term.dispose();
      undock(panel);
      if (open?.panel === panel) open = null;
    },
    panel,
  };
  connect();
}

/** Opens a terminal for each button the page marked pending. */
function openPending() {
  for (const button of document.querySelectorAll('[data-terminal-pending]')) {
    button.removeAttribute('data-terminal-pending');
    const { terminalCluster, terminalNode, terminalLabel } = button.dataset;
    openTerminal(terminalCluster, terminalNode, terminalLabel ?? `node ${terminalNode}`)
      .catch((error) => console.error('corral terminal:', error));
  }
}

document.addEventListener('corral-terminal', openPending);
openPending();
