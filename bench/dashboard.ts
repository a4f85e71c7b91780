/**
 * The dashboard, measured and pictured (a script, not a test):
 *
 *   node dist/bench/dashboard.js measure [--jobs 1000]
 *     writes a run of 1,000 proposals through the Store API and times each page in headless
 *     Chromium, from navigation to the page drawn with its data (median and max of 7 loads);
 *   node dist/bench/dashboard.js screenshots [--out docs/img]
 *     trains two short real runs (the embedded controller on cartpole-short; the LLM agent
 *     against a local scripted OpenAI-compatible server on iris-species) and a small transfer
 *     experiment, and screenshots every page (about 4 minutes on 2 idle cores); with --dir DIR
 *     the runs are kept there and those already finished are not made again.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { RunCatalog, openReadOnly } from '../src/dashboard/catalog.js';
import { startDashboard } from '../src/dashboard/server.js';
import { launchBrowser } from '../src/testing/browser.js';
import { writeLargeRun } from '../src/testing/large-run.js';
import { FakeLlmServer } from '../src/testing/fake-llm-server.js';
import { getPublicTask } from '../src/tasks/briefs.js';
import { runTransfer } from '../src/outer/experiment.js';
import { LocalExecutor } from '../src/run/local.js';

const bin = resolve(fileURLToPath(import.meta.url), '../../../bin/rrl.js');
const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(name);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
};

/** Milliseconds from the start of navigation to the page drawn with its data, as the page's own clock says. */
async function load(page: Page, url: string): Promise<number> {
  await page.goto(url);
  await page.waitForSelector('body[data-ready]');
  return Number(await page.locator('body').getAttribute('data-ready-ms'));
}

async function measure(): Promise<void> {
  const jobs = Number(arg('--jobs', '1000'));
  const tmp = mkdtempSync(join(tmpdir(), 'rrl-dash-bench-'));
  const group = 20;
  const tasks = ['cartpole-short', 'iris-species'];
  const t0 = performance.now();
  const { proposals } = writeLargeRun(join(tmp, 'large'), { iterations: Math.ceil(jobs / (group * tasks.length)), group, tasks, curvePoints: 50 });
  process.stderr.write(`wrote a run of ${proposals} proposals in ${((performance.now() - t0) / 1000).toFixed(1)} s (${tmp}/large)\n`);
  const db = openReadOnly(join(tmp, 'large'));
  const someJob = (db.prepare("SELECT id FROM jobs WHERE status = 'succeeded' AND kind = 'proposal' ORDER BY id DESC LIMIT 1").get() as { id: number }).id;
  db.close();
  const dash = await startDashboard(new RunCatalog([tmp]), { port: 0 });
  const browser = await launchBrowser();
  try {
    const pages: [string, string][] = [
      ['runs list', '/'],
      ['run page', '/runs/large'],
      [`jobs table (all ${proposals + 2} rows)`, '/runs/large/jobs'],
      ['job page', `/runs/large/jobs/${someJob}`],
    ];
    const rows = [];
    for (const [name, path] of pages) {
      // First in a new tab (its renderer starts too), then six more loads in that tab.
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const first = await load(page, dash.url + path);
      const times: number[] = [first];
      for (let i = 0; i < 6; i++) times.push(await load(page, dash.url + path));
      await page.close();
      times.sort((a, b) => a - b);
      rows.push({ page: name, path, firstMs: Math.round(first), medianMs: Math.round(times[3]), maxMs: Math.round(times[6]) });
    }
    console.log(
      `| page | new tab (ms) | median of 7 (ms) | max of 7 (ms) |\n| --- | ---: | ---: | ---: |\n${rows.map((r) => `| ${r.page} | ${r.firstMs} | ${r.medianMs} | ${r.maxMs} |`).join('\n')}`,
    );
    console.log(JSON.stringify({ bench: 'dashboard-page-load', proposals, rows }));
  } finally {
    await browser.close();
    await dash.close();
  }
}

/** Runs the CLI to the end; rejects on a non-zero exit. */
function rrl(args: string[]): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
    child.once('close', (code) => (code === 0 ? done() : fail(new Error(`rrl ${args.join(' ')} exited ${code}`))));
  });
}

async function screenshots(): Promise<void> {
  const out = resolve(arg('--out', 'docs/img'));
  mkdirSync(out, { recursive: true });
  // --dir DIR keeps the runs there; a run or experiment already finished in it is not made again.
  const tmp = resolve(arg('--dir', '') || mkdtempSync(join(tmpdir(), 'rrl-dash-shots-')));
  const finished = (dir: string): boolean => {
    if (!existsSync(join(dir, 'store.db'))) return false;
    const db = openReadOnly(dir);
    try {
      return db.prepare("SELECT count(*) FROM runs WHERE status = 'finished'").pluck().get() === 1;
    } finally {
      db.close();
    }
  };
  // The embedded controller, learning on a fast control task.
  if (!finished(join(tmp, 'controller-cartpole'))) {
    rmSync(join(tmp, 'controller-cartpole'), { recursive: true, force: true });
    await rrl(['train', '--tasks', 'cartpole-short', '--iterations', '5', '--group', '4', '--run', join(tmp, 'controller-cartpole')]);
  }
  // The LLM agent, its replies scripted by a local OpenAI-compatible server (one reply is broken JSON, repaired).
  const base = getPublicTask('iris-species').baseline as Record<string, unknown>;
  const spec = (seed: number, lr: number): string =>
    JSON.stringify({
      ...base,
      dataset: { sources: [{ id: 'clean-small', weight: 1 }] },
      model: { hidden: [16], activation: 'relu' },
      algorithm: { ...(base.algorithm as object), learningRate: lr },
      budget: { examples: 2000 },
      seed,
    });
  const llm = new FakeLlmServer({
    model: 'Qwen/Qwen3.6-35B-A3B',
    script: [
      { content: spec(11, 0.01) },
      { content: '{"task": "iris-species", "model": ' },
      { content: spec(12, 0.003) },
      { content: spec(13, 0.02) },
      { content: spec(14, 0.005) },
    ],
  });
  const baseUrl = await llm.start();
  try {
    if (!finished(join(tmp, 'llm-iris')))
      await rrl([
        'train',
        '--agent',
        'llm',
        '--base-url',
        baseUrl,
        '--model',
        'Qwen/Qwen3.6-35B-A3B',
        '--tasks',
        'iris-species',
        '--iterations',
        '2',
        '--group',
        '2',
        '--run',
        join(tmp, 'llm-iris'),
      ]);
  } finally {
    await llm.close();
  }
  // A small transfer experiment (meta-training on one task, one held-out task).
  const executor = new LocalExecutor({});
  try {
    if (!existsSync(join(tmp, 'transfer-small', 'transfer.json')))
      await runTransfer(
        join(tmp, 'transfer-small'),
        { trainTasks: ['penguins-species'], heldOutTasks: ['iris-species'], iterations: 2, group: 2, seed: 3, seeds: 1 },
        executor,
      );
  } finally {
    await executor.close();
  }
  const dash = await startDashboard(new RunCatalog([tmp]), { port: 0 });
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 }, deviceScaleFactor: 1 });
    const shot = async (path: string, file: string, fullPage = true): Promise<void> => {
      await load(page, dash.url + path);
      await page.waitForTimeout(300);
      await page.screenshot({ path: join(out, file), fullPage });
      process.stderr.write(`${join(out, file)}\n`);
    };
    const db = openReadOnly(join(tmp, 'controller-cartpole'));
    const best = (
      db
        .prepare("SELECT j.id FROM jobs j JOIN scores s ON s.job_id = j.id WHERE j.kind = 'proposal' ORDER BY j.round DESC, s.normalized DESC LIMIT 1")
        .get() as { id: number }
    ).id;
    db.close();
    const ldb = openReadOnly(join(tmp, 'llm-iris'));
    const repaired = (ldb.prepare("SELECT id FROM jobs WHERE kind = 'proposal' ORDER BY iteration, slot LIMIT 1 OFFSET 1").get() as { id: number }).id;
    ldb.close();
    await shot('/', 'dashboard-runs.png', false);
    await shot('/runs/controller-cartpole', 'dashboard-run.png');
    await shot('/runs/controller-cartpole/jobs', 'dashboard-jobs.png', false);
    await shot(`/runs/controller-cartpole/jobs/${best}`, 'dashboard-job.png');
    await shot(`/runs/llm-iris/jobs/${repaired}`, 'dashboard-job-llm.png');
    await shot('/experiments/transfer-small', 'dashboard-experiment.png');
  } finally {
    await browser.close();
    await dash.close();
  }
}

const what = process.argv[2];
if (what === 'measure') await measure();
else if (what === 'screenshots') await screenshots();
else {
  console.error('usage: node dist/bench/dashboard.js measure [--jobs N] | screenshots [--out DIR]');
  process.exitCode = 2;
}
