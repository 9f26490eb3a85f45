// A copied `corral` binary is a whole install: started from an empty directory, away
// from the build tree, it serves pages that hydrate from the bundle built into it,
// precompressed and named by content, so a repeat visit downloads no script again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { corralBin, launchBrowser, startCorral } from '../support/harness.mjs';
import { recordTransfers } from '../support/transfers.mjs';

test('a copied binary started from an empty directory serves hydrated pages', async () => {
  const home = mkdtempSync(join(tmpdir(), 'corral-install-'));
  const bin = join(home, 'corral');
  copyFileSync(corralBin, bin);
  chmodSync(bin, 0o755);
  const cwd = join(home, 'empty');
  mkdirSync(cwd);
  const corral = await startCorral({ bin, cwd });
  const browser = await launchBrowser();
  try {
    const page = await browser.context.newPage();
    const transfers = await recordTransfers(browser.context, page);
    await page.goto(`${corral.url}login`);
    await page.waitForSelector('body[data-hydrated]', { timeout: 30_000 });

    const first = transfers.scripts();
    const wasm = first.find(({ url }) => url.endsWith('/corral_bg.wasm'));
    assert.ok(wasm, `no main module was loaded: ${JSON.stringify(first)}`);
    const scripts = new URL(wasm.url).pathname.match(/^\/pkg\/corral-[0-9a-f]{16}\//)?.[0];
    assert.ok(scripts, wasm.url);
    // The login route is lazy: its code comes in a chunk from the same directory.
    const chunks = first.filter(({ url }) => url.endsWith('.wasm') && url !== wasm.url);
    assert.ok(chunks.length > 0, `no chunk was loaded: ${JSON.stringify(first)}`);
    for (const file of [wasm, ...chunks]) {
      assert.ok(new URL(file.url).pathname.startsWith(scripts), file.url);
      assert.equal(file.status, 200);
      assert.equal(file.encoding, 'br', `${file.url} travels brotli-compressed`);
      assert.ok(!file.cached && file.bytes > 0);
    }
    const display = await page.evaluate(() => getComputedStyle(document.body).display);
    assert.equal(display, 'flex', 'the stylesheet applies');

    transfers.reset();
    await page.goto(`${corral.url}login`);
    await page.waitForSelector('body[data-hydrated]', { timeout: 30_000 });
    const fetched = transfers.scripts().filter(({ cached }) => !cached);
    assert.deepEqual(fetched.map(({ url }) => url), [], 'a repeat visit downloads no script again');

    assert.deepEqual(readdirSync(cwd), [], 'the server wrote nothing where it was started');
  } finally {
    await browser.close();
    await corral.stop();
    rmSync(home, { recursive: true, force: true });
  }
});
