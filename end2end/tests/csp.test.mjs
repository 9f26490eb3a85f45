// The pages' content security policy allows inline scripts only by a nonce new in each
// response. Pages still hydrate under it with nothing blocked, and a script injected into
// a page (as a stored or reflected injection would put it there) does not run: neither a
// plain inline script, nor one carrying the nonce of an earlier response, nor an inline
// event handler. The injection is made by rewriting the page on its way to the browser,
// keeping the server's headers; the same injection with the policy taken off runs, which
// shows it would have run if it were not blocked.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCorral, launchBrowser } from '../support/harness.mjs';
import { Api } from '../support/api.mjs';

let corral;
let browser;

before(async () => {
  corral = await startCorral();
  const admin = await Api.signIn(corral.url, 'admin', corral.adminPassword);
  browser = await launchBrowser();
  await admin.signInBrowser(browser.context);
});

after(async () => {
  await browser?.close();
  await corral?.stop();
});

/** The nonce in a page response's policy (asserting it allows no other inline script). */
function scriptNonce(policy) {
  const scriptSrc = policy.split(';').map((part) => part.trim()).find((part) => part.startsWith('script-src '));
  assert.ok(scriptSrc, policy);
  assert.ok(!scriptSrc.includes("'unsafe-inline'"), policy);
  const nonce = scriptSrc.match(/'nonce-([^']+)'/);
  assert.ok(nonce, policy);
  return nonce[1];
}

/** A fresh page recording the policy violations the browser reports, and page errors. */
async function watchedPage() {
  const page = await browser.context.newPage();
  const violations = [];
  const errors = [];
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) violations.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return { page, violations, errors };
}

/** What the injected code left behind on the page. */
function injectedEffects(page) {
  return page.evaluate(() => ({
    inline: window.corralInjectedInline ?? null,
    oldNonce: window.corralInjectedOldNonce ?? null,
    handler: window.corralInjectedHandler ?? null,
  }));
}

test('pages hydrate under the nonce policy with nothing blocked', async () => {
  const nonces = new Set();
  for (const path of ['/clusters', '/clusters/new', '/admin/templates/kv-cluster/edit', '/no-such-page']) {
    const { page, violations, errors } = await watchedPage();
    const response = await page.goto(`${corral.url}${path.slice(1)}`);
    nonces.add(scriptNonce(response.headers()['content-security-policy']));
    if (path !== '/no-such-page') {
      await page.waitForSelector('body[data-hydrated]', { timeout: 30_000 });
    }
    await page.waitForLoadState('networkidle');
    assert.deepEqual(violations, [], `${path}: ${violations.join('\n')}`);
    assert.deepEqual(errors, [], `${path}: ${errors.join('\n')}`);
    await page.close();
  }
  assert.equal(nonces.size, 4, 'every response has its own nonce');
});

test('a script injected into a page does not run', async () => {
  // An attacker can read a page's nonce, but only of a response already sent.
  const earlier = await browser.context.request.get(`${corral.url}clusters`);
  const oldNonce = scriptNonce(earlier.headers()['content-security-policy']);

  /** Loads /clusters with the injection in it, the policy kept or taken off. */
  async function loadInjected({ keepPolicy }) {
    const { page, violations, errors } = await watchedPage();
    let policy = null;
    await page.route((url) => url.pathname === '/clusters', async (route) => {
      const response = await route.fetch();
      const headers = { ...response.headers() };
      policy = headers['content-security-policy'];
      if (!keepPolicy) delete headers['content-security-policy'];
      delete headers['content-length']; // the body grows
      const html = (await response.text())
        .replace('<head>', `<head>
          <script>window.corralInjectedInline = true</script>
          <script nonce="${oldNonce}">window.corralInjectedOldNonce = true</script>`)
        .replace('<body>', '<body onload="window.corralInjectedHandler = true">');
      await route.fulfill({ status: response.status(), headers, body: html });
    });
    await page.goto(`${corral.url}clusters`);
    await page.waitForSelector('body[data-hydrated]', { timeout: 30_000 });
    await page.waitForLoadState('load');
    return { page, violations, errors, policy };
  }

  const open = await loadInjected({ keepPolicy: false });
  assert.deepEqual(
    await injectedEffects(open.page),
    { inline: true, oldNonce: true, handler: true },
    'without the policy the injection runs: the test injects what it means to',
  );
  await open.page.close();

  const guarded = await loadInjected({ keepPolicy: true });
  assert.notEqual(scriptNonce(guarded.policy), oldNonce, 'a new response, a new nonce');
  assert.deepEqual(
    await injectedEffects(guarded.page),
    { inline: null, oldNonce: null, handler: null },
    `the injection ran under ${guarded.policy}`,
  );
  // The page's own scripts ran (it hydrated); the browser reports the three it blocked.
  assert.equal(guarded.violations.length, 3, guarded.violations.join('\n'));
  for (const violation of guarded.violations) {
    // Chromium's words for it: "Executing inline script violates ... has been blocked"
    // (older releases: "Refused to execute inline script").
    assert.match(violation, /(Executing|Refused to execute) inline (script|event handler)/, violation);
    assert.match(violation, /script-src/, violation);
  }
  assert.deepEqual(guarded.errors, []);
  await guarded.page.close();
});
