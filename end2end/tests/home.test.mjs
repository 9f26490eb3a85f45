// The home page renders on the server and hydrates in the browser.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startCorral, launchBrowser, outputDir } from '../support/harness.mjs';

let corral;
let browser;

before(async () => {
  corral = await startCorral();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await corral?.stop();
});

test('home page hydrates: the counter counts clicks', async () => {
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (msg) => { if (msg.type() === 'error') errors.push(msg.text()); });
  page.on('response', (res) => { if (res.status() >= 400) errors.push(`${res.status()} ${res.url()}`); });

  const response = await page.goto(corral.url);
  assert.equal(response.status(), 200);
  const button = page.getByTestId('hydration-counter');
  assert.equal((await button.textContent()).trim(), 'Clicked 0 times');

  // The wasm bundle takes a moment; until it has hydrated, clicks do nothing.
  await page.waitForFunction(() => {
    const b = document.querySelector('[data-testid=hydration-counter]');
    b.click();
    return !b.textContent.includes('Clicked 0 times');
  }, null, { timeout: 20_000, polling: 250 });
  const before = Number((await button.textContent()).match(/\d+/)[0]);
  await button.click();
  await button.click();
  assert.equal((await button.textContent()).trim(), `Clicked ${before + 2} times`);

  // The server function behind the status card answered.
  await page.getByText('sqlite', { exact: true }).waitFor({ timeout: 10_000 });

  await page.screenshot({ path: join(outputDir, 'home.png'), fullPage: true });
  assert.deepEqual(errors, [], `browser errors: ${errors.join('\n')}`);
});

test('unknown routes answer 404 with a page', async () => {
  const page = await browser.context.newPage();
  const response = await page.goto(`${corral.url}no/such/page`);
  assert.equal(response.status(), 404);
  await page.getByText('Page not found').waitFor();
  await page.screenshot({ path: join(outputDir, 'not-found.png') });
});
