// The admin console, end to end in chromium against a real `corral serve`: an admin
// builds a catalog from scratch through the forms (provider, hardware, image, two
// services with a dependency, a template with constraints), sees the try-it panel
// solve and reject sizes, sees a bad form and an in-use delete refused, imports a
// Coopr bundle with errors and reads the report; a superadmin changes a user's role,
// deletes a user and an unused tenant through their confirmations and is refused a
// used one, uploads a binary resource twice and writes a partial template; a tenant
// user cannot reach the console. Every page is screenshotted to
// end2end/output/admin-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startCorral, launchBrowser, outputDir } from '../support/harness.mjs';
import { Api } from '../support/api.mjs';

const USER = { username: 'tim', password: 'tenant-user-password-1' };
/** The admin of a tenant of its own: the default tenant starts with the demo catalog. */
const BUILDER = { username: 'bea', password: 'tenant-admin-password-1' };
/** A tenant admin whose tenant has a live cluster (so the tenant cannot be deleted). */
const BUSY = { username: 'bo', password: 'busy-tenant-password-1' };

let corral;
let browser;

before(async () => {
  corral = await startCorral();
  const admin = await Api.signIn(corral.url, 'admin', corral.adminPassword);
  await admin.post('/api/v1/users', { username: USER.username, password: USER.password, role: 'user' });
  await admin.post('/api/v1/tenants', { name: 'builders' });
  await admin.post('/api/v1/users', { ...BUILDER, role: 'tenant-admin', tenant: 'builders' });
  await admin.post('/api/v1/users', { username: 'dora', password: 'doomed-user-password-1', role: 'user' });
  await admin.post('/api/v1/tenants', { name: 'spare' });
  await admin.post('/api/v1/tenants', { name: 'busy', seed_catalog_from: 'default', local_nodes: true });
  await admin.post('/api/v1/users', { ...BUSY, role: 'tenant-admin', tenant: 'busy' });
  const busy = await Api.signIn(corral.url, BUSY.username, BUSY.password);
  // Made before the tests start, so deleting it at the end never races its creation.
  const kept = await busy.post('/api/v1/clusters', { name: 'keep', template: 'kv-cluster', size: 1 });
  // The seeded tenant got the default tenant's scripts along with its catalog.
  const keptJob = await busy.waitForJob(kept.job_id);
  if (keptJob.state !== 'succeeded') throw new Error(`creating keep: ${JSON.stringify(keptJob)}`);
  browser = await launchBrowser();
});


after(async () => {
  // Nodes outlive a stopped server: delete the busy tenant's cluster first.
  if (corral) {
    const busy = await Api.signIn(corral.url, BUSY.username, BUSY.password);
    const clusters = await busy.get('/api/v1/clusters?limit=500');
    for (const cluster of clusters.items) {
      const deleted = await busy.call('DELETE', `/api/v1/clusters/${cluster.id}`);
      const job = await busy.waitForJob(deleted.job_id);
      if (job.state !== 'succeeded') console.error(`deleting ${cluster.name}: ${JSON.stringify(job)}`);
    }
  }
  await browser?.close();
  await corral?.stop();
});

function watchErrors(page) {
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  // Refused forms answer 4xx by design, and the browser logs those; server errors
  // are caught per response below.
  const isRefusal = (text) => /status of 4\d\d/.test(text);
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !isRefusal(msg.text())) errors.push(msg.text());
  });
  page.on('response', (response) => {
    if (response.status() >= 500) errors.push(`${response.status()} ${response.url()}`);
  });
  return errors;
}

async function shot(page, name) {
  await page.screenshot({ path: join(outputDir, `admin-${name}.png`), fullPage: true });
}

/** Waits until the page's wasm has taken over (hydration done). */
async function hydrated(page) {
  await page.waitForSelector('body[data-hydrated]', { timeout: 30_000 });
}

async function signIn(page, username, password, next) {
  await page.goto(`${corral.url}${next.slice(1)}`);
  assert.match(page.url(), /\/login\?next=/);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname === next);
  await hydrated(page);
}

/** Opens the new-entity form of a kind from its list. */
async function openNew(page, path) {
  await page.goto(`${corral.url}admin/${path}`);
  await hydrated(page);
  await page.getByTestId('new-entity').click();
  await page.waitForURL(new RegExp(`/admin/${path}/new`));
  await hydrated(page);
}

/** Saves the open form and waits for the entity's page. */
async function save(page, path, name) {
  await page.getByTestId('save-entity').click();
  await page.waitForURL(new RegExp(`/admin/${path}/${name}\\?saved=1`));
  await page.getByText('Saved.').waitFor();
}

/** Creates an entity: name, description, then `fill` for the rest of the form. */
async function create(page, path, name, description, fill) {
  await openNew(page, path);
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByLabel('Description').fill(description);
  await fill?.();
  await save(page, path, name);
}

/** Ticks `name` in the picker owning `pointer`. */
async function pick(page, pointer, name) {
  await page.locator(`input[name="picks[]"][value="${pointer}=${name}"]`).check();
}

test('an admin builds a catalog from scratch and tries the template', async () => {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);

  await signIn(page, BUILDER.username, BUILDER.password, '/admin');
  await page.getByTestId('overview').waitFor();
  await shot(page, 'overview');

  await page.goto(`${corral.url}admin/providers`);
  await page.getByText('No providers yet').waitFor();
  await shot(page, 'providers-empty');

  await create(page, 'providers', 'local', 'nodes on this machine', async () => {
    await page.getByLabel('Provider type').selectOption('local');
  });
  await shot(page, 'provider');
  await create(page, 'hardware', 'small', 'one small node', async () => {
    await page.locator('#body').fill(JSON.stringify({ providermap: { local: { flavor: 'small' } } }));
  });
  await create(page, 'images', 'debian', 'Debian 12', async () => {
    await page.locator('#body').fill(JSON.stringify({ providermap: { local: { image: 'debian-12' } } }));
  });
  // Services: actions per stage in the table, dependencies from pickers.
  await create(page, 'services', 'base', 'the base system', async () => {
    await page.getByLabel('install script').fill('echo installing base');
    await page.getByLabel('configure automator').selectOption('shell');
    await page.getByLabel('configure script').fill('echo configuring base');
  });

  // Bad input is refused by the server, next to the field it is about.
  await openNew(page, 'services');
  await page.getByLabel('Name', { exact: true }).fill('web tier!');
  await page.locator('#body').fill('{ "links": [ }');
  await page.getByTestId('save-entity').click();
  const nameError = page.locator('.field-error[data-field=name]').first();
  await nameError.waitFor();
  assert.match(await nameError.textContent(), /letters, digits/);
  await shot(page, 'service-error');
  await page.getByLabel('Name', { exact: true }).fill('web');
  await page.getByTestId('save-entity').click();
  const bodyError = page.locator('.field-error[data-field=body]').first();
  await bodyError.waitFor();
  assert.match(await bodyError.textContent(), /not valid JSON/);
  await page.locator('#body').fill('{}');
  await page.getByLabel('Description').fill('the web tier; needs base');
  await pick(page, '/dependencies/runtime/requires', 'base');
  await pick(page, '/dependencies/install/requires', 'base');
  await page.getByLabel('start script').fill('echo serving');
  await save(page, 'services', 'web');
  assert.match(await page.getByTestId('entity-body').textContent(), /"requires": \[\s*"base"\s*\]/);
  await shot(page, 'service');

  // A template with compatibility, defaults, constraints and a lease.
  await create(page, 'templates', 'web-tier', 'base everywhere, one web node', async () => {
    for (const service of ['base', 'web']) {
      await pick(page, '/compatibility/services', service);
      await pick(page, '/defaults/services', service);
    }
    await pick(page, '/compatibility/hardwaretypes', 'small');
    await pick(page, '/compatibility/imagetypes', 'debian');
    await page.getByLabel('Default provider').selectOption('local');
    await page.getByLabel('Default hardware').selectOption('small');
    await page.getByLabel('Default image').selectOption('debian');
    await page.getByLabel('Fewest nodes').fill('2');
    await page.getByLabel('Most nodes').fill('4');
    await page.getByLabel('web min').fill('1');
    await page.getByLabel('web max').fill('1');
    await page.getByLabel('Initial').fill('7d');
    await page.getByLabel('Longest').fill('30d');
    await page.getByLabel('Extension step').fill('1d');
    await page.locator('#body').fill('{}');
  });
  await shot(page, 'template');
  await hydrated(page);

  // The try-it panel solves in the browser as the size changes.
  const size = page.getByTestId('try-size');
  await size.fill('3');
  await size.dispatchEvent('input');
  await page.getByTestId('plan-preview').waitFor();
  assert.match(await page.getByTestId('plan-preview').textContent(), /3 node\(s\)/);
  await shot(page, 'template-try-solved');
  await size.fill('1');
  await size.dispatchEvent('input');
  await page.getByTestId('unsatisfiable').waitFor();
  await shot(page, 'template-try-rejected');
  await size.fill('9');
  await size.dispatchEvent('input');
  await page.getByTestId('unsatisfiable').waitFor();
  assert.match(await page.getByTestId('unsatisfiable').textContent(), /size|nodes/i);

  // Edit, then the history shows the change as a diff.
  await page.getByTestId('edit-entity').click();
  await page.waitForURL(/\/admin\/templates\/web-tier\/edit/);
  await hydrated(page);
  await page.getByTestId('entity-form').waitFor();
  await shot(page, 'template-edit');
  await page.getByLabel('Description').fill('base everywhere, exactly one web node');
  await page.getByLabel("Can't coexist (one group per line: a, b)").fill('base, web');
  await save(page, 'templates', 'web-tier');
  await page.getByTestId('diff').waitFor();
  assert.match(await page.getByTestId('diff').textContent(), /exactly one web node/);
  await page.locator('#history').scrollIntoViewIfNeeded();
  await shot(page, 'template-history');

  // Deleting a service the template uses is refused with the list of users.
  await page.goto(`${corral.url}admin/services/base`);
  await hydrated(page);
  await page.getByTestId('delete-entity').click();
  await page.getByTestId('delete-refused').waitFor();
  assert.match(await page.getByTestId('delete-refused').textContent(), /web-tier/);
  await shot(page, 'delete-refused');

  for (const path of ['providers', 'hardware', 'images', 'services', 'templates']) {
    await page.goto(`${corral.url}admin/${path}`);
    await page.getByTestId('entity-table').waitFor();
    await shot(page, `list-${path}`);
  }
  await page.goto(`${corral.url}admin/services/new?from=web`);
  await page.getByTestId('entity-form').waitFor();
  await shot(page, 'service-clone');

  assert.deepEqual(errors, [], 'no console errors');
});

test('an import with errors shows the report and saves nothing', async () => {
  const page = await browser.context.newPage();
  await page.goto(`${corral.url}admin/catalog`);
  await hydrated(page);
  const bundle = {
    providers: [{ name: 'local', providertype: 'local' }],
    services: [{ name: 'a', dependencies: { runtime: { requires: ['ghost'] } } }],
    clustertemplates: [{ name: 't', defaults: { services: ['a', 'phantom'], provider: 'local' } }],
  };
  await page.getByTestId('bundle-file').setInputFiles({
    name: 'bundle.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(bundle)),
  });
  await page.waitForFunction(() => document.getElementById('bundle').value.includes('ghost'));
  await page.getByTestId('import-submit').click();
  await page.getByTestId('import-report').waitFor();
  const report = await page.locator('.field-error[data-field=bundle]').allTextContents();
  assert.ok(report.some((line) => line.includes('ghost')), report.join('\n'));
  assert.ok(report.some((line) => line.includes('phantom')), report.join('\n'));
  await shot(page, 'import-report');

  await page.goto(`${corral.url}admin/services`);
  await page.locator('[data-entity=web]').waitFor();

  for (const path of ['resources', 'tenants', 'users', 'audit']) {
    await page.goto(`${corral.url}admin/${path}`);
    await hydrated(page);
    await shot(page, path);
  }
  await page.goto(`${corral.url}admin/tokens`);
  await hydrated(page);
  await page.getByLabel('What it is for').fill('ci');
  await page.getByRole('button', { name: 'Create token' }).click();
  await page.getByTestId('new-token').waitFor();
  await shot(page, 'tokens');

  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${corral.url}admin/templates/web-tier?size=3`);
  await page.getByTestId('plan-preview').waitFor();
  await shot(page, 'template-phone');
  await page.setViewportSize({ width: 1280, height: 900 });
});

test('a superadmin manages users, tenants, resources, partials and template pickers', async () => {
  const own = await launchBrowser();
  try {
  const page = await own.context.newPage();
  const errors = watchErrors(page);
  await signIn(page, 'admin', corral.adminPassword, '/admin');

  // The tenant switcher sits in the sidebar of every admin page.
  await page.goto(`${corral.url}admin/users`);
  await hydrated(page);
  await page.locator('.admin-side [data-testid=tenant-switcher]').waitFor();

  // A user's role changes on their page.
  await page.getByRole('link', { name: USER.username, exact: true }).click();
  await page.waitForURL(new RegExp(`/admin/users/${USER.username}$`));
  await hydrated(page);
  await page.getByLabel('Role').selectOption('tenant-admin');
  await page.getByRole('button', { name: 'Save role' }).click();
  await page.getByTestId('user-saved').waitFor();
  await page.waitForFunction(() => document.querySelector('[data-testid=user-summary]')?.textContent.includes('tenant-admin in tenant'));
  await shot(page, 'user');
  await page.getByLabel('Role').selectOption('user');
  await page.getByRole('button', { name: 'Save role' }).click();
  await page.waitForFunction(() => document.querySelector('[data-testid=user-summary]')?.textContent.includes('user in tenant'));

  // A user is deleted, once the confirmation has said what goes with them.
  await page.goto(`${corral.url}admin/users/dora`);
  await hydrated(page);
  await page.getByTestId('delete-user-start').click();
  await page.getByTestId('confirm-delete-user').waitFor();
  await page.getByTestId('delete-user').click();
  await page.getByTestId('user-deleted').waitFor();
  assert.equal(await page.locator('[data-user=dora]').count(), 0);
  await shot(page, 'users');

  // Tenants: the busy one cannot go, its cluster named; the spare one goes once confirmed.
  await page.goto(`${corral.url}admin/tenants`);
  await hydrated(page);
  assert.match(await page.locator('[data-tenant=busy]').textContent(), /keep/);
  await page.locator('[data-tenant=busy] [data-testid=delete-tenant]').click();
  await page.getByTestId('tenant-delete-blocked').waitFor();
  assert.match(await page.getByTestId('tenant-delete-blocked').textContent(), /keep/);
  await shot(page, 'tenant-delete-refused');
  await page.getByTestId('cancel').click();
  await page.locator('[data-tenant=spare] [data-testid=delete-tenant]').click();
  await page.getByTestId('confirm-delete').click();
  await page.getByTestId('tenant-deleted').waitFor();
  assert.equal(await page.locator('[data-tenant=spare]').count(), 0);
  await shot(page, 'tenants');

  // A binary file, twice: version 1 then version 2, each byte kept.
  await page.goto(`${corral.url}admin/resources`);
  await hydrated(page);
  const bytes = Buffer.from(Array.from({ length: 2048 }, (_, i) => i % 256));
  for (const version of [1, 2]) {
    await page.locator('#file-kind').selectOption('files');
    await page.locator('#file-file').setInputFiles({
      name: 'tool.bin', mimeType: 'application/octet-stream', buffer: Buffer.concat([bytes, Buffer.from([version])]),
    });
    await page.getByTestId('upload-file').click();
    await page.getByTestId('uploaded').waitFor();
    assert.match(await page.getByTestId('uploaded').textContent(), new RegExp(`tool.bin version ${version}`));
    await hydrated(page);
  }
  const rows = page.locator('[data-testid=resource-table] tr', { hasText: 'tool.bin' });
  assert.equal(await rows.count(), 2);
  assert.match(await rows.first().textContent(), /2\.0 KiB/);
  await shot(page, 'resources');

  // A partial template, like the other kinds.
  await create(page, 'partials', 'monitoring', 'base on every node', async () => {
    await pick(page, '/defaults/services', 'base');
    await page.locator('#body').fill('{"immutable": true}');
  });
  assert.match(await page.getByTestId('entity-body').textContent(), /"immutable": true/);
  await shot(page, 'partial');
  await page.goto(`${corral.url}admin/partials`);
  await page.getByTestId('entity-table').waitFor();
  await shot(page, 'list-partials');

  // A template limits a service to hardware and image types ticked in the table.
  await page.goto(`${corral.url}admin/templates/web-stack/edit`);
  await hydrated(page);
  await page.getByLabel('app hardware small').check();
  await page.getByLabel('app images debian').check();
  await page.getByTestId('save-entity').click();
  await page.waitForURL(/\/admin\/templates\/web-stack\?saved=1/);
  const body = await page.getByTestId('entity-body').textContent();
  assert.match(body, /"hardwaretypes": \[\s*"small"\s*\]/);
  assert.match(body, /"imagetypes": \[\s*"debian"\s*\]/);
  await page.goto(`${corral.url}admin/templates/web-stack/edit`);
  await page.getByLabel('app hardware small').waitFor();
  assert.ok(await page.getByLabel('app hardware small').isChecked());
  await page.locator('.quantities-table').scrollIntoViewIfNeeded();
  await shot(page, 'template-constraints');

  assert.deepEqual(errors, [], 'no console errors');
  } finally {
    await own.close();
  }
});

test('a tenant user cannot reach the admin console', async () => {
  const other = await launchBrowser();
  try {
    const page = await other.context.newPage();
    await signIn(page, USER.username, USER.password, '/clusters');
    const response = await page.goto(`${corral.url}admin/services`);
    assert.equal(response.status(), 403);
    await page.getByTestId('forbidden').waitFor();
    assert.equal(await page.getByTestId('entity-table').count(), 0);
    assert.equal(await page.locator('.admin-nav').count(), 0, 'no admin sidebar for a tenant user');
    await shot(page, 'forbidden');
  } finally {
    await other.close();
  }
});
