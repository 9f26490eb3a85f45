// Deleting and moving accounts in the admin console, end to end in chromium against a
// real `corral serve`: deleting a user, moving a user to another tenant and deleting a
// tenant each open a confirmation first that says what happens to clusters, tokens and
// sessions, and only its button makes the change (Cancel changes nothing). A moved
// user's old API token stops working and their cluster stays with the tenant they left.
// The same steps work without JavaScript. Screenshots: end2end/output/accounts-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startCorral, launchBrowser, outputDir } from '../support/harness.mjs';
import { Api } from '../support/api.mjs';

const PASSWORD = 'accounts-test-password-1';

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
/** Each mover's API token, made before the move. */
const tokens = {};

before(async () => {
  corral = await startCorral();
  const root = await Api.signIn(corral.url, 'admin', corral.adminPassword);
  for (const name of ['north', 'south', 'empty', 'plain-empty']) {
    await root.post('/api/v1/tenants', { name });
  }
  await root.post('/api/v1/users', { username: 'nadia', password: PASSWORD, role: 'tenant-admin', tenant: 'north' });
  for (const username of ['nils', 'nora', 'dana', 'dirk']) {
    await root.post('/api/v1/users', { username, password: PASSWORD, role: 'user', tenant: 'north' });
  }
  const nadia = await Api.signIn(corral.url, 'nadia', PASSWORD);
  await nadia.post('/api/v1/catalog/import', POOL_CATALOG);
  // The movers each own a cluster and hold an API token.
  for (const username of ['nils', 'nora']) {
    const user = await Api.signIn(corral.url, username, PASSWORD);
    await user.post('/api/v1/clusters', { name: `${username}-cluster`, template: 'pooled', size: 1 });
    tokens[username] = (await user.post('/api/v1/tokens', { name: 'ci' })).secret;
  }
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await corral?.stop();
});

async function shot(page, name) {
  await page.screenshot({ path: join(outputDir, `accounts-${name}.png`), fullPage: true });
}

async function hydrated(page) {
  await page.waitForSelector('body[data-hydrated]', { timeout: 30_000 });
}

/** Opens `next`, signing in as the superadmin unless the browser already is. */
async function signIn(page, next, { javaScript = true } = {}) {
  await page.goto(`${corral.url}${next.slice(1)}`);
  if (new URL(page.url()).pathname === next) {
    if (javaScript) await hydrated(page);
    return;
  }
  await page.getByLabel('Username').fill('admin');
  await page.getByLabel('Password').fill(corral.adminPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname === next);
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

/** What `GET /api/v1/me` answers to a bearer token. */
async function meWithToken(token) {
  return fetch(`${corral.url}api/v1/me`, { headers: { authorization: `Bearer ${token}` } });
}

async function userNames() {
  const root = await Api.signIn(corral.url, 'admin', corral.adminPassword);
  return (await root.get('/api/v1/users?limit=500')).items.map((user) => user.username);
}

test('deleting a user and a tenant shows what goes, and only the confirmation deletes', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await signIn(page, '/admin/users');

  await page.goto(`${corral.url}admin/users/dana`);
  await hydrated(page);
  await page.getByTestId('delete-user-start').click();
  await page.waitForURL(/\/admin\/users\/dana\?confirm=delete-user$/);
  const panel = page.getByTestId('confirm-delete-user');
  await panel.waitFor();
  assert.match(await panel.innerText(), /Delete dana\?/);
  assert.match(await panel.innerText(), /They own no live clusters/);
  await shot(page, 'delete-user-confirm');
  // Cancel goes back and deletes nothing.
  await page.getByTestId('cancel').click();
  await page.waitForURL(/\/admin\/users\/dana$/);
  await page.getByTestId('delete-user-start').waitFor();
  assert.ok((await userNames()).includes('dana'));
  await page.getByTestId('delete-user-start').click();
  await page.getByTestId('delete-user').click();
  await page.getByTestId('user-deleted').waitFor();
  assert.ok(!(await userNames()).includes('dana'));

  // A tenant with a live cluster cannot go; an empty one goes once confirmed.
  await page.goto(`${corral.url}admin/tenants`);
  await hydrated(page);
  await page.locator('[data-tenant=north] [data-testid=delete-tenant]').click();
  const blocked = page.getByTestId('tenant-delete-blocked');
  await blocked.waitFor();
  assert.match(await blocked.innerText(), /nils-cluster/);
  assert.equal(await page.getByTestId('confirm-delete').count(), 0, 'no delete button');
  await shot(page, 'delete-tenant-blocked');
  await page.getByTestId('cancel').click();
  await page.locator('[data-tenant=empty] [data-testid=delete-tenant]').click();
  await page.getByTestId('confirm-delete-tenant').waitFor();
  assert.match(await page.getByTestId('confirm-delete-tenant').innerText(), /Delete tenant empty\?/);
  await shot(page, 'delete-tenant-confirm');
  await page.getByTestId('confirm-delete').click();
  await page.getByTestId('tenant-deleted').waitFor();
  assert.equal(await page.locator('[data-tenant=empty]').count(), 0);
  await shot(page, 'tenant-deleted');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a superadmin moves a user after seeing what happens to their clusters, tokens and sessions', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await signIn(page, '/admin/users');
  await page.goto(`${corral.url}admin/users/nils`);
  await hydrated(page);
  await shot(page, 'user');
  await page.getByLabel('Tenant', { exact: true }).last().selectOption('south');
  await page.getByRole('button', { name: 'Review the move' }).click();
  await page.waitForURL(/confirm=move-user&tenant=south/);
  const panel = page.getByTestId('confirm-move-user');
  await panel.waitFor();
  const said = await panel.innerText();
  assert.match(said, /Move nils from north to south\?/);
  assert.match(said, /Their sessions end/);
  assert.match(said, /Their API token is revoked/);
  assert.match(said, /stays in tenant north/);
  assert.match(said, /nils-cluster/);
  await shot(page, 'move-confirm');
  assert.equal((await meWithToken(tokens.nils)).status, 200, 'nothing changed yet');

  await page.getByTestId('move-user').click();
  await page.waitForURL(/\/admin\/users\/nils\?saved=tenant$/);
  await page.waitForFunction(() => document.querySelector('[data-testid=user-summary]')?.textContent.includes('in tenant south'));
  assert.match(await page.getByTestId('user-saved').innerText(), /Moved to tenant south/);
  await shot(page, 'moved');
  assert.equal((await meWithToken(tokens.nils)).status, 401, 'the old token is revoked');
  const nadia = await Api.signIn(corral.url, 'nadia', PASSWORD);
  const north = (await nadia.get('/api/v1/clusters')).items.map((cluster) => cluster.name);
  assert.ok(north.includes('nils-cluster'), `north keeps the cluster: ${north}`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('without JavaScript the confirmations are pages and their buttons plain posts', async () => {
  const plain = await launchBrowser({ javaScriptEnabled: false });
  try {
    const page = await plain.context.newPage();
    await signIn(page, '/admin/users', { javaScript: false });

    await page.goto(`${corral.url}admin/users/nora`);
    await page.getByLabel('Tenant', { exact: true }).last().selectOption('south');
    await page.getByRole('button', { name: 'Review the move' }).click();
    await page.waitForURL(/confirm=move-user&tenant=south/);
    assert.match(await page.getByTestId('confirm-move-user').innerText(), /nora-cluster/);
    await shot(page, 'no-javascript-move-confirm');
    await page.getByTestId('move-user').click();
    await page.waitForURL(/\/admin\/users\/nora\?saved=tenant$/);
    assert.match(await page.getByTestId('user-summary').innerText(), /in tenant south/);
    assert.equal((await meWithToken(tokens.nora)).status, 401);

    await page.goto(`${corral.url}admin/users/dirk`);
    await page.getByTestId('delete-user-start').click();
    await page.waitForURL(/confirm=delete-user/);
    await page.getByTestId('delete-user').click();
    await page.waitForURL(/\/admin\/users\?deleted=dirk$/);
    await page.getByTestId('user-deleted').waitFor();

    await page.goto(`${corral.url}admin/tenants`);
    await page.locator('[data-tenant=plain-empty] [data-testid=delete-tenant]').click();
    await page.getByTestId('confirm-delete').click();
    await page.waitForURL(/\/admin\/tenants\?deleted=plain-empty$/);
    assert.equal(await page.locator('[data-tenant=plain-empty]').count(), 0);
    await shot(page, 'no-javascript-tenant-deleted');
  } finally {
    await plain.close();
  }
});
