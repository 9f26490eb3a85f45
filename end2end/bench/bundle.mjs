// `bench bundle`: what a user's browser downloads, measured in chromium against a real
// `corral serve` (CORRAL_BIN). Prints one line:
//
//   bundle wasm_raw_kb= wasm_br_kb= main_wasm_br_kb= chunks= first_load_portal_kb=
//          first_load_admin_kb= repeat_visit_kb= baseline_portal_kb=
//
// wasm_raw_kb, wasm_br_kb: the whole application's wasm (the main module and every
// chunk), as stored and as brotli sends it; main_wasm_br_kb: the main module alone,
// which every page loads; chunks: how many chunks the lazy routes were split into.
//
// first_load_*: bytes on the wire (headers and encoded bodies) for every .wasm and .js
// of a cold first visit (a new browser profile, already signed in) to /clusters and to
// an admin template page. repeat_visit_kb: the same for a second visit to /clusters in
// the same profile. baseline_portal_kb: the cold portal visit from a browser that
// accepts no compression, which is what every visitor downloaded before the bundle was
// precompressed: the baseline of the same run.
import { get } from 'node:http';
import { launchBrowser, startCorral } from '../support/harness.mjs';
import { Api } from '../support/api.mjs';
import { recordTransfers } from '../support/transfers.mjs';

const TEMPLATE_PAGE = '/admin/templates/web-stack';

/** A cold visit to `path` signed in as `api`'s user; returns the scripts' transfers. */
async function coldVisit(corral, api, paths, { compression = true } = {}) {
  const browser = await launchBrowser();
  try {
    await api.signInBrowser(browser.context);
    if (!compression) await browser.context.setExtraHTTPHeaders({ 'accept-encoding': 'identity' });
    const page = await browser.context.newPage();
    const transfers = await recordTransfers(browser.context, page);
    const visits = [];
    for (const path of paths) {
      transfers.reset();
      await page.goto(`${corral.url}${path.slice(1)}`);
      await page.waitForSelector('body[data-hydrated]', { timeout: 60_000 });
      const landed = new URL(page.url()).pathname;
      if (landed !== path) throw new Error(`visiting ${path} ended on ${landed}`);
      visits.push(transfers.bytes(transfers.scripts()));
    }
    return visits;
  } finally {
    await browser.close();
  }
}

const kb = (bytes) => Math.round(bytes / 1024);

/** The body's size as sent with `accept-encoding: encoding` (node:http decodes nothing). */
function bodyBytes(url, encoding) {
  return new Promise((resolve, reject) => {
    get(url, { headers: { 'accept-encoding': encoding } }, (response) => {
      let bytes = 0;
      response.on('data', (chunk) => { bytes += chunk.length; });
      response.on('end', () => resolve(bytes));
    }).on('error', reject);
  });
}

const corral = await startCorral();
try {
  const api = await Api.signIn(corral.url, 'admin', corral.adminPassword);
  const page = await fetch(`${corral.url}login`).then((response) => response.text());
  const main = page.match(/\/pkg\/corral-[0-9a-f]+\/corral_bg\.wasm/)?.[0];
  if (!main) throw new Error('the login page names no wasm');
  const scripts = `${corral.url}${main.slice(1, main.lastIndexOf('/'))}`;
  const manifest = await fetch(`${scripts}/__wasm_split_manifest.json`).then((r) => r.json());
  const chunks = [...new Set(Object.values(manifest).flat())].map((stem) => `${stem}.wasm`);
  let raw = 0;
  let brotli = 0;
  for (const file of ['corral_bg.wasm', ...chunks]) {
    raw += await bodyBytes(`${scripts}/${file}`, 'identity');
    brotli += await bodyBytes(`${scripts}/${file}`, 'br');
  }
  const mainBrotli = await bodyBytes(`${scripts}/corral_bg.wasm`, 'br');
  const [portal, repeat] = await coldVisit(corral, api, ['/clusters', '/clusters']);
  const [admin] = await coldVisit(corral, api, [TEMPLATE_PAGE]);
  const [baseline] = await coldVisit(corral, api, ['/clusters'], { compression: false });
  console.log(
    `bundle wasm_raw_kb=${kb(raw)} wasm_br_kb=${kb(brotli)} main_wasm_br_kb=${kb(mainBrotli)} ` +
      `chunks=${chunks.length} first_load_portal_kb=${kb(portal)} ` +
      `first_load_admin_kb=${kb(admin)} repeat_visit_kb=${kb(repeat)} baseline_portal_kb=${kb(baseline)}`,
  );
} finally {
  await corral.stop();
}
