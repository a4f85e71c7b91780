import test, { after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalExecutor } from '../run/local.js';
import { Store, type JobRow } from '../store/store.js';
import { getPublicTask } from '../tasks/briefs.js';
import { REFERENCE_SPECS } from '../tasks/reference-specs.js';
import { Scorer } from './scoring/scorer-pool.js';
import { JobPipeline } from './pipeline.js';
import { openRun } from './open-run.js';
import { BASELINE_SEEDS, CONFIRM_SEEDS } from './noise.js';
import { type RoundGroup, RoundInterrupted, Rounds } from './round.js';

// The outer round on real jobs: the task's baseline and proposals train and are scored on the hidden evaluation.
const task = 'two-spirals';
const brief = getPublicTask(task).brief;
const executor = new LocalExecutor({ workers: 2 });
const scorer = new Scorer();
after(async () => {
  await executor.close();
  await scorer.close();
});

/** A run in a fresh directory whose rows run through the shared step; `trained` counts each row's runs; `stop()` stops it. */
function openRounds(): { store: Store; runId: string; rounds: Rounds; trained: Map<number, number>; stop: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-round-'));
  const store = new Store(dir);
  const { runId, secret, evalId } = openRun(store, dir, { seed: 3 }, () => {});
  const abort = new AbortController();
  const pipeline = new JobPipeline({ dir, runId, store, executor, scorer, cache: null, secret, evalId, signal: abort.signal });
  const trained = new Map<number, number>();
  const runRow = (row: JobRow): Promise<boolean> => {
    trained.set(row.id, (trained.get(row.id) ?? 0) + 1);
    return pipeline.run(row, brief);
  };
  const rounds = new Rounds({ store, runId, secret, baselineSpec: () => getPublicTask(task).baseline, runRow, stopped: () => abort.signal.aborted });
  after(() => store.close());
  return { store, runId, rounds, trained, stop: () => abort.abort() };
}

/** Stores proposals of `specs` at `iteration` and returns them as one group. */
function group(store: Store, runId: string, iteration: number, specs: unknown[]): RoundGroup {
  store.addJobs(
    runId,
    specs.map((spec, slot) => ({ round: iteration, slot, task, kind: 'proposal' as const, agent: 'test', spec, trace: null })),
  );
  return { brief, rows: store.jobs(runId, { round: iteration, kind: 'proposal' }), groupId: `it${iteration}/${task}` };
}

const good = (seed: number): unknown => ({ ...(REFERENCE_SPECS[task].spec() as object), seed });
const baselineSpec = (seed: number): unknown => ({ ...(getPublicTask(task).baseline as object), seed });

test('a round trains the baseline once, confirms a candidate before paying it, and pays each proposal', async () => {
  const { store, runId, rounds, trained } = openRounds();
  const g = group(store, runId, 0, [good(11), baselineSpec(12)]);
  const [settled] = await rounds.play([g], { earlier: () => [] });
  assert.equal(store.jobs(runId, { kind: 'baseline' }).length, BASELINE_SEEDS, 'the baseline spec on the harness seeds');
  assert.equal(settled.rewards.length, 2);
  assert.ok(
    settled.rewards.every((r) => r.unscorable === null && Number.isFinite(r.reward)),
    'both paid',
  );
  const confirms = store.jobs(runId, { kind: 'confirm' });
  assert.ok(confirms.length >= CONFIRM_SEEDS, 'the better spec is a bonus candidate, confirmed on the harness seeds');
  assert.ok(
    confirms.every((c) => c.parentId !== null && c.status !== 'pending'),
    'its confirmation ran before the rewards',
  );
  assert.ok(
    [...trained.values()].every((n) => n === 1),
    'no row trained twice',
  );
  assert.ok(settled.rewards[0].reward > settled.rewards[1].reward, 'the better spec is paid more');
});

test('two rounds that overlap share their rows: each trains once, and the second settled sees the first as the bar', async () => {
  const { store, runId, rounds, trained } = openRounds();
  const first = group(store, runId, 0, [good(21)]);
  const second = group(store, runId, 1, [good(22)]);
  const settledBefore: JobRow[] = [];
  const options = { earlier: () => settledBefore };
  const [a, b] = await Promise.all([rounds.prepare([first], options), rounds.prepare([second], options)]);
  assert.ok(
    [...trained.values()].every((n) => n === 1),
    'the baseline rows both rounds asked for trained once',
  );
  const [pa] = a.settle();
  settledBefore.push(...store.jobs(runId, { round: 0, kind: 'proposal' }));
  const [pb] = b.settle();
  assert.equal(pa.rewards[0].bonus, 0.5, 'the first settled beats the baseline beyond the noise');
  assert.equal(pb.rewards[0].bonus, 0, 'the second settled is compared with the first one’s confirmed score, not the baseline');
});

test('a run that stops while a round waits for its jobs interrupts the round and leaves its jobs pending', async () => {
  const { store, runId, rounds, stop } = openRounds();
  const g = group(store, runId, 0, [good(31)]);
  stop();
  await assert.rejects(rounds.play([g], { earlier: () => [] }), RoundInterrupted);
  assert.equal(store.jobs(runId, { kind: 'confirm' }).length, 0, 'nothing is confirmed after the stop');
  assert.deepEqual(
    store.jobs(runId).map((r) => r.status),
    store.jobs(runId).map(() => 'pending'),
    'the proposal and the baseline wait for a resume',
  );
});
