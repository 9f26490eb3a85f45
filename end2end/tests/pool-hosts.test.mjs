// The admin page of `ssh-pool` hosts, end to end in chromium against a real `corral
// serve`: a tenant admin registers a host through the form (a bad port is answered next
// to its field, a good host shows the public key to authorize), a cluster on the pool
// checks the host out, and the page shows which cluster holds it and refuses to remove
// it, naming the cluster. After a registration the form is empty again, with or without
// JavaScript, and the page names the new host. The same page works without JavaScript.
// Screenshots: end2end/output/pool-hosts-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startCorral, launchBrowser, outputDir } from '../support/harness.mjs';
import { Api } from '../support/api.mjs';

const ADMIN = { username: 'pat', password: 'pool-admin-password-1' };
const HOST_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMjL5g2tLCXY/mxtwGZ1QuYVzyZ8Z7reMrGN53ioWB2o';

/** A catalog whose template builds on the `ssh-pool` provider. */
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
let api;

before(async () => {
  corral = await startCorral();
  const root = await Api.signIn(corral.url, 'admin', corral.adminPassword);
  await root.post('/api/v1/tenants', { name: 'pool-lab' });
  await root.post('/api/v1/users', { ...ADMIN, role: 'tenant-admin', tenant: 'pool-lab' });
  api = await Api.signIn(corral.url, ADMIN.username, ADMIN.password);
  await api.post('/api/v1/catalog/import', POOL_CATALOG);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await corral?.stop();
});

async function shot(page, name) {
  await page.screenshot({ path: join(outputDir, `pool-hosts-${name}.png`), fullPage: true });
}

async function hydrated(page) {
  await page.waitForSelector('body[data-hydrated]', { timeout: 30_000 });
}

async function signIn(page) {
  await page.goto(`${corral.url}admin/hosts`);
  await page.getByLabel('Username').fill(ADMIN.username);
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname === '/admin/hosts');
}

/** The registration form's fields, by label, with what each holds now. */
async function formValues(page) {
  const values = {};
  for (const label of ['Name', 'Address', 'SSH port', 'User', 'Host key']) {
    values[label] = await page.getByLabel(label).inputValue();
  }
  return values;
}

const EMPTY_FORM = { Name: '', Address: '', 'SSH port': '', User: '', 'Host key': '' };

async function fillHost(page, { name, port }) {
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('Address').fill('127.0.0.1');
  await page.getByLabel('SSH port').fill(port);
  await page.getByLabel('User').fill('corral');
  await page.getByLabel('Host key').fill(HOST_KEY);
  await page.getByRole('button', { name: 'Register host' }).click();
}

test('an admin registers a host, sees it checked out by a cluster, and cannot remove it then', async () => {
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await signIn(page);
  await hydrated(page);
  await page.getByTestId('no-hosts').waitFor();
  await shot(page, 'empty');

  await fillHost(page, { name: 'rack1-07', port: '70000' });
  const portError = page.locator('.field-error[data-field="port"]');
  await portError.waitFor();
  assert.match(await portError.innerText(), /70000 is not a port/);
  await shot(page, 'bad-port');
  assert.equal((await api.get('/api/v1/pool-hosts')).total, 0, 'nothing stored');

  // Port 9 refuses connections: the node's confirm keeps retrying, the host stays lent.
  await fillHost(page, { name: 'rack1-07', port: '9' });
  const banner = page.getByTestId('registered-host');
  await banner.waitFor();
  assert.match(await banner.innerText(), /Host rack1-07 registered/);
  assert.match(await banner.innerText(), /ssh-ed25519 AAAA\S+ corral-pool-rack1-07/);
  const row = page.locator('tr[data-host="rack1-07"]');
  await row.waitFor();
  assert.equal(await row.getByTestId('host-state').innerText(), 'free');
  // The form is ready for the next host: nothing of this one is left in it.
  await page.waitForFunction(() => document.querySelector('#host-name')?.value === '');
  assert.deepEqual(await formValues(page), EMPTY_FORM);
  assert.equal(await page.locator('.field-error').count(), 0);
  await shot(page, 'registered');

  const created = await api.post('/api/v1/clusters', { name: 'lent', template: 'pooled', size: 1 });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const hosts = await api.get('/api/v1/pool-hosts');
    if (hosts.items[0].state === 'checked-out') break;
    assert.ok(Date.now() < deadline, `the host was not checked out: ${JSON.stringify(hosts)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await page.reload();
  await hydrated(page);
  const state = row.getByTestId('host-state');
  assert.match(await state.innerText(), /checked out to node \d+ of lent/);
  assert.equal(await state.locator('a').getAttribute('href'), `/clusters/${created.cluster.id}`);
  await row.getByRole('button', { name: 'Remove' }).click();
  const refusal = page.locator('.form-error');
  await refusal.waitFor();
  assert.match(await refusal.innerText(), /checked out to node \d+ of cluster lent/);
  await shot(page, 'checked-out');
  assert.deepEqual(errors, []);
  await page.close();
});

test('without JavaScript the form posts and the page re-renders with the error or the host', async () => {
  const plain = await launchBrowser({ javaScriptEnabled: false });
  try {
    const page = await plain.context.newPage();
    await signIn(page);
    await fillHost(page, { name: 'plain-host', port: 'ssh' });
    await page.waitForURL((url) => url.pathname === '/admin/hosts');
    const portError = page.locator('.field-error[data-field="port"]');
    await portError.waitFor();
    assert.match(await portError.innerText(), /"ssh" is not a port/);
    await fillHost(page, { name: 'plain-host', port: '2222' });
    await page.waitForURL((url) => url.searchParams.has('registered'));
    await page.locator('tr[data-host="plain-host"]').waitFor();
    // The page names the host and its key, the form is empty, and the earlier
    // refusal is gone.
    assert.match(await page.getByTestId('registered-host').innerText(), /Host plain-host registered/);
    assert.match(await page.getByTestId('registered-host').innerText(), /corral-pool-plain-host/);
    assert.deepEqual(await formValues(page), EMPTY_FORM);
    assert.equal(await page.locator('.field-error').count(), 0);
    await shot(page, 'no-javascript');
  } finally {
    await plain.close();
  }
});
