// Every route's page hydrates, whatever the split of the browser bundle: each route
// shape is loaded cold (its chunks preloaded by the server) in a fresh page, which must
// become live without a page error, and again after a client-side navigation from the
// cluster list (its chunks fetched on demand). A page whose server and browser renders
// disagree panics in hydration and never sets `data-hydrated`; a chunk the server does
// not have fails its fetch. Both fail here, naming the route, as does anything the
// pages' content security policy blocks.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCorral, launchBrowser } from '../support/harness.mjs';
import { Api } from '../support/api.mjs';

let corral;
let browser;
let paths;

before(async () => {
  corral = await startCorral();
  const admin = await Api.signIn(corral.url, 'admin', corral.adminPassword);
  await admin.post('/api/v1/users', { username: 'hana', password: 'hydration-password-1', role: 'user' });
  const created = await admin.post('/api/v1/clusters', { name: 'hydrate', template: 'kv-cluster', size: 1 });
  const job = await admin.waitForJob(created.job_id);
  assert.equal(job.state, 'succeeded', JSON.stringify(job));
  const cluster = created.cluster.id;
  paths = [
    '/clusters',
    '/clusters/new',
    `/clusters/${cluster}`,
    `/clusters/${cluster}/jobs/${created.job_id}`,
    '/admin',
    '/admin/templates',
    '/admin/catalog',
    '/admin/users',
    '/admin/users/hana',
    '/admin/templates/new',
    '/admin/templates/kv-cluster',
    '/admin/templates/kv-cluster/edit',
  ];
  browser = await launchBrowser();
  await admin.signInBrowser(browser.context);
});

after(async () => {
  if (corral) {
    const admin = await Api.signIn(corral.url, 'admin', corral.adminPassword);
    for (const cluster of (await admin.get('/api/v1/clusters?limit=500')).items) {
      const deleted = await admin.call('DELETE', `/api/v1/clusters/${cluster.id}`);
      await admin.waitForJob(deleted.job_id);
    }
  }
  await browser?.close();
  await corral?.stop();
});

/** A fresh page that records page errors, panics, content security policy violations
 * and failed script fetches. */
async function watchedPage() {
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && message.text().includes('panicked')) errors.push(message.text());
    // The pages' policy allows their own scripts by nonce and no inline styles: anything
    // of theirs it blocks is reported here (and would not have run).
    if (message.text().includes('Content Security Policy')) errors.push(message.text());
  });
  page.on('response', (response) => {
    if (/\.(wasm|js)$/.test(new URL(response.url()).pathname) && response.status() !== 200) {
      errors.push(`${response.status()} ${response.url()}`);
    }
  });
  return { page, errors };
}

test('every route hydrates on a first visit', async () => {
  for (const path of paths) {
    const { page, errors } = await watchedPage();
    await page.goto(`${corral.url}${path.slice(1)}`);
    await page
      .waitForSelector('body[data-hydrated]', { timeout: 30_000 })
      .catch(() => errors.push('never hydrated'));
    assert.deepEqual(errors, [], `${path}: ${errors.join('\n')}`);
    assert.equal(new URL(page.url()).pathname, path);
    await page.close();
  }
});

test('every route renders after a client-side navigation', async () => {
  for (const path of paths.slice(1)) {
    const { page, errors } = await watchedPage();
    await page.goto(`${corral.url}clusters`);
    await page.waitForSelector('body[data-hydrated]', { timeout: 30_000 });
    // A link the router follows in the page, as a click on any internal link does.
    await page.evaluate((href) => {
      const link = document.createElement('a');
      link.href = href;
      link.textContent = 'go';
      document.body.append(link);
      link.click();
    }, path);
    await page.waitForURL((url) => url.pathname === path);
    await page.waitForSelector('main h1', { timeout: 30_000 });
    await page.waitForLoadState('networkidle');
    assert.deepEqual(errors, [], `${path}: ${errors.join('\n')}`);
    await page.close();
  }
});

test('a tab asking for a chunk the server no longer has reloads once, into the running build', async () => {
  const page = await browser.context.newPage();
  await page.goto(`${corral.url}clusters`);
  await page.waitForSelector('body[data-hydrated]', { timeout: 30_000 });
  // As after an upgrade: the first chunk this tab's build asks for answers 404 (the
  // running build has chunks of that name again after the reload).
  let refused = 0;
  await page.route(/\/pkg\/[^/]+\/(chunk|split)_[^/]*\.wasm$/, async (route) => {
    if (refused > 0) return route.continue();
    refused += 1;
    return route.fulfill({ status: 404, body: 'gone' });
  });
  const reloaded = page.waitForEvent('load', { timeout: 30_000 });
  await page.evaluate(() => {
    const link = document.createElement('a');
    link.href = '/clusters/new';
    link.textContent = 'go';
    document.body.append(link);
    link.click();
  });
  await reloaded;
  await page.waitForSelector('body[data-hydrated]', { timeout: 30_000 });
  assert.ok(refused >= 1, 'no chunk was asked for');
  assert.equal(new URL(page.url()).pathname, '/clusters/new');
  const stamp = await page.evaluate(() => sessionStorage.getItem('corral-chunk-reload'));
  assert.ok(Number(stamp) > 0, `no reload was recorded: ${stamp}`);
  await page.close();
});
