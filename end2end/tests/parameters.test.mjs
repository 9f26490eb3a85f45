// Template parameters in the New cluster form (issue 44, point 1), in chromium against
// a real `corral serve` with real local nodes: a template's integer with bounds, choice
// and boolean are a number box, a select and a checkbox; an out-of-range value gets an
// error at its field, with JavaScript (as the value changes) and without (after the
// form's Preview post); the accepted values create the cluster and reach its node.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startCorral, launchBrowser, outputDir } from '../support/harness.mjs';
import { Api } from '../support/api.mjs';

/** One template whose service writes its parameters out through macros. */
const CATALOG = {
  providers: [{ name: 'local', providertype: 'local', provisioner: {} }],
  hardwaretypes: [{ name: 'small', providermap: { local: { flavor: 'local-small' } } }],
  imagetypes: [{ name: 'debian', providermap: { local: { image: 'host' } } }],
  services: [{
    name: 'tuned',
    dependencies: {},
    provisioner: { actions: { install: { type: 'shell', fields: { run: 'echo %param.shards% %param.tier% %param.tls% > values' } } } },
  }],
  clustertemplates: [{
    name: 'tuned',
    description: 'one node tuned by its parameters',
    compatibility: { services: ['tuned'] },
    defaults: { services: ['tuned'], provider: 'local', hardwaretype: 'small', imagetype: 'debian', config: {} },
    parameters: {
      shards: { type: 'integer', minimum: 1, maximum: 5, default: 1, label: 'Shards', description: 'how many shards to run' },
      tier: { type: 'choice', choices: ['small', 'large'], default: 'small', label: 'Tier' },
      tls: { type: 'boolean', default: false, label: 'TLS' },
    },
  }],
};

let corral;
let admin;

before(async () => {
  corral = await startCorral();
  admin = await Api.signIn(corral.url, 'admin', corral.adminPassword);
  await admin.post('/api/v1/catalog/import', CATALOG);
});

after(async () => {
  if (corral) {
    const clusters = await admin.get('/api/v1/clusters?limit=500');
    const deletes = await Promise.all(
      clusters.items.map((cluster) => admin.call('DELETE', `/api/v1/clusters/${cluster.id}?force=true`)),
    );
    await Promise.all(deletes.map((deleted) => admin.waitForJob(deleted.job_id)));
  }
  await corral?.stop();
});

async function signIn(page, next) {
  await page.goto(`${corral.url}${next.slice(1)}`);
  await page.getByLabel('Username').fill('admin');
  await page.getByLabel('Password').fill(corral.adminPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname === next.split('?')[0]);
}

/** The error shown at a parameter's field, or null. */
async function fieldError(page, name) {
  const error = page.locator(`[data-parameter="${name}"] .field-error`);
  return (await error.count()) === 0 ? null : error.first().textContent();
}

test('with JavaScript: typed fields, an error at the field, and a cluster made', async () => {
  const browser = await launchBrowser();
  try {
    const page = await browser.context.newPage();
    await signIn(page, '/clusters/new?template=tuned');
    await page.waitForFunction(() => window.__corral_hydrated === true || document.querySelector('body[data-hydrated]'), null, { timeout: 30_000 });
    const shards = page.getByLabel('Shards');
    assert.equal(await shards.getAttribute('type'), 'number');
    assert.equal(await shards.getAttribute('min'), '1');
    assert.equal(await shards.getAttribute('max'), '5');
    assert.equal(await shards.inputValue(), '1');
    assert.equal(await page.getByLabel('Tier').evaluate((select) => select.tagName), 'SELECT');
    assert.equal(await page.getByLabel('TLS').getAttribute('type'), 'checkbox');

    await shards.fill('9');
    await shards.dispatchEvent('change');
    await page.locator('[data-parameter="shards"] .field-error').waitFor();
    assert.equal(await fieldError(page, 'shards'), '9 is above the maximum 5');
    await page.getByTestId('unsatisfiable').waitFor();
    await page.screenshot({ path: join(outputDir, 'parameters-out-of-range.png'), fullPage: true });

    await page.getByLabel('Name').fill('tuned-js');
    await page.getByLabel('Name').dispatchEvent('change');
    await shards.fill('3');
    await shards.dispatchEvent('change');
    await page.getByLabel('Tier').selectOption('large');
    await page.getByLabel('TLS').check();
    await page.getByTestId('plan-preview').waitFor();
    assert.equal(await fieldError(page, 'shards'), null);
    await page.screenshot({ path: join(outputDir, 'parameters-filled.png'), fullPage: true });
    await page.getByTestId('create-cluster').click();
    await page.waitForURL(/\/jobs\//);
    const jobId = page.url().split('/jobs/')[1];
    await admin.waitForJob(jobId);
    const clusters = await admin.get('/api/v1/clusters?limit=500');
    const made = clusters.items.find((cluster) => cluster.name === 'tuned-js');
    assert.equal(made.state, 'active');
    assert.deepEqual(made.config.parameters, { shards: 3, tier: 'large', tls: true });
  } finally {
    await browser.close();
  }
});

test('without JavaScript: the Preview post shows the error at the field', async () => {
  const browser = await launchBrowser({ javaScriptEnabled: false });
  try {
    const page = await browser.context.newPage();
    await signIn(page, '/clusters/new?template=tuned');
    await page.getByLabel('Shards').fill('0');
    await page.getByLabel('TLS').check();
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.waitForURL(/param\.shards=0/);
    assert.equal(await fieldError(page, 'shards'), '0 is below the minimum 1');
    assert.equal(await page.getByLabel('TLS').isChecked(), true);
    await page.getByTestId('unsatisfiable').waitFor();
    await page.screenshot({ path: join(outputDir, 'parameters-no-js.png'), fullPage: true });
  } finally {
    await browser.close();
  }
});
