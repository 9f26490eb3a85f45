// The rollouts page (issue 40), end to end in chromium against a real `corral serve`:
// a tenant admin whose cluster is behind its template previews a rollout (the dry
// run's listing: owner, revisions, plan, pin) and starts it from the page, with
// JavaScript (hydrated, in place) and without it (plain GET and form post); the
// rollout upgrades the cluster and the list shows it. Screenshots go to
// end2end/output/rollouts-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startCorral, launchBrowser, outputDir } from '../support/harness.mjs';
import { Api } from '../support/api.mjs';

const ADMIN = { username: 'ria', password: 'rollout-admin-password-1' };

let corral;
let browser;
let api;

before(async () => {
  corral = await startCorral();
  const admin = await Api.signIn(corral.url, 'admin', corral.adminPassword);
  await admin.post('/api/v1/tenants', { name: 'rollers', seed_catalog_from: 'default', local_nodes: true });
  await admin.post('/api/v1/users', { ...ADMIN, role: 'tenant-admin', tenant: 'rollers' });
  api = await Api.signIn(corral.url, ADMIN.username, ADMIN.password);
  const created = await api.post('/api/v1/clusters', { name: 'rolled', template: 'kv-cluster', size: 1 });
  const job = await api.waitForJob(created.job_id);
  if (job.state !== 'succeeded') throw new Error(`creating rolled: ${JSON.stringify(job)}`);
  browser = await launchBrowser();
});

after(async () => {
  // Nodes outlive a stopped server: delete the cluster first.
  if (api) {
    const clusters = await api.get('/api/v1/clusters?limit=500');
    for (const cluster of clusters.items) {
      const deleted = await api.call('DELETE', `/api/v1/clusters/${cluster.id}`);
      const job = await api.waitForJob(deleted.job_id);
      if (job.state !== 'succeeded') console.error(`deleting ${cluster.name}: ${JSON.stringify(job)}`);
    }
  }
  await browser?.close();
  await corral?.stop();
});

/** A new revision of the template (its description), so its cluster is behind. */
async function moveTemplateOn(note) {
  const template = await api.get('/api/v1/catalog/clustertemplates/kv-cluster');
  const body = template.body ?? template.definition ?? template;
  body.description = `${body.description ?? 'kv'} (${note})`;
  await api.call('PUT', '/api/v1/catalog/clustertemplates/kv-cluster', body);
}

/** The rollout once it ended; two minutes at most. */
async function ended(id) {
  for (let i = 0; i < 600; i += 1) {
    const rollout = await api.get(`/api/v1/catalog/rollouts/${id}`);
    if (!['running', 'stopping'].includes(rollout.state)) return rollout;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`rollout ${id} did not end`);
}

async function shot(page, name) {
  await page.screenshot({ path: join(outputDir, `rollouts-${name}.png`), fullPage: true });
}

test('a tenant admin previews and starts a rollout in place (hydrated)', async () => {
  await moveTemplateOn('first change');
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await api.signInBrowser(browser.context);
  await page.goto(`${corral.url}admin/rollouts`);
  await page.waitForSelector('body[data-hydrated]', { timeout: 30_000 });
  await page.getByText('No rollouts yet.').waitFor();
  await page.getByLabel('Template').selectOption('kv-cluster');
  await page.getByLabel('At most at once').fill('2');
  await page.getByRole('button', { name: 'Preview' }).click();
  const row = page.locator('[data-candidate="rolled"]');
  await row.waitFor();
  assert.match(await row.innerText(), /ria/);
  assert.match(await row.innerText(), /r\d+ → r\d+/);
  assert.match(await page.getByTestId('rollout-what').innerText(), /upgrades 1 cluster\(s\), at most 2 at a time/);
  await shot(page, 'preview');
  assert.deepEqual(await api.get('/api/v1/catalog/rollouts'), [], 'a preview writes nothing');

  await page.getByRole('button', { name: 'Start rollout' }).click();
  await page.getByTestId('rollout-started').waitFor();
  const [rollout] = await api.get('/api/v1/catalog/rollouts');
  await page.locator(`[data-rollout="${rollout.id}"]`).waitFor();
  await shot(page, 'started');
  const done = await ended(rollout.id);
  assert.equal(done.state, 'succeeded', JSON.stringify(done));
  await page.reload();
  await page.locator(`[data-rollout="${rollout.id}"][data-state="succeeded"]`).waitFor();
  await shot(page, 'succeeded');
  assert.deepEqual(errors, []);
  await page.close();
});

test('without JavaScript the preview is a plain GET and a refusal is shown by the form', async () => {
  const plain = await launchBrowser({ javaScriptEnabled: false });
  try {
    await api.signInBrowser(plain.context);
    const page = await plain.context.newPage();
    // Nothing is behind after the first test's rollout: the preview says so.
    await page.goto(`${corral.url}admin/rollouts?template=kv-cluster&max_parallel=1`);
    await page.getByTestId('rollout-nothing').waitFor();
    await page.goto(`${corral.url}admin/rollouts?template=no-such`);
    assert.match(await page.getByTestId('rollout-refusal').innerText(), /no-such/);
    await shot(page, 'refused');

    await moveTemplateOn('second change');
    await page.goto(`${corral.url}admin/rollouts`);
    await page.getByLabel('Template').selectOption('kv-cluster');
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.locator('[data-candidate="rolled"]').waitFor();
    await page.getByRole('button', { name: 'Start rollout' }).click();
    await page.getByTestId('rollout-started').waitFor();
    const rollouts = await api.get('/api/v1/catalog/rollouts');
    assert.equal(rollouts.length, 2);
    await ended(rollouts[0].id);
  } finally {
    await plain.close();
  }
});
