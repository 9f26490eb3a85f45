// `bench solver`: how long the template page's "try it" panel takes, in chromium, to
// show the solved layout and plan after its size changes: the solver and the planner
// run in the browser (wasm), and the plan is drawn. Prints one line:
//
//   solver nodes=100 tasks= browser_ms= p90_ms= baseline_nodes=10 baseline_ms=
//
// Each size is measured ROUNDS times, alternating with a neighbouring size so every
// change is a real one; browser_ms is the median time from the input event to the
// frame after the plan showing that many nodes is in the page. The baseline is a
// 10-node change on the same page in the same run. The template is the one
// `bench create` builds (three services on every node, no size limit).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchBrowser, startCorral } from '../support/harness.mjs';
import { Api } from '../support/api.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const CATALOG = JSON.parse(readFileSync(join(here, '../../bench/src/create/catalog.json'), 'utf8'));
const TEMPLATE = 'three-services';
const NODES = 100;
const BASELINE_NODES = 10;
const ROUNDS = 7;

/** Sets the size input and resolves with the milliseconds until the plan shows `nodes`. */
async function timeChange(page, nodes) {
  return page.evaluate(async (nodes) => {
    const input = document.querySelector('[data-testid="try-size"]');
    const shows = () => {
      const preview = document.querySelector('[data-testid="plan-preview"]');
      return preview !== null && preview.textContent.includes(`${nodes} node(s)`);
    };
    const started = performance.now();
    const shown = new Promise((resolve) => {
      const observer = new MutationObserver(() => {
        if (shows()) { observer.disconnect(); resolve(); }
      });
      observer.observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    input.value = String(nodes);
    input.dispatchEvent(new Event('input', { bubbles: true }));
    await shown;
    // The next frame: what the user sees includes layout and paint of the new plan.
    await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
    return performance.now() - started;
  }, nodes);
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const p90 = (values) => [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.9) - 1];

async function measure(page, nodes) {
  const times = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    // A neighbouring size first, so the measured change is never a no-op.
    await timeChange(page, nodes - 1);
    times.push(await timeChange(page, nodes));
  }
  return times;
}

const corral = await startCorral();
const browser = await launchBrowser();
try {
  const api = await Api.signIn(corral.url, 'admin', corral.adminPassword);
  await api.post('/api/v1/catalog/import', CATALOG);
  await api.signInBrowser(browser.context);
  const page = await browser.context.newPage();
  await page.goto(`${corral.url}admin/templates/${TEMPLATE}?size=${BASELINE_NODES}`);
  await page.waitForSelector('body[data-hydrated]', { timeout: 60_000 });
  await page.getByTestId('plan-preview').waitFor();
  const baseline = await measure(page, BASELINE_NODES);
  const times = await measure(page, NODES);
  const tasks = (await page.getByTestId('plan-preview').textContent()).match(/(\d+) task/)?.[1] ?? '?';
  console.log(
    `solver nodes=${NODES} tasks=${tasks} browser_ms=${median(times).toFixed(1)} ` +
      `p90_ms=${p90(times).toFixed(1)} baseline_nodes=${BASELINE_NODES} ` +
      `baseline_ms=${median(baseline).toFixed(1)}`,
  );
} finally {
  await browser.close();
  await corral.stop();
}
