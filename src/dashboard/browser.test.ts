/**
 * The dashboard in a real browser (Debian's Chromium driven by playwright-core): a short real
 * `rrl train` shows a new iteration on the open run page without a reload; the runs list, the
 * jobs table's filters and a job's page work, with no script error and no request leaving the server.
 * A page of another origin cannot make `rrl serve` train a job, and a DNS-rebinding page reads
 * neither server.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, type Page, chromium } from 'playwright-core';
import { CHROMIUM, browserMissing, launchBrowser } from '../testing/browser.js';
import { arsSpec } from '../testing/specs.js';
import { LocalExecutor } from '../run/local.js';
import { Store } from '../store/store.js';
import { RewardService } from '../serve/service.js';
import { startServer } from '../serve/server.js';
import { writeLargeRun } from '../testing/large-run.js';
import { RunCatalog } from './catalog.js';
import { type RunningDashboard, startDashboard } from './server.js';

// The page's globals, as the functions evaluated in the browser use them (this file compiles without the DOM library).
declare const document: { querySelectorAll(selector: string): { length: number } };
declare const window: { marker?: number; location: { search: string }; performance: { getEntriesByType(type: string): unknown[] } };

const skip = browserMissing() ?? false;
const bin = resolve(fileURLToPath(import.meta.url), '../../../../bin/rrl.js');
const root = mkdtempSync(join(tmpdir(), 'rrl-dash-browser-'));

/** A page that fails the test on any script error or any request to another origin. */
async function openPage(browser: Browser, base: string): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (m) => m.type() === 'error' && problems.push(`console error: ${m.text()}`));
  page.on('request', (r) => !r.url().startsWith(base) && problems.push(`request left the server: ${r.url()}`));
  return { page, problems };
}

const doneIterations = (page: Page): Promise<number> => page.locator('#iteration-table tbody td.status-done').count();

test('a short rrl train: the open run page shows each new iteration without reloading', { skip, timeout: 600_000 }, async () => {
  const dir = join(root, 'live-run');
  // The browser starts first (seconds on a busy machine): the run's jobs train in about a second each.
  const browserFirst = await launchBrowser();
  const child: ChildProcess = spawn(
    process.execPath,
    [bin, 'train', '--tasks', 'cartpole-short', '--iterations', '3', '--group', '2', '--workers', '2', '--run', dir],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  let dash: RunningDashboard | null = null;
  const browser: Browser | null = browserFirst;
  try {
    // The store appears as soon as the run starts.
    while (!existsSync(join(dir, 'store.db'))) {
      assert.equal(child.exitCode, null, `rrl train stopped early: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    dash = await startDashboard(new RunCatalog([dir]), { port: 0, pollMs: 200 });
    const { page, problems } = await openPage(browser, dash.url);
    await page.goto(`${dash.url}/runs/live-run`);
    await page.waitForSelector('body[data-ready]');
    await page.waitForSelector('#live.on');
    await page.evaluate(() => (window.marker = 42));
    const before = await doneIterations(page);
    assert.ok(before < 3, `the run finished before the page opened (${before} iterations done)`);
    // A new iteration lands in the store; the page shows it by itself.
    await page.waitForFunction((n) => document.querySelectorAll('#iteration-table tbody td.status-done').length > n, before, { timeout: 500_000 });
    const after = await doneIterations(page);
    assert.ok(after > before);
    assert.equal(await page.evaluate(() => window.marker), 42, 'the page was not reloaded');
    assert.equal(await page.evaluate(() => window.performance.getEntriesByType('navigation').length), 1);
    // Its charts are drawn by uPlot, from the package (no request left the server).
    assert.ok((await page.locator('#c-reward canvas').count()) === 1);
    assert.equal(await exited, 0, stderr);
    await page.waitForFunction(() => document.querySelectorAll('#iteration-table tbody td.status-done').length === 3, undefined, { timeout: 60_000 });
    assert.match((await page.locator('#cards').innerText()).replace(/\s+/g, ' '), /status finished/);
    assert.deepEqual(problems, []);
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
    await browser?.close();
    await dash?.close();
  }
});

test('runs list, jobs filters, a job page and a transfer experiment in the browser', { skip, timeout: 300_000 }, async () => {
  writeLargeRun(join(root, 'big'), { iterations: 5, group: 4 });
  const exp = join(root, 'transfer-1');
  mkdirSync(exp, { recursive: true });
  writeFileSync(join(exp, 'transfer.md'), '# Transfer experiment\n\n| task | controller zero-shot |\n| --- | --- |\n| iris-species | 0.667 |\n');
  writeFileSync(join(exp, 'transfer.json'), '{}');
  writeFileSync(
    join(exp, 'held-out.svg'),
    '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20" fill="#2563eb"/></svg>',
  );
  const dash = await startDashboard(new RunCatalog([root]), { port: 0 });
  const browser = await launchBrowser();
  try {
    const { page, problems } = await openPage(browser, dash.url);
    await page.goto(dash.url);
    await page.waitForSelector('body[data-ready]');
    assert.equal(await page.locator('#runs tbody tr[data-run="big"]').count(), 1);

    await page.goto(`${dash.url}/runs/big/jobs`);
    await page.waitForSelector('body[data-ready]');
    const all = await page.locator('#jobs tbody tr').count();
    assert.equal(all, 2 + 5 * 4 * 2);
    await page.selectOption('select[data-filter="status"]', 'failed');
    // The filtered table replaces the full one: wait for it (the URL changes first).
    await page.waitForFunction((n) => {
      const shown = document.querySelectorAll('#jobs tbody tr').length;
      return new URLSearchParams(window.location.search).get('status') === 'failed' && shown > 0 && shown < n;
    }, all);
    const failedRows = await page.locator('#jobs tbody tr').allInnerTexts();
    assert.ok(failedRows.length < all);
    for (const r of failedRows) assert.match(r, /failed[\s\S]*timeout: the job ran past its wall-clock limit/);

    await page.goto(`${dash.url}/runs/big/jobs?status=succeeded&iteration=4&task=cartpole-short`);
    await page.waitForSelector('body[data-ready]');
    await page.locator('#jobs tbody tr a').first().click();
    await page.waitForURL(/\/runs\/big\/jobs\/\d+$/);
    await page.waitForSelector('body[data-ready]');
    // The spec's lines that differ from the PPO baseline are highlighted; its curve is drawn.
    assert.ok((await page.locator('#spec .d-base[data-path="algorithm.name"]').count()) === 1);
    assert.ok((await page.locator('#spec .d-best').count()) >= 1);
    assert.ok((await page.locator('#c-curve canvas').count()) === 1);
    assert.match(await page.locator('#score').innerText(), /^\d\.\d{3} ± \d\.\d{3}$/);

    assert.deepEqual(problems, []);
    // A transfer experiment's report and plot.
    await page.goto(dash.url);
    await page.waitForSelector('body[data-ready]');
    await page.locator('#experiments a', { hasText: 'transfer-1' }).click();
    await page.waitForURL(/\/experiments\/transfer-1$/);
    await page.waitForSelector('body[data-ready]');
    assert.match(await page.locator('#report table').innerText(), /iris-species\s+0\.667/);
    await page.waitForFunction(() => document.querySelectorAll('img[alt="held-out.svg"]').length === 1);
    assert.ok(
      (await page.locator('img[alt="held-out.svg"]').evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)) > 0,
      'the plot loaded',
    );

    assert.deepEqual(problems, []);
    const bad = await page.goto(`${dash.url}/runs/big/jobs/abc`);
    assert.equal(bad?.status(), 400);
    assert.match(await page.locator('body').innerText(), /job id: expected a non-negative integer, got "abc"/);
  } finally {
    await browser.close();
    await dash.close();
  }
});

test('a page of another origin cannot make rrl serve train a job; a DNS-rebinding page gets neither server', { skip, timeout: 300_000 }, async () => {
  const task = 'cartpole-short';
  const serveDir = mkdtempSync(join(tmpdir(), 'rrl-serve-browser-'));
  const executor = new LocalExecutor({ workers: 1 });
  const service = RewardService.open(serveDir, { mode: 'serve', seed: 0, reward: { rule: 'improvement', lambda: 0.5 } }, executor);
  const serve = await startServer(service, { port: 0 });
  writeLargeRun(join(root, 'rebind'), { iterations: 1, group: 2, tasks: [task] });
  const dash = await startDashboard(new RunCatalog([join(root, 'rebind')]), { port: 0 });
  // The attacker's page, on another port of the same machine (another origin, the same site).
  const evil = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>evil</title>'));
  await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
  const evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}`;
  // evil.test resolves to this machine, as a rebound name would.
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--host-resolver-rules=MAP evil.test 127.0.0.1'] });
  try {
    const page = await browser.newPage();
    await page.goto(evilUrl);
    const body = JSON.stringify({ task, completions: [JSON.stringify(arsSpec(task, 500, 3))] });
    const refused = page.waitForResponse((r) => r.url() === `${serve.url}/v1/rewards`);
    const sent = await page.evaluate(
      async ([url, text]) => {
        // A no-cors POST needs no preflight: the browser sends it, only its answer is hidden.
        const opaque = await fetch(url, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: text });
        // A JSON POST needs a preflight, which the server refuses.
        const cors = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text }).then(
          () => 'answered',
          (e: Error) => e.name,
        );
        return { opaque: opaque.type, cors };
      },
      [`${serve.url}/v1/rewards`, body] as const,
    );
    assert.deepEqual(sent, { opaque: 'opaque', cors: 'TypeError' });
    assert.equal((await refused).status(), 403, 'the no-cors POST reached the server and was refused');
    assert.equal(service.queued, 0);
    const store = new Store(serveDir);
    try {
      assert.deepEqual(store.requests(store.getRun()!.id), [], 'no request was recorded, no job trained');
    } finally {
      store.close();
    }
    // Pages under a rebound name: the browser calls them same-origin; the servers see a foreign Host.
    for (const port of [dash.port, serve.port]) {
      const rebound = await page.goto(`http://evil.test:${port}/`);
      assert.equal(rebound?.status(), 421);
      assert.match(await page.locator('body').innerText(), /is not this server/);
      const read = await page.evaluate(async () => (await fetch('/api/runs')).status);
      assert.equal(read, 421);
    }
    // The dashboard's own page still works, its fetches and its event stream included.
    const own = await openPage(browser, dash.url);
    await own.page.goto(`${dash.url}/runs/rebind`);
    await own.page.waitForSelector('body[data-ready]');
    await own.page.waitForSelector('#live.on');
    assert.deepEqual(own.problems, []);
  } finally {
    await browser.close();
    await new Promise((r) => evil.close(r));
    await dash.close();
    await serve.close();
    await service.close();
    await executor.close();
  }
});
