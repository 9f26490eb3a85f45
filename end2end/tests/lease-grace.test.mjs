// Leases that forgive (issue 44 point 5), end to end in chromium against a real
// `corral serve` and its own janitor: a template whose lease is 20 s with a 10 min
// grace; at the end of one cluster's lease the janitor stops it, and the portal shows
// it: the cluster list puts the clusters with a lease first, the soonest deadline first
// ("stopped; deleted in 9 min" before "ends in 59 min ..."), a cluster without a lease
// last; the cluster's page has the "Stopped: lease expired" banner with its deletion
// time. Screenshots go to end2end/output/lease-grace-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startCorral, launchBrowser, outputDir } from '../support/harness.mjs';
import { Api } from '../support/api.mjs';

let corral;
let browser;
let api;

before(async () => {
  corral = await startCorral();
  api = await Api.signIn(corral.url, 'admin', corral.adminPassword);
  // kv-cluster's clusters get a lease of 20 s, a step of an hour and a grace of 10 min.
  const template = await api.get('/api/v1/catalog/clustertemplates/kv-cluster');
  const body = template.body ?? template.definition ?? template;
  body.administration = { leaseduration: { initial: '20s', max: '0', step: '1h', grace: '10m' } };
  await api.call('PUT', '/api/v1/catalog/clustertemplates/kv-cluster', body);
  browser = await launchBrowser();
});

after(async () => {
  // Local nodes outlive a stopped server: delete the clusters first.
  if (api) {
    const clusters = await api.get('/api/v1/clusters?limit=500');
    for (const cluster of clusters.items) {
      if (cluster.state === 'deleted') continue;
      const deleted = await api.call('DELETE', `/api/v1/clusters/${cluster.id}`);
      const job = await api.waitForJob(deleted.job_id);
      if (job.state !== 'succeeded') console.error(`deleting ${cluster.name}: ${JSON.stringify(job)}`);
    }
  }
  await browser?.close();
  await corral?.stop();
});

async function shot(page, name) {
  await page.screenshot({ path: join(outputDir, `lease-grace-${name}.png`), fullPage: true });
}

async function create(name, template, size) {
  const created = await api.post('/api/v1/clusters', { name, template, size });
  const job = await api.waitForJob(created.job_id);
  if (job.state !== 'succeeded') throw new Error(`creating ${name}: ${JSON.stringify(job)}`);
  return created.cluster.id;
}

/** The cluster once its lease stopped it and the stop job ended; two minutes at most. */
async function leaseStopped(id) {
  for (let i = 0; i < 600; i += 1) {
    const cluster = await api.get(`/api/v1/clusters/${id}`);
    if (cluster.lease_deletes_at_ms && cluster.state === 'active') return cluster;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`cluster ${id} was not stopped by its lease`);
}

test('a lease-stopped cluster comes first in the list and its page says when it goes', async () => {
  const soon = await create('soon', 'kv-cluster', 1);
  const later = await create('later', 'kv-cluster', 1);
  // `later`'s lease is moved an hour on, before it ends; `forever` has no lease.
  await api.call('PUT', `/api/v1/clusters/${later}/lease`, { seconds: 3600 });
  await create('forever', 'web-stack', 3);
  const stopped = await leaseStopped(soon);
  assert.ok(stopped.lease_deletes_at_ms > Date.now() + 8 * 60_000, JSON.stringify(stopped));

  await api.signInBrowser(browser.context);
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(`${corral.url}clusters`);
  await page.waitForSelector('body[data-hydrated]', { timeout: 30_000 });
  const rows = page.getByTestId('cluster-table').locator('tbody tr');
  const names = await rows.evaluateAll((trs) => trs.map((tr) => tr.dataset.cluster));
  assert.deepEqual(names, ['soon', 'later', 'forever'], 'expiring first, the soonest deadline first');
  const first = page.locator('tr[data-cluster=soon]');
  assert.match(await first.getByTestId('lease-stopped').textContent(), /^stopped; deleted in (9|10) min$/);
  const second = page.locator('tr[data-cluster=later]');
  assert.match(await second.getByTestId('lease-left').textContent(), /^ends in (59 min \d\d s|1 h)$/);
  assert.equal(await page.locator('tr[data-cluster=forever] [data-testid=lease-stopped]').count(), 0);
  await shot(page, 'list');

  await first.getByRole('link', { name: 'soon' }).click();
  // The banner has its own test id: the list's cell, still on screen while the
  // client-side navigation loads the cluster, must not be mistaken for it.
  const banner = page.getByTestId('lease-stopped-banner');
  await banner.waitFor();
  const text = await banner.textContent();
  assert.match(text, /^Stopped: lease expired; deleted at \d{4}-\d\d-\d\d \d\d:\d\d UTC unless extended\./);
  assert.match(text, /its machines where they were stopped, then its services/);
  // Down on purpose: no health alarm beside the banner.
  assert.equal(await page.getByTestId('health-banner').count(), 0);
  await shot(page, 'cluster');
  assert.deepEqual(errors, []);
  await page.close();
});
