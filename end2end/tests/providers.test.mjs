// A provider's admin page, end to end in chromium against a real `corral serve`: the
// admin sets the provider's credentials through the form (a bad object is refused next
// to the field and stores nothing; a good one shows its field names and is never shown
// back), runs the Test button (the docker engine is checked), and the tenants page
// offers the provider types as checkboxes. Screenshots: end2end/output/providers-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startCorral, launchBrowser, outputDir } from '../support/harness.mjs';
import { Api } from '../support/api.mjs';

const SECRET = 'e2e-provider-secret-8a7b6c5d4e3f';

let corral;
let browser;
let api;

before(async () => {
  corral = await startCorral();
  api = await Api.signIn(corral.url, 'admin', corral.adminPassword);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await corral?.stop();
});

async function shot(page, name) {
  await page.screenshot({ path: join(outputDir, `providers-${name}.png`), fullPage: true });
}

async function signIn(page, path) {
  await page.goto(`${corral.url}${path}`);
  await page.getByLabel('Username').fill('admin');
  await page.getByLabel('Password').fill(corral.adminPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname === `/${path}`);
  await page.waitForSelector('body[data-hydrated]', { timeout: 30_000 });
}

test('an admin sets a provider\'s credentials, never sees them again, and tests the provider', async () => {
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await signIn(page, 'admin/providers/docker');
  const state = page.getByTestId('credentials-state');
  await state.waitFor();
  assert.match(await state.innerText(), /No credentials are set/);

  const field = page.getByLabel('New credentials (JSON)');
  await field.fill(`{"token": "${SECRET}"`);
  await page.getByRole('button', { name: 'Save credentials' }).click();
  const refusal = page.locator('.field-error[data-field="credentials"]');
  await refusal.waitFor();
  assert.match(await refusal.innerText(), /JSON object/);
  assert.doesNotMatch(await refusal.innerText(), new RegExp(SECRET));
  assert.equal((await api.get('/api/v1/providers/docker/credentials')).set, false, 'nothing stored');
  await shot(page, 'refused');

  await field.fill(`{"token": "${SECRET}", "region": "lab"}`);
  await page.getByRole('button', { name: 'Save credentials' }).click();
  await page.waitForFunction(() => /fields/.test(document.querySelector('[data-testid="credentials-state"]')?.innerText ?? ''));
  assert.match(await state.innerText(), /region\s+token/);
  assert.equal(await field.inputValue(), '', 'the form forgets what was typed');
  await page.reload();
  await page.waitForSelector('body[data-hydrated]', { timeout: 30_000 });
  assert.doesNotMatch(await page.content(), new RegExp(SECRET), 'the page never shows the secret');
  await shot(page, 'set');

  await page.getByRole('button', { name: 'Test provider' }).click();
  const report = page.getByTestId('test-report');
  await report.waitFor({ timeout: 60_000 });
  assert.match(await report.innerText(), /Provider docker \(docker\) passed/);
  assert.match(await page.locator('tr[data-phase="check"]').innerText(), /passed.*Docker engine/s);
  await shot(page, 'tested');
  assert.deepEqual(errors, []);
});

test('a superadmin sees and changes the provider types of each tenant', async () => {
  await api.post('/api/v1/tenants', { name: 'newcomers' });
  // The browser context is signed in since the first test.
  const page = await browser.context.newPage();
  await page.goto(`${corral.url}admin/tenants`);
  await page.waitForSelector('body[data-hydrated]', { timeout: 30_000 });
  const row = page.locator('tr[data-tenant="newcomers"]');
  await row.waitFor();
  const local = row.getByLabel("local (on this server's host)");
  assert.equal(await local.isChecked(), false, 'local is off for new tenants');
  assert.equal(await row.getByLabel('docker').isChecked(), true);
  await row.getByLabel('ec2').uncheck();
  await row.getByRole('button', { name: 'Save providers' }).click();
  const deadline = Date.now() + 10_000;
  for (;;) {
    const tenants = await api.get('/api/v1/tenants');
    const newcomers = tenants.items.find((tenant) => tenant.name === 'newcomers');
    if (!newcomers.provider_types.includes('ec2')) {
      assert.deepEqual(newcomers.provider_types, ['ssh-pool', 'docker', 'exec']);
      break;
    }
    assert.ok(Date.now() < deadline, 'the provider types were not saved');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await page.reload();
  await page.waitForSelector('body[data-hydrated]', { timeout: 30_000 });
  await shot(page, 'tenants');
});
