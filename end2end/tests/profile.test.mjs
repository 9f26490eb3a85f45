// The profile page (issue 41), end to end in chromium against a real `corral serve`:
// the user menu's username opens it; a line that is not a public key is refused under
// the field (in place, the pasted text kept to fix); a real ed25519 key is listed with
// its fingerprint and the page says what happened on the user's cluster; Remove takes
// it off. A tenant admin also has the switch for the admins' keys. The same add works
// without JavaScript. Screenshots: end2end/output/profile-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCorral, launchBrowser, outputDir } from '../support/harness.mjs';
import { Api } from '../support/api.mjs';

const PASSWORD = 'profile-test-password-1';

/** A catalog on the `ssh-pool` provider: its clusters need no process on this machine. */
const POOL_CATALOG = {
  providers: [{ name: 'pool', description: 'registered hosts', providertype: 'ssh-pool', provisioner: {} }],
  hardwaretypes: [{ name: 'small', providermap: { pool: { flavor: 'any' } } }],
  imagetypes: [{ name: 'debian', providermap: { pool: { image: 'host' } } }],
  services: [{
    name: 'base', description: 'prepares every node', dependencies: {},
    provisioner: { actions: { install: { type: 'shell', fields: { run: 'true' } } } },
  }],
  clustertemplates: [{
    name: 'pooled', description: 'nodes on pool hosts',
    compatibility: { services: ['base'], hardwaretypes: ['small'], imagetypes: ['debian'] },
    defaults: { services: ['base'], provider: 'pool', hardwaretype: 'small', imagetype: 'debian', config: {} },
    constraints: { size: { min: 1 } },
  }],
};

let corral;
let browser;
let keyDir;

before(async () => {
  corral = await startCorral();
  const root = await Api.signIn(corral.url, 'admin', corral.adminPassword);
  await root.post('/api/v1/tenants', { name: 'north' });
  await root.post('/api/v1/users', { username: 'nadia', password: PASSWORD, role: 'tenant-admin', tenant: 'north' });
  for (const username of ['dana', 'dirk']) {
    await root.post('/api/v1/users', { username, password: PASSWORD, role: 'user', tenant: 'north' });
  }
  const nadia = await Api.signIn(corral.url, 'nadia', PASSWORD);
  await nadia.post('/api/v1/catalog/import', POOL_CATALOG);
  const dana = await Api.signIn(corral.url, 'dana', PASSWORD);
  await dana.post('/api/v1/clusters', { name: 'dana-web', template: 'pooled', size: 1 });
  browser = await launchBrowser();
  keyDir = mkdtempSync(join(tmpdir(), 'corral-keys-'));
});

after(async () => {
  await browser?.close();
  await corral?.stop();
  if (keyDir) rmSync(keyDir, { recursive: true, force: true });
});

/** A new ed25519 key pair made by ssh-keygen: the public line and its fingerprint. */
function sshKeygen(name, comment) {
  const path = join(keyDir, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', path]);
  const line = readFileSync(`${path}.pub`, 'utf8').trim();
  const fingerprint = execFileSync('ssh-keygen', ['-lf', `${path}.pub`], { encoding: 'utf8' }).split(' ')[1];
  return { line, fingerprint };
}

async function shot(page, name) {
  await page.screenshot({ path: join(outputDir, `profile-${name}.png`), fullPage: true });
}

async function hydrated(page) {
  await page.waitForSelector('body[data-hydrated]', { timeout: 30_000 });
}

async function signIn(page, username, { javaScript = true } = {}) {
  await page.goto(`${corral.url}login?next=/clusters`);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname === '/clusters');
  if (javaScript) await hydrated(page);
}

function watchErrors(page) {
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('response', (response) => {
    if (response.status() >= 500) errors.push(`${response.status()} ${response.url()}`);
  });
  return errors;
}

test('a user adds and removes an SSH key on their profile, in place', async () => {
  const context = (await launchBrowser()).context;
  const page = await context.newPage();
  const errors = watchErrors(page);
  await signIn(page, 'dana');

  // The username in the top bar opens the profile (a client-side navigation).
  await page.getByTestId('signed-in-as').click();
  await page.waitForURL((url) => url.pathname === '/profile');
  await page.getByRole('heading', { name: 'dana' }).waitFor();
  assert.match(await page.getByTestId('profile-summary').innerText(), /user\s+in tenant north/);
  await page.getByTestId('no-keys').waitFor();
  assert.equal(await page.getByTestId('admin-keys').count(), 0, 'no admin switch for a user');

  // A line that is not a public key: refused under the field, the text kept to fix.
  const field = page.getByLabel('Public key');
  await field.fill('hello');
  await page.getByTestId('add-key').click();
  const problem = page.locator('.field-error[data-field=public_key]');
  await problem.waitFor();
  assert.match(await problem.innerText(), /not an OpenSSH public key/);
  assert.equal(await field.inputValue(), 'hello');
  await page.getByTestId('no-keys').waitFor();
  await shot(page, 'refused');

  const { line, fingerprint } = sshKeygen('dana', 'dana@laptop');
  await field.fill(line);
  await page.getByTestId('add-key').click();
  const row = page.locator(`[data-testid=key-row][data-fingerprint="${fingerprint}"]`);
  await row.waitFor();
  assert.match(await row.innerText(), /ssh-ed25519/);
  assert.match(await row.innerText(), /dana@laptop/);
  const notice = page.getByTestId('key-notice');
  assert.match(await notice.innerText(), new RegExp(`Key ${fingerprint.replace('+', '\\+')} added`));
  // The user's cluster is named, with its sync-keys job or why none started.
  await page.locator('[data-testid=key-syncs] [data-cluster=dana-web]').waitFor();
  assert.equal(await page.getByLabel('Public key').inputValue(), '', 'the field is cleared');
  assert.equal(await page.locator('.field-error').count(), 0);
  await shot(page, 'key');

  await row.getByTestId('remove-key').click();
  await page.getByTestId('no-keys').waitFor();
  assert.match(await page.getByTestId('key-notice').innerText(), /removed/);
  const dana = await Api.signIn(corral.url, 'dana', PASSWORD);
  assert.deepEqual(await dana.get('/api/v1/me/keys'), []);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a tenant admin turns the admins-keys switch on', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await signIn(page, 'nadia');
  await page.goto(`${corral.url}profile`);
  await hydrated(page);
  const state = page.getByTestId('admin-keys-state');
  assert.equal(await state.getAttribute('data-on'), 'false');
  await page.locator('[data-testid=admin-keys-switch][data-choice=on]').click();
  await page.locator('[data-testid=admin-keys-state][data-on=true]').waitFor();
  assert.match(await page.getByTestId('key-notice').innerText(), /every cluster of the tenant/);
  await shot(page, 'admin');
  const nadia = await Api.signIn(corral.url, 'nadia', PASSWORD);
  const me = await nadia.get('/api/v1/me');
  assert.deepEqual(await nadia.get(`/api/v1/tenants/${me.tenant_id}/admin-keys`), { admin_keys_on_all_clusters: true });
  assert.deepEqual(errors, []);
});

test('without JavaScript a key is added and a bad one refused', async () => {
  const plain = await launchBrowser({ javaScriptEnabled: false });
  try {
    const page = await plain.context.newPage();
    await signIn(page, 'dirk', { javaScript: false });
    await page.goto(`${corral.url}profile`);
    await page.getByLabel('Public key').fill('ssh-ed25519 not-base64');
    await page.getByTestId('add-key').click();
    await page.locator('.field-error[data-field=public_key]').waitFor();
    await shot(page, 'plain-refused');
    const { line, fingerprint } = sshKeygen('dirk', 'dirk@desk');
    await page.getByLabel('Public key').fill(line);
    await page.getByTestId('add-key').click();
    await page.locator(`[data-testid=key-row][data-fingerprint="${fingerprint}"]`).waitFor();
    assert.equal(await page.locator('.field-error').count(), 0);
    await shot(page, 'plain-key');
  } finally {
    await plain.close();
  }
});
