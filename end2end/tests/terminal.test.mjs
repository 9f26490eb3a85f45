// The node terminal in the browser (issue 41, points 3 and 4), in chromium against a
// real `corral serve` with real local nodes: the cluster page's Terminal button loads
// xterm.js on first use and opens a shell on the node as the node user; resizing the
// window changes the PTY's size; nothing is blocked by the page's content security
// policy; an idle session is closed and Reconnect opens a new one; a user of another
// tenant is refused the upgrade; with the tenant's setting off the button is gone and
// the endpoint answers 404; with recording on (point 5) a session's asciicast holds
// what was typed and the audit page plays it (asciinema-player, loaded on first use).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { request } from 'node:http';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { startCorral, launchBrowser, outputDir } from '../support/harness.mjs';
import { Api } from '../support/api.mjs';

/** Seconds without a keystroke or output before the server closes a terminal. */
const IDLE_SECS = 8;
const PASSWORD = 'correct horse battery staple';

let corral;
let admin;
let browser;
let cluster;

before(async () => {
  corral = await startCorral({ extraArgs: ['--terminal-idle-secs', String(IDLE_SECS)] });
  admin = await Api.signIn(corral.url, 'admin', corral.adminPassword);
  const created = await admin.post('/api/v1/clusters', { name: 'shop', template: 'web-stack', size: 3 });
  cluster = created.cluster;
  const job = await admin.waitForJob(created.job_id);
  assert.equal(job.state, 'succeeded', JSON.stringify(job));
  browser = await launchBrowser();
  await admin.signInBrowser(browser.context);
});

after(async () => {
  await browser?.close();
  if (corral && cluster) {
    const deleted = await admin.call('DELETE', `/api/v1/clusters/${cluster.id}?force=true`);
    await admin.waitForJob(deleted.job_id);
  }
  await corral?.stop();
});

/** The node user of the cluster's nodes, as a certificate for them names it. */
async function nodeUser(number) {
  const { publicKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const field = (bytes) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    return Buffer.concat([length, bytes]);
  };
  const blob = Buffer.concat([field(Buffer.from('ssh-ed25519')), field(raw)]);
  const signed = await admin.post(`/api/v1/clusters/${cluster.id}/nodes/${number}/ssh/certificate`, {
    public_key: `ssh-ed25519 ${blob.toString('base64')} e2e`,
  });
  return signed.user;
}

/** Asks for the terminal's WebSocket as `api`'s session would from a page: the status. */
function upgradeStatus(api, number) {
  const url = new URL(`${api.base}/api/v1/clusters/${cluster.id}/nodes/${number}/terminal?csrf=${api.csrf}`);
  return new Promise((resolve, reject) => {
    const asked = request(url, {
      headers: {
        cookie: api.cookie,
        origin: api.base,
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
      },
    });
    asked.on('upgrade', (response, socket) => { socket.destroy(); resolve(response.statusCode); });
    asked.on('response', (response) => { response.resume(); resolve(response.statusCode); });
    asked.on('error', reject);
    asked.end();
  });
}

/** What the terminal shows, spaces as spaces. */
async function screenText(page) {
  return (await page.locator('[data-testid="terminal"] .xterm-rows').innerText()).replaceAll('\u00a0', ' ');
}

/** Waits until the terminal shows text matching `pattern`; returns the match. */
async function waitForScreen(page, pattern, timeout = 20_000) {
  const deadline = Date.now() + timeout;
  let text = '';
  while (Date.now() < deadline) {
    text = await screenText(page);
    const match = text.match(pattern);
    if (match) return match;
    await page.waitForTimeout(100);
  }
  throw new Error(`the terminal never showed ${pattern}; it shows:\n${text}`);
}

test('a terminal on node 1000 runs a shell as the node user and follows the window size', async () => {
  const user = await nodeUser(1000);
  const page = await browser.context.newPage();
  const violations = [];
  const errors = [];
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) violations.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  const loaded = [];
  page.on('request', (asked) => loaded.push(new URL(asked.url()).pathname));

  await page.goto(`${corral.url}clusters/${cluster.id}`);
  await page.waitForSelector('body[data-hydrated]', { timeout: 30_000 });
  await page.waitForLoadState('networkidle');
  assert.ok(!loaded.some((path) => path.endsWith('/xterm.js')), 'xterm.js is not loaded before it is used');

  const row = page.locator('[data-testid="node-table"] tr', { has: page.locator('td.num', { hasText: /^1000$/ }) });
  const opened = Date.now();
  await row.getByTestId('terminal-open').click();
  await page.waitForSelector('[data-testid="terminal"][data-state="open"]', { timeout: 20_000 });
  console.log(`terminal click_to_open_ms=${Date.now() - opened}`);
  assert.ok(loaded.some((path) => path.endsWith('/xterm.js')), 'xterm.js was loaded on first use');

  await page.keyboard.type('hostname; id -un\n');
  await waitForScreen(page, new RegExp(`\\n${hostname()}\\s*\\n${user}\\s*\\n`));

  // The window shrinks: the terminal fits itself and the PTY follows.
  await page.keyboard.type('echo before=$(stty size)\n');
  const [, rowsBefore, columnsBefore] = await waitForScreen(page, /\nbefore=(\d+) (\d+)/);
  await page.screenshot({ path: join(outputDir, 'terminal-open.png') });
  await page.setViewportSize({ width: 760, height: 640 });
  await page.waitForTimeout(500);
  await page.keyboard.type('echo after=$(stty size)\n');
  const [, rowsAfter, columnsAfter] = await waitForScreen(page, /\nafter=(\d+) (\d+)/);
  assert.ok(Number(columnsAfter) < Number(columnsBefore), `${columnsBefore} -> ${columnsAfter} columns`);
  assert.ok(Number(rowsAfter) < Number(rowsBefore), `${rowsBefore} -> ${rowsAfter} rows`);
  console.log(`terminal stty_before="${rowsBefore} ${columnsBefore}" stty_after="${rowsAfter} ${columnsAfter}"`);

  // Left alone, the session is closed for being idle; Reconnect opens a new shell.
  await page.waitForSelector('[data-testid="terminal"][data-state="closed"]', { timeout: (IDLE_SECS + 10) * 1000 });
  assert.equal(await page.getAttribute('[data-testid="terminal"]', 'data-close-code'), '4000');
  assert.match(await page.getByTestId('terminal-status').innerText(), /idle/);
  await page.getByTestId('terminal-reconnect').click();
  await page.waitForSelector('[data-testid="terminal"][data-state="open"]', { timeout: 20_000 });
  await page.keyboard.type('echo again-$(id -un)\n');
  await waitForScreen(page, new RegExp(`again-${user}`));

  assert.deepEqual(violations, [], violations.join('\n'));
  assert.deepEqual(errors, [], errors.join('\n'));
  await page.close();

  // Each session is on the record, with who, the node, the bytes and why it ended.
  const audit = await admin.get('/api/v1/audit?action=node.terminal');
  const ended = audit.filter((entry) => entry.action === 'node.terminal.end');
  assert.ok(ended.some((entry) => entry.after.ended === 'idle'), JSON.stringify(ended));
  for (const entry of audit) assert.equal(entry.target, 'shop/1000');
});

test('a user of another tenant is refused the upgrade', async () => {
  await admin.post('/api/v1/tenants', { name: 'globex' });
  await admin.post('/api/v1/users', { username: 'gina', password: PASSWORD, role: 'tenant-admin', tenant: 'globex' });
  const gina = await Api.signIn(corral.url, 'gina', PASSWORD);
  // Another tenant's cluster does not exist for her, as everywhere in the API.
  assert.equal(await upgradeStatus(gina, 1000), 404);
  // And her session with another page's CSRF token is refused before anything is looked up.
  assert.equal(await upgradeStatus({ ...gina, csrf: admin.csrf }, 1000), 403);
  assert.equal(await upgradeStatus(admin, 1000), 101);
});

test('with the tenant setting off the button is gone and the endpoint answers 404', async () => {
  const tenant = (await admin.get('/api/v1/session')).user.tenant_id;
  await admin.call('PUT', `/api/v1/tenants/${tenant}/node-shell`, { node_shell: false });
  try {
    const page = await browser.context.newPage();
    await page.goto(`${corral.url}clusters/${cluster.id}`);
    await page.waitForSelector('body[data-hydrated]', { timeout: 30_000 });
    await page.getByTestId('node-table').waitFor();
    assert.equal(await page.getByTestId('terminal-open').count(), 0);
    assert.equal(await upgradeStatus(admin, 1000), 404);
    await page.close();
  } finally {
    await admin.call('PUT', `/api/v1/tenants/${tenant}/node-shell`, { node_shell: true });
  }
  const page = await browser.context.newPage();
  await page.goto(`${corral.url}clusters/${cluster.id}`);
  await page.getByTestId('node-table').waitFor();
  assert.equal(await page.getByTestId('terminal-open').count(), 3, 'back on: a button per node');
  await page.close();
});

test('a recorded session plays back on the audit page', async () => {
  const tenant = (await admin.get('/api/v1/session')).user.tenant_id;
  await admin.call('PUT', `/api/v1/tenants/${tenant}/terminal-recording`, { terminal_recording: true });
  const page = await browser.context.newPage();
  const violations = [];
  const errors = [];
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) violations.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`${corral.url}clusters/${cluster.id}`);
  await page.waitForSelector('body[data-hydrated]', { timeout: 30_000 });
  const row = page.locator('[data-testid="node-table"] tr', { has: page.locator('td.num', { hasText: /^1000$/ }) });
  await row.getByTestId('terminal-open').click();
  await page.waitForSelector('[data-testid="terminal"][data-state="open"]', { timeout: 20_000 });
  await page.keyboard.type('echo played-$((6*7))\n');
  await waitForScreen(page, /\nplayed-42/);
  await page.keyboard.type('exit\n');
  await page.waitForSelector('[data-testid="terminal"][data-state="closed"]', { timeout: 20_000 });

  // The cast holds the typed command and its output.
  const [entry] = await admin.get('/api/v1/audit?action=node.terminal.end');
  assert.equal(entry.after.recorded, true, JSON.stringify(entry));
  const cast = await (await fetch(`${admin.base}/api/v1/audit/${entry.id}/recording`, {
    headers: { cookie: admin.cookie },
  })).text();
  const [header, ...events] = cast.trim().split('\n').map((line) => JSON.parse(line));
  assert.equal(header.version, 2);
  // Typed keys come back one echo at a time: the output events together hold the line.
  const output = events.filter(([, code]) => code === 'o').map(([, , data]) => data).join('');
  assert.ok(output.includes('echo played-$((6*7))'), output);
  assert.ok(output.includes('played-42'), output);

  // The audit page plays it.
  await page.goto(`${corral.url}admin/audit?action=node.terminal.end`);
  await page.waitForSelector('body[data-hydrated]', { timeout: 30_000 });
  await page.getByTestId('recording-play').first().click();
  await page.waitForSelector('[data-testid="player"]', { timeout: 20_000 });
  const deadline = Date.now() + 20_000;
  let shown = '';
  while (Date.now() < deadline && !shown.includes('played-42')) {
    shown = (await page.getByTestId('player').innerText()).replaceAll('\u00a0', ' ');
    await page.waitForTimeout(200);
  }
  assert.ok(shown.includes('played-42'), `the player shows:\n${shown}`);
  await page.screenshot({ path: join(outputDir, 'terminal-recording-player.png') });
  assert.deepEqual(violations, [], violations.join('\n'));
  assert.deepEqual(errors, [], errors.join('\n'));
  await page.close();
  await admin.call('PUT', `/api/v1/tenants/${tenant}/terminal-recording`, { terminal_recording: false });
});
