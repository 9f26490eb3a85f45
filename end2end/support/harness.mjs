// Shared harness for Corral's browser tests: starts the real `corral serve` on a free
// port with a fresh data dir, and Debian's chromium through playwright-core.
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
export const outputDir = join(here, '..', 'output');
mkdirSync(outputDir, { recursive: true });

export const corralBin = process.env.CORRAL_BIN ?? join(here, '..', '..', 'target', 'debug', 'corral');

export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Local nodes outlive a stopped server (a restarted one adopts them), so a node whose
 * cluster a test did not delete would run on after the test run: stop any process still
 * using the data dir, and name it, so the test that left it can be found.
 */
function stopLeftoverNodes(dataDir) {
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let cmdline;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    } catch {
      continue; // gone already
    }
    if (!cmdline.includes(dataDir)) continue;
    console.error(`corral-e2e: stopping a process left running in ${dataDir}: ${pid} ${cmdline}`);
    try {
      process.kill(Number(pid), 'SIGTERM');
    } catch {
      // gone already
    }
  }
}

/**
 * Starts `corral serve` and resolves once it prints the URL it serves; `bin` and `cwd`
 * run another copy of the binary from another directory; `dataDir`, `port` and
 * `extraArgs` (e.g. `--config FILE`) for a test that prepares them first.
 */
export async function startCorral({
  bin = corralBin, cwd = undefined, dataDir = undefined, port = undefined, extraArgs = [],
} = {}) {
  dataDir ??= mkdtempSync(join(tmpdir(), 'corral-e2e-'));
  port ??= await freePort();
  const child = spawn(bin, ['serve', '--listen', `127.0.0.1:${port}`, '--data-dir', dataDir, ...extraArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd,
  });
  let logs = '';
  let adminPassword = null;
  child.stderr.on('data', (chunk) => { logs += chunk; });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`corral did not start in 60 s:\n${logs}`)), 60_000);
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const first = out.match(/sign in as \S+ with password (\S+)/);
      if (first) adminPassword = first[1];
      const match = out.match(/Corral is running at (http:\/\/\S+)/);
      if (match) { clearTimeout(timer); resolve(match[1]); }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`corral exited with ${code}:\n${logs}`)); });
  });
  return {
    url,
    adminPassword,
    logs: () => logs,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.on('exit', resolve)));
      stopLeftoverNodes(dataDir);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Launches headless chromium with the flags this machine needs. */
export async function launchBrowser({ javaScriptEnabled = true } = {}) {
  const userDataDir = mkdtempSync(join(tmpdir(), 'corral-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1280, height: 900 },
    javaScriptEnabled,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
