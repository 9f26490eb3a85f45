// Approvals (issue 44, point 3), in chromium against a real `corral serve` with its
// demo catalog and real Docker nodes: a rule "size above 3" holds a user's 5-node
// docker create with no container made (asked of Docker's own API), the user's own
// approval is refused with a reason, a tenant admin approves it on /admin/approvals and
// the cluster is built (five containers); another request is denied there with a
// reason its requester then reads; an undecided one expires (the janitor's round).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { join } from 'node:path';
import { startCorral, launchBrowser, outputDir } from '../support/harness.mjs';
import { Api } from '../support/api.mjs';

const USER_PASSWORD = 'a long enough user password';

let corral;
let admin;
let dana;

/** A GET of the Docker engine's API over its socket, as JSON. */
function docker(path) {
  return new Promise((resolve, reject) => {
    const call = request({ socketPath: '/var/run/docker.sock', path, method: 'GET' }, (response) => {
      let body = '';
      response.on('data', (chunk) => { body += chunk; });
      response.on('end', () => (response.statusCode === 200
        ? resolve(JSON.parse(body))
        : reject(new Error(`docker ${path}: ${response.statusCode} ${body}`))));
    });
    call.on('error', reject);
    call.end();
  });
}

/** The containers (running or not) Docker has labelled for the cluster. */
async function containersOf(clusterId) {
  const filters = encodeURIComponent(JSON.stringify({ label: [`corral.cluster=${clusterId}`] }));
  return docker(`/containers/json?all=1&filters=${filters}`);
}

before(async () => {
  corral = await startCorral();
  admin = await Api.signIn(corral.url, 'admin', corral.adminPassword);
  await admin.post('/api/v1/users', { username: 'dana', password: USER_PASSWORD, role: 'user' });
  dana = await Api.signIn(corral.url, 'dana', USER_PASSWORD);
  await admin.post('/api/v1/approval-rules', { kind: 'size-above', value: '3' });
});

after(async () => {
  if (corral) {
    const clusters = await admin.get('/api/v1/clusters?limit=500');
    const deletes = await Promise.all(
      clusters.items
        .filter((cluster) => cluster.state !== 'awaiting-approval')
        .map((cluster) => admin.call('DELETE', `/api/v1/clusters/${cluster.id}?force=true`)),
    );
    await Promise.all(deletes.map((deleted) => admin.waitForJob(deleted.job_id)));
  }
  await corral?.stop();
});

/** Signs the page in as the admin and opens `path`. */
async function signIn(page, path) {
  await page.goto(`${corral.url}${path.slice(1)}`);
  await page.getByLabel('Username').fill('admin');
  await page.getByLabel('Password').fill(corral.adminPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname === path);
}

/** The HTTP status and JSON body of a call that may be refused. */
async function attempt(api, method, path, body) {
  try {
    return { status: 200, body: await api.call(method, path, body) };
  } catch (error) {
    const match = error.message.match(/: (\d{3}) (.*)$/s);
    return { status: Number(match[1]), body: JSON.parse(match[2]) };
  }
}

test('a held create is approved in the portal and built; another is denied with a reason', async () => {
  const held = await dana.post('/api/v1/clusters', { name: 'bigshop', template: 'web-stack', size: 5, provider: 'docker' });
  assert.equal(held.cluster.state, 'awaiting-approval');
  assert.equal(held.job_id, '');
  assert.equal(held.approval.rule, 'size above 3');
  const clusterId = held.cluster.id;
  // Nothing made while it waits: no job, and Docker has no container for it.
  assert.deepEqual((await dana.get(`/api/v1/clusters/${clusterId}`)).jobs, []);
  assert.deepEqual(await containersOf(clusterId), []);
  // (Its containers are found by this label once built: checked below.)

  const own = await attempt(dana, 'POST', `/api/v1/approvals/${held.approval.id}/approve`);
  assert.equal(own.status, 403);
  assert.equal(own.body.message, 'you asked for this yourself; another approver must decide it');

  const browser = await launchBrowser();
  try {
    const page = await browser.context.newPage();
    await signIn(page, '/admin/approvals');
    const card = page.locator(`[data-approval="${held.approval.id}"]`);
    await card.waitFor();
    assert.equal(await card.getAttribute('data-state'), 'pending');
    assert.match(await card.locator('[data-testid="approval-plan"]').innerText(), /^\d+ task\(s\): .*create/);
    assert.match(await card.innerText(), /dana/);
    assert.match(await card.innerText(), /size above 3/);
    await page.screenshot({ path: join(outputDir, 'approvals-pending.png'), fullPage: true });
    await card.getByRole('button', { name: 'Approve' }).click();
    await page.locator(`[data-approval="${held.approval.id}"][data-state="approved"]`).waitFor({ timeout: 30_000 });

    const approved = await dana.get(`/api/v1/approvals/${held.approval.id}`);
    assert.equal(approved.decided_by, 'admin');
    const job = await dana.waitForJob(approved.job_id);
    assert.equal(job.state, 'succeeded', JSON.stringify(job));
    assert.equal((await dana.get(`/api/v1/clusters/${clusterId}`)).state, 'active');
    assert.equal((await containersOf(clusterId)).length, 5, 'five docker nodes, each labelled for the cluster');

    // Denied with a reason; the requester reads it, and nothing was made.
    const second = await dana.post('/api/v1/clusters', { name: 'bigshop2', template: 'web-stack', size: 4, provider: 'docker' });
    await page.reload();
    const secondCard = page.locator(`[data-approval="${second.approval.id}"]`);
    await secondCard.waitFor();
    // Without a reason the browser does not post the form.
    await secondCard.getByRole('button', { name: 'Deny' }).click();
    assert.equal(await secondCard.getAttribute('data-state'), 'pending');
    await secondCard.getByLabel('Reason').fill('four nodes is more than a trial needs');
    await secondCard.getByRole('button', { name: 'Deny' }).click();
    await page.locator(`[data-approval="${second.approval.id}"][data-state="denied"]`).waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(outputDir, 'approvals-decided.png'), fullPage: true });
    const seen = await dana.get(`/api/v1/clusters/${second.cluster.id}`);
    assert.equal(seen.state, 'deleted');
    assert.equal(seen.approvals[0].state, 'denied');
    assert.equal(seen.approvals[0].reason, 'four nodes is more than a trial needs');
    assert.deepEqual(seen.jobs, []);
    assert.deepEqual(await containersOf(second.cluster.id), []);

    // The requester reads the decision on the cluster's page.
    const danas = await launchBrowser();
    try {
      await dana.signInBrowser(danas.context);
      const danaPage = await danas.context.newPage();
      await danaPage.goto(`${corral.url}clusters/${second.cluster.id}`);
      const banner = danaPage.getByTestId('approval-banner');
      assert.equal(await banner.getAttribute('data-state'), 'denied');
      assert.equal(await banner.innerText(), 'Denied by admin: four nodes is more than a trial needs');
      await danaPage.screenshot({ path: join(outputDir, 'approvals-denied-cluster.png'), fullPage: true });
    } finally {
      await danas.close();
    }
  } finally {
    await browser.close();
  }
});

test('an undecided request expires after its window', async () => {
  await admin.post('/api/v1/approval-rules', { kind: 'template', value: 'kv-cluster', window_secs: 1 });
  const held = await dana.post('/api/v1/clusters', { name: 'late-kv', template: 'kv-cluster', size: 1, provider: 'docker' });
  assert.equal(held.cluster.state, 'awaiting-approval');
  // The janitor runs every few seconds.
  let seen;
  for (let i = 0; i < 100; i += 1) {
    seen = await dana.get(`/api/v1/approvals/${held.approval.id}`);
    if (seen.state !== 'pending') break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.equal(seen.state, 'expired');
  assert.equal(seen.reason, "not decided within the rule's window");
  assert.equal((await dana.get(`/api/v1/clusters/${held.cluster.id}`)).state, 'deleted');
  assert.deepEqual(await containersOf(held.cluster.id), []);
});
