// With JavaScript off, the portal still works: forms post, pages re-render on the
// server (sign in, filter, preview a cluster, see why a size cannot be built).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCorral, launchBrowser, outputDir } from '../support/harness.mjs';
import { Api } from '../support/api.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const catalogPath = join(here, '..', '..', 'testdata', 'lifecycle', 'catalog.json');

let corral;
let browser;

before(async () => {
  corral = await startCorral();
  const admin = await Api.signIn(corral.url, 'admin', corral.adminPassword);
  await admin.post('/api/v1/catalog/import', JSON.parse(readFileSync(catalogPath, 'utf8')));
  browser = await launchBrowser({ javaScriptEnabled: false });
});

after(async () => {
  await browser?.close();
  await corral?.stop();
});

test('sign in, preview and refusal work with plain form posts', async () => {
  const page = await browser.context.newPage();
  await page.goto(`${corral.url}clusters/new?template=lifecycle&size=3`);
  assert.match(page.url(), /\/login\?next=/);
  await page.getByLabel('Username').fill('admin');
  await page.getByLabel('Password').fill('wrong');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('wrong username or password').waitFor();
  await page.getByLabel('Username').fill('admin');
  await page.getByLabel('Password').fill(corral.adminPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/clusters\/new\?template=lifecycle&size=3/);
  await page.getByTestId('plan-preview').waitFor();
  await page.screenshot({ path: join(outputDir, 'no-js-preview.png'), fullPage: true });

  await page.getByLabel('Nodes').fill('1');
  await page.getByRole('button', { name: 'Preview' }).click();
  await page.getByTestId('unsatisfiable').waitFor();
  assert.match(await page.getByTestId('unsatisfiable').textContent(), /size|node/i);
});

test('unknown routes answer 404 with a page', async () => {
  const page = await browser.context.newPage();
  const response = await page.goto(`${corral.url}no/such/page`);
  assert.equal(response.status(), 404);
  await page.getByText('Page not found').waitFor();
  await page.screenshot({ path: join(outputDir, 'not-found.png') });
});
