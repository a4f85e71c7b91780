/**
 * `rrl export sft` on a real small run: a train task (two-spirals) and a held-out one
 * (iris-species), each with the baseline reseeded, a better spec twice (two seeds) and another one.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { spawnSync } from 'node:child_process';
import { trainAgent } from './loop.js';
import { LocalExecutor } from '../run/local.js';
import { validateSpec } from '../inner/spec-check.js';
import { readAnswer } from './answer.js';
import { Store } from '../store/store.js';
import { getPublicTask } from '../tasks/briefs.js';
import { exportSft, sftPatch, sftPrompt, summaryLine, type SftRow } from './sft-export.js';
import type { Agent, Proposal } from './agents/types.js';
import type { TaskBrief } from '../spec/brief.js';

const TRAIN_TASK = 'two-spirals';
const HELD_OUT = 'iris-species';

/** Per task: the baseline reseeded, a faster learner on two seeds, a wider one. */
class PlanAgent implements Agent {
  readonly name = 'plan';
  private n = new Map<string, number>();
  async propose(brief: TaskBrief): Promise<Proposal> {
    const i = this.n.get(brief.id) ?? 0;
    this.n.set(brief.id, i + 1);
    const base = getPublicTask(brief.id).baseline as Record<string, unknown>;
    const algorithm = base.algorithm as Record<string, unknown>;
    const budget = { examples: 20000, targetReturn: null };
    const plan = [
      { ...base, seed: 77 },
      { ...base, budget, algorithm: { ...algorithm, learningRate: 0.01 }, seed: 5 },
      { ...base, budget, algorithm: { ...algorithm, learningRate: 0.01 }, seed: 6 },
      { ...base, budget, model: { hidden: [32, 32], activation: 'tanh', dropout: 0 }, algorithm: { ...algorithm, learningRate: 0.02 }, seed: 7 },
    ];
    return { spec: plan[i % plan.length], trace: { i } };
  }
  async update(): Promise<Record<string, never>> {
    return {};
  }
  async state(): Promise<Record<string, number>> {
    return Object.fromEntries(this.n);
  }
  async load(): Promise<void> {}
}

const seedless = (spec: unknown, brief: TaskBrief): unknown => {
  const r = validateSpec(spec, brief);
  assert.ok(r.ok, 'a valid spec');
  return { ...r.spec, seed: 0 };
};

test('rrl export sft: the best distinct patches of train tasks only, best first, each giving back its job', { timeout: 600_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-sft-'));
  const run = join(dir, 'run');
  const summary = await trainAgent(
    run,
    { tasks: [TRAIN_TASK, HELD_OUT], agent: 'random', iterations: 1, group: 4, seed: 1 },
    new LocalExecutor({ workers: 2 }),
    {
      agent: new PlanAgent(),
      cache: null,
    },
  );
  const out = join(dir, 'sft.jsonl');
  const r = exportSft([run], { out });
  const rows = readFileSync(out, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as SftRow);
  assert.equal(rows.length, r.rows);

  const store = new Store(run);
  const jobs = new Map(store.jobs(summary.run).map((j) => [j.id, j]));
  store.close();
  const brief = getPublicTask(TRAIN_TASK).brief;
  const baseline = getPublicTask(TRAIN_TASK).baseline;
  assert.ok(rows.length >= 1, `a better spec was kept: ${r.tasks.map(summaryLine).join(' | ')}`);
  assert.ok(
    rows.every((row) => row.task === TRAIN_TASK),
    'the held-out task never appears',
  );
  assert.ok(rows.length <= 4);
  const seen = new Set<string>();
  for (const [i, row] of rows.entries()) {
    assert.deepEqual(row.messages.slice(0, 2), sftPrompt(brief));
    assert.deepEqual(
      row.messages.map((m) => m.role),
      ['system', 'user', 'assistant'],
    );
    const patch = JSON.parse(row.messages[2].content) as Record<string, unknown>;
    assert.ok(Object.keys(patch).length > 0 && !('seed' in patch), 'no no-op patch, no seed');
    const job = jobs.get(row.job)!;
    assert.equal(job.status, 'succeeded');
    assert.equal(row.run, summary.run);
    assert.ok(
      isDeepStrictEqual(seedless((readAnswer(patch, baseline) as { spec: unknown }).spec, brief), seedless(job.spec, brief)),
      'the patch gives back the job',
    );
    assert.ok(!seen.has(row.messages[2].content), 'distinct patches');
    seen.add(row.messages[2].content);
    if (i > 0) assert.ok(rows[i - 1].score >= row.score, 'best first');
  }
  const line = summaryLine(r.tasks.find((t) => t.task === HELD_OUT)!);
  assert.match(line, /held-out.*kept 0 .*split held-out, skipped/);

  // at most K per task
  const one = exportSft([run], { out: join(dir, 'one.jsonl'), perTask: 1 });
  assert.equal(one.rows, 1);
  // the held-out split on request, still never a no-op
  const held = exportSft([run], { out: join(dir, 'held.jsonl'), split: 'held-out' });
  assert.ok(held.tasks.some((t) => t.task === HELD_OUT && t.note === null));
  // an unreachable margin keeps nothing
  assert.equal(exportSft([run], { out: join(dir, 'none.jsonl'), minMargin: 50 }).rows, 0);
});

test('sftPatch: the baseline reseeded is the empty patch; a change is the changed field alone', () => {
  const { brief, baseline } = getPublicTask(TRAIN_TASK);
  assert.deepEqual(sftPatch(brief, baseline, { ...baseline, seed: 99 }), {});
  const b = baseline as Record<string, unknown>;
  const changed = { ...b, algorithm: { ...(b.algorithm as object), learningRate: 0.003 } };
  assert.deepEqual(sftPatch(brief, baseline, changed), { algorithm: { learningRate: 0.003 } });
  assert.equal(sftPatch(brief, baseline, { ...b, model: 'nope' }), null);
});

test('rrl export sft: a missing, foreign or empty store is a one-line error', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-sft-bad-'));
  const out = join(dir, 'x.jsonl');
  assert.throws(
    () => exportSft([join(dir, 'nothing')], { out }),
    (e: Error) => /no run in .*store\.db not found/.test(e.message) && !e.message.includes('\n'),
  );
  mkdirSync(join(dir, 'junk'));
  writeFileSync(join(dir, 'junk', 'store.db'), 'not a database at all '.repeat(100));
  assert.throws(
    () => exportSft([join(dir, 'junk')], { out }),
    (e: Error) => /junk: cannot read the run's store/.test(e.message) && !e.message.includes('\n'),
  );
  mkdirSync(join(dir, 'empty'));
  new Store(join(dir, 'empty')).close();
  assert.throws(
    () => exportSft([join(dir, 'empty')], { out }),
    (e: Error) => /the store has no run/.test(e.message),
  );
  assert.throws(() => exportSft([], { out }), /no run given/);
});

test('rrl export sft on the command line: a bad run or flag is one line and a non-zero exit', () => {
  const bin = join(import.meta.dirname, '..', '..', '..', 'bin', 'rrl.js');
  const dir = mkdtempSync(join(tmpdir(), 'rrl-sft-cli-'));
  const missing = spawnSync(process.execPath, [bin, 'export', 'sft', join(dir, 'nothing'), '--out', join(dir, 'x.jsonl')], { encoding: 'utf8' });
  assert.notEqual(missing.status, 0);
  assert.match(missing.stderr.trim(), /^[^\n]*no run in .*store\.db not found[^\n]*$/);
  const split = spawnSync(process.execPath, [bin, 'export', 'sft', dir, '--out', join(dir, 'x.jsonl'), '--split', 'test'], { encoding: 'utf8' });
  assert.notEqual(split.status, 0);
  assert.match(split.stderr, /--split must be one of train, held-out, example/);
});

test('rrl export sft reads the family draws a run recorded: their tasks are known and exported, not skipped', { timeout: 600_000 }, () => {
  const bin = join(import.meta.dirname, '..', '..', '..', 'bin', 'rrl.js');
  const dir = mkdtempSync(join(tmpdir(), 'rrl-sft-fam-'));
  const run = join(dir, 'run');
  const trained = spawnSync(
    process.execPath,
    [
      bin,
      'train',
      '--family',
      'synthetic:1',
      '--family-seed',
      '3',
      '--agent',
      'random',
      '--iterations',
      '1',
      '--group',
      '3',
      '--seed',
      '1',
      '--run',
      run,
      '--workers',
      '2',
    ],
    { encoding: 'utf8' },
  );
  assert.equal(trained.status, 0, trained.stderr.slice(-500));
  // another process: the draw is registered from the run's stored config alone
  const exported = spawnSync(process.execPath, [bin, 'export', 'sft', run, '--out', join(dir, 'sft.jsonl')], { encoding: 'utf8' });
  assert.equal(exported.status, 0, exported.stderr);
  const lines = exported.stderr.split('\n').filter((l) => /kept \d+ of/.test(l));
  assert.equal(lines.length, 1, exported.stderr);
  assert.match(lines[0], /^synthetic-\S+ \(train\): kept \d+ of 3 succeeded job\(s\)/);
  assert.doesNotMatch(lines[0], /unknown/);
});
