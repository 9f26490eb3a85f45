// The hooks page (issue 43), end to end in chromium against a real `corral serve`
// that may reach loopback (`--hook-allow 127.0.0.0/8`): a tenant admin adds a hook
// through the form (hydrated) and sees its secret once, sends a test event, sees it
// delivered with the receiver's status and answer, and redelivers it. Screenshots go
// to end2end/output/hooks-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { startCorral, launchBrowser, outputDir } from '../support/harness.mjs';
import { Api } from '../support/api.mjs';

let corral;
let browser;
let receiver;
let received = 0;

before(async () => {
  receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received += 1;
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('thanks from the receiver');
    });
  });
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  corral = await startCorral({ extraArgs: ['--hook-allow', '127.0.0.0/8'] });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await corral?.stop();
  receiver?.close();
});

async function shot(page, name) {
  await page.screenshot({ path: join(outputDir, `hooks-${name}.png`), fullPage: true });
}

test('an admin adds a hook, sends a test event and redelivers it (hydrated)', async () => {
  const admin = await Api.signIn(corral.url, 'admin', corral.adminPassword);
  await admin.signInBrowser(browser.context);
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(`${corral.url}admin/hooks`);
  await page.waitForSelector('body[data-hydrated]', { timeout: 30_000 });
  await page.getByText('No hooks yet.').waitFor();
  const url = `http://127.0.0.1:${receiver.address().port}/corral`;
  await page.getByLabel('URL').fill(url);
  await page.locator('input[name="events[]"][value="job.failed"]').check();
  await page.locator('input[name="events[]"][value="test"]').check();
  await page.getByRole('button', { name: 'Add hook' }).click();
  await page.getByTestId('new-hook').waitFor();
  assert.match(await page.getByTestId('new-hook').innerText(), /not shown again/);
  await page.getByTestId('hook-hears').waitFor();
  await shot(page, 'added');

  await page.getByRole('button', { name: 'Send a test event' }).click();
  await page.getByTestId('hook-sent').waitFor();
  // The server's deliverer sends it; the page shows it once reloaded.
  for (let i = 0; i < 100 && received === 0; i += 1) await new Promise((r) => setTimeout(r, 100));
  assert.equal(received, 1);
  for (let i = 0; i < 50; i += 1) {
    await page.reload();
    if (await page.locator('tr[data-state="delivered"]').count()) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  await page.waitForSelector('body[data-hydrated]', { timeout: 30_000 });
  const row = page.locator('tr[data-state="delivered"]');
  assert.match(await row.innerText(), /200/);
  assert.match(await row.innerText(), /thanks from the receiver/);
  await shot(page, 'delivered');
  await row.getByRole('button', { name: 'Redeliver' }).click();
  for (let i = 0; i < 100 && received < 2; i += 1) await new Promise((r) => setTimeout(r, 100));
  assert.equal(received, 2, 'sent again');
  assert.deepEqual(errors, []);
});
