// Single sign-on with OpenID Connect, end to end: a real OpenID Provider
// (`oidc-provider`, support/oidc-provider.mjs) on loopback, a real `corral serve`
// configured with it (`[[sso]]` in its config file, the client secret sealed by
// `corral admin seal-sso-secret`), and chromium signing in through the provider's login
// page. Checked: a mapped user lands on /clusters in the rule's tenant and role; a
// changed group claim changes the role at the next sign-in; an unmapped user gets the
// refusal page; a replayed callback (state used), a code taken to another browser
// (another PKCE verifier) and a tampered nonce are refused with a clear page; and
// `corral login --sso` signs the CLI in through the browser and keeps a working token.
// Screenshots: end2end/output/sso-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCorral, launchBrowser, outputDir, corralBin, freePort } from '../support/harness.mjs';
import { startOidcProvider } from '../support/oidc-provider.mjs';
import { Api } from '../support/api.mjs';

const CLIENT_ID = 'corral-e2e';
const CLIENT_SECRET = 'e2e-client-secret-0123456789';

/** The provider's accounts: login name -> groups (changed by the tests). */
const accounts = {
  alice: { groups: ['dev'] },
  mallory: { groups: ['visitors'] },
  carol: { groups: ['dev'] },
  dave: { groups: ['ops'] },
};

let provider;
let corral;
let root;
let dataDir;
let northId;

before(async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  provider = await startOidcProvider({
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    redirectUris: [`${base}/auth/sso/testid/callback`],
    accounts,
  });
  dataDir = mkdtempSync(join(tmpdir(), 'corral-e2e-sso-'));
  const sealed = spawnSync(corralBin, ['admin', 'seal-sso-secret', 'testid', '--data-dir', dataDir], {
    input: `${CLIENT_SECRET}\n`,
    encoding: 'utf8',
  });
  assert.equal(sealed.status, 0, sealed.stderr);
  const secret = sealed.stdout.trim();
  assert.match(secret, /^sealed:v1:/);
  assert.ok(!secret.includes(CLIENT_SECRET));
  const config = join(dataDir, 'corral.toml');
  writeFileSync(config, `
[[sso]]
name = "testid"
display-name = "Test ID"
discovery-url = "${provider.issuer}"
client-id = "${CLIENT_ID}"
client-secret = "${secret}"
redirect-uri = "${base}/auth/sso/testid/callback"

[[sso.rules]]
value = "ops"
tenant = "north"
role = "tenant-admin"

[[sso.rules]]
value = "dev"
tenant = "north"
role = "user"
`);
  corral = await startCorral({ dataDir, port, extraArgs: ['--config', config] });
  root = await Api.signIn(corral.url, 'admin', corral.adminPassword);
  const tenant = await root.post('/api/v1/tenants', { name: 'north' });
  northId = tenant.id;
});

after(async () => {
  const logs = corral?.logs() ?? '';
  await corral?.stop();
  await provider?.stop();
  // Neither the client secret nor any token of the flows reaches the server's log.
  assert.ok(!logs.includes(CLIENT_SECRET), 'the client secret is not logged');
  assert.ok(!/eyJ[A-Za-z0-9_-]{20,}/.test(logs), 'no JWT is logged');
});

/** Signs in at the provider's development login page as `login` (then consents). */
async function providerLogin(page, login) {
  await page.locator('input[name="login"]').fill(login);
  const password = page.locator('input[name="password"]');
  if (await password.count()) await password.fill('any');
  await page.locator('button[type="submit"]').click();
  await page.waitForLoadState('domcontentloaded');
  // The consent page, the first time this account meets this client.
  const consent = page.locator('button:has-text("Continue")');
  if (await consent.count()) {
    await consent.click();
  }
}

/** A fresh browser that starts a sign-in from Corral's login page. */
async function signInThroughLoginPage(browser, login) {
  const page = await browser.context.newPage();
  await page.goto(`${corral.url}login`);
  await page.getByRole('link', { name: 'Sign in with Test ID' }).click();
  await page.waitForURL((url) => url.href.startsWith(provider.issuer));
  await providerLogin(page, login);
  return page;
}

async function whoAmI(page) {
  return page.evaluate(async () => (await fetch('/api/v1/me')).json());
}

test('a mapped user signs in through the provider, lands on /clusters, and a changed group changes the role', async () => {
  const browser = await launchBrowser();
  try {
    const page = await signInThroughLoginPage(browser, 'alice');
    await page.waitForURL(/\/clusters$/);
    await page.screenshot({ path: join(outputDir, 'sso-signed-in.png'), fullPage: true });
    const me = await whoAmI(page);
    assert.equal(me.username, 'alice');
    assert.equal(me.role, 'user');
    assert.equal(me.tenant_id, northId);
    // The user cannot sign in with a password (there is none, and local passwords are off).
    const refused = await fetch(`${corral.url}api/v1/session`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'alice', password: '!sso' }),
    });
    assert.equal(refused.status, 401);
  } finally {
    await browser.close();
  }
  accounts.alice.groups = ['ops', 'dev'];
  const again = await launchBrowser();
  try {
    const page = await signInThroughLoginPage(again, 'alice');
    await page.waitForURL(/\/clusters$/);
    const me = await whoAmI(page);
    assert.equal(me.role, 'tenant-admin', 'the first matching rule (ops) decides');
    assert.equal(me.tenant_id, northId);
  } finally {
    await again.close();
  }
  const users = await root.get(`/api/v1/users?tenant=${northId}`).catch(() => null);
  if (users) assert.equal(JSON.stringify(users).split('"alice"').length - 1, 1, 'one user alice');
});

test('an unmapped user sees the refusal page and gets no session', async () => {
  const browser = await launchBrowser();
  try {
    const page = await signInThroughLoginPage(browser, 'mallory');
    await page.waitForURL((url) => url.pathname === '/auth/sso/testid/callback');
    const text = await page.locator('#sso-message').textContent();
    assert.match(text, /no rule of this Corral server gives access/);
    assert.match(text, /groups: visitors/);
    await page.screenshot({ path: join(outputDir, 'sso-unmapped.png'), fullPage: true });
    const me = await page.evaluate(async () => (await fetch('/api/v1/me')).status);
    assert.equal(me, 401);
  } finally {
    await browser.close();
  }
});

test('a replayed callback, a code moved to another browser and a tampered nonce are refused', async () => {
  const first = await launchBrowser();
  const second = await launchBrowser();
  try {
    // Replay: the same callback address again, after it signed carol in.
    const page = await first.context.newPage();
    let callback = null;
    page.on('request', (request) => {
      if (request.url().includes('/auth/sso/testid/callback')) callback = request.url();
    });
    await page.goto(`${corral.url}login`);
    await page.getByRole('link', { name: 'Sign in with Test ID' }).click();
    await page.waitForURL((url) => url.href.startsWith(provider.issuer));
    await providerLogin(page, 'carol');
    await page.waitForURL(/\/clusters$/);
    assert.ok(callback, 'the callback was seen');
    const replay = await page.goto(callback);
    assert.equal(replay.status(), 400);
    assert.match(await page.locator('#sso-message').textContent(), /state is unknown: it was used already/);
    await page.screenshot({ path: join(outputDir, 'sso-replayed.png'), fullPage: true });

    // A code (and its state) taken to another browser: that browser never started it.
    const other = await second.context.newPage();
    const moved = await other.goto(callback);
    assert.equal(moved.status(), 400);

    // A fresh sign-in in the second browser, then the first browser's used code with
    // the second's own state: the issuer refuses it (used, and another PKCE verifier).
    const started = await second.context.request.get(`${corral.url}auth/sso/testid/start`, { maxRedirects: 0 });
    assert.equal(started.status(), 303);
    const freshState = new URL(started.headers().location).searchParams.get('state');
    assert.ok(freshState, 'the second browser started a sign-in');
    const stolen = new URL(callback);
    stolen.searchParams.set('state', freshState);
    const injected = await other.goto(stolen.href);
    assert.equal(injected.status(), 400);
    assert.match(await other.locator('#sso-message').textContent(), /refused the sign-in code .*invalid_grant/);
    await other.screenshot({ path: join(outputDir, 'sso-code-refused.png'), fullPage: true });

    // A nonce changed on the way to the provider: the ID token's nonce is not the
    // sign-in's, so Corral refuses the token after a successful exchange.
    const third = await second.context.newPage();
    const redirect = await second.context.request.get(`${corral.url}auth/sso/testid/start`, { maxRedirects: 0 });
    const tampered = new URL(redirect.headers().location);
    tampered.searchParams.set('nonce', 'attacker-chosen-nonce');
    await third.goto(tampered.href);
    await providerLogin(third, 'carol');
    await third.waitForURL((url) => url.pathname === '/auth/sso/testid/callback');
    assert.match(await third.locator('#sso-message').textContent(), /nonce is not this sign-in's/);
    assert.equal(await third.evaluate(async () => (await fetch('/api/v1/me')).status), 401);
  } finally {
    await first.close();
    await second.close();
  }
});

test('corral login --sso signs the CLI in through the browser and keeps a working token', async () => {
  const home = mkdtempSync(join(tmpdir(), 'corral-e2e-sso-home-'));
  const browser = await launchBrowser();
  try {
    const cli = spawn(corralBin, ['login', '--server', corral.url, '--sso', 'testid', '--no-browser'], {
      env: { ...process.env, HOME: home, CORRAL_CONFIG_DIR: join(home, 'corral') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    cli.stderr.on('data', (chunk) => { err += chunk; });
    const exited = new Promise((resolve) => cli.on('exit', resolve));
    const address = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no address printed: ${out} ${err}`)), 20_000);
      cli.stdout.on('data', (chunk) => {
        out += chunk;
        const match = out.match(/(http:\/\/\S+\/auth\/sso\/testid\/start\?\S+)/);
        if (match) { clearTimeout(timer); resolve(match[1]); }
      });
    });
    const page = await browser.context.newPage();
    await page.goto(address);
    await providerLogin(page, 'dave');
    await page.waitForURL((url) => url.hostname === '127.0.0.1' && url.pathname === '/callback');
    assert.match(await page.locator('#cli-message').textContent(), /Signed in/);
    assert.equal(await exited, 0, `${out}\n${err}`);
    assert.match(out, /Signed in to .* as dave/);
    // The saved token works for later commands (and is dave's, a tenant admin).
    const saved = readFileSync(join(home, 'corral', 'cli.toml'), 'utf8');
    const token = saved.match(/^token = "(corral_[^"]+)"/m)?.[1];
    assert.ok(token, 'a token is saved');
    const me = await (await fetch(`${corral.url}api/v1/me`, {
      headers: { authorization: `Bearer ${token}` },
    })).json();
    assert.equal(me.username, 'dave');
    assert.equal(me.role, 'tenant-admin');
    // The browser got no session of its own: the sign-in was the CLI's.
    assert.equal(await page.evaluate(async (url) => {
      try { return (await fetch(`${url}api/v1/me`, { credentials: 'include' })).status; } catch { return 0; }
    }, corral.url), 0);
  } finally {
    await browser.close();
    rmSync(home, { recursive: true, force: true });
  }
});
