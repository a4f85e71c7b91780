import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { LocalExecutor } from '../run/local.js';
import { Store } from '../store/store.js';
import { getPublicTask } from '../tasks/briefs.js';
import { evalSecret } from '../tasks/secret.js';
import { ScriptedAgent } from '../testing/scripted-agent.js';
import { confirmPicks, pickOf, readHeldOutRun } from './confirm-picks.js';
import { trainAgent } from './loop.js';
import { seedlessKey } from './identity.js';
import { CONFIRM_SEEDS, harnessSeeds, taskReference } from './noise.js';
import { Scorer } from './scoring/scorer-pool.js';

test('the pick of a best of n is its highest single score among the first n, the earlier on ties', () => {
  const ps = [0.2, 0.9, 0.9, 0.1, 1.5].map((v, i) => ({ v, i }));
  assert.equal(pickOf(ps, 1)?.i, 0);
  assert.equal(pickOf(ps, 4)?.i, 1);
  assert.equal(pickOf(ps, 16)?.i, 4);
  assert.equal(pickOf([], 4), null);
});

test("each row's pick is trained again on the harness's confirmation seeds, each distinct spec once, and a finished confirmation is read again", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-confirm-picks-'));
  const task = 'iris-species';
  const baseline = getPublicTask(task).baseline as unknown as { algorithm: Record<string, unknown> };
  // Specs that differ in their learning rate (three of them) and in their seeds.
  const spec = (lr: number, seed: number) => ({ ...baseline, algorithm: { ...baseline.algorithm, learningRate: lr, epochs: 20 }, seed });
  const executor = new LocalExecutor({ workers: 2 });
  const scorer = new Scorer();
  const cache = join(dir, 'cache.db');
  try {
    // Two held-out runs as the experiment writes them: the frozen controller's and random search's, 16 proposals each.
    const lrs = [0.1, 0.003, 0.1, 0.0001];
    for (const [run, offset] of [
      ['controller', 0],
      ['random', 1],
    ] as const) {
      const script = Array.from({ length: 16 }, (_, i) => () => spec(lrs[(i + offset) % lrs.length], 100 + i));
      await trainAgent(join(dir, task, run), { tasks: [task], agent: 'random', iterations: 1, group: 16, seed: 7, confirm: false }, executor, {
        agent: new ScriptedAgent(script),
        cache,
        scorer,
      });
    }
    const c = await confirmPicks(join(dir, task), task, { executor, cache, scorer, seed: 7 });
    const controller = readHeldOutRun(join(dir, task, 'controller'))!;
    const random = readHeldOutRun(join(dir, task, 'random'))!;
    const picks = {
      zeroShot: controller.proposals[0],
      controllerBest4: pickOf(controller.proposals, 4)!,
      controllerBest16: pickOf(controller.proposals, 16)!,
      randomBest4: pickOf(random.proposals, 4)!,
      randomBest16: pickOf(random.proposals, 16)!,
    };
    // Rows whose method did not run are absent.
    assert.deepEqual(Object.keys(c.confirmed).sort(), Object.keys(picks).sort());
    for (const [k, p] of Object.entries(picks)) assert.equal(c.single[k as keyof typeof c.single], p.v, k);

    // The confirmation run: each distinct spec (seeds aside) on the task's confirmation seeds, and each row its pick's mean.
    const store = new Store(join(dir, task, 'confirm-picks'));
    const jobs = store.jobs(store.getRun()!.id, { kind: 'proposal' });
    const reference = taskReference(store.jobs(store.getRun()!.id, { kind: 'baseline' })).mean!;
    store.close();
    const distinct = new Set(Object.values(picks).map((p) => seedlessKey(p.spec)));
    assert.equal(c.specs, distinct.size);
    assert.equal(jobs.length, distinct.size * CONFIRM_SEEDS);
    const seeds = harnessSeeds(task, CONFIRM_SEEDS, evalSecret());
    for (const key of distinct) {
      const mine = jobs.filter((j) => seedlessKey(j.spec) === key);
      assert.deepEqual(
        mine.map((j) => (j.spec as { seed: number }).seed),
        seeds,
        'trained once on each confirmation seed',
      );
      // The harness's confirmation rule: a failed seed counts as the failure it is (the reference less one), never as 0.
      const mean = mine.reduce((a, j) => a + (j.status === 'succeeded' ? j.normalized! : reference - 1), 0) / mine.length;
      for (const [k, p] of Object.entries(picks)) {
        if (seedlessKey(p.spec) === key) assert.ok(Math.abs(c.confirmed[k as keyof typeof c.confirmed]! - mean) < 1e-12, k);
      }
    }
    // None of the confirmation seeds is a seed a pick trained with.
    for (const p of Object.values(picks)) assert.ok(!seeds.includes((p.spec as { seed: number }).seed));

    // Again: read, not retrained.
    const again = await confirmPicks(join(dir, task), task, { executor, cache, scorer, seed: 7 });
    assert.deepEqual(again, c);
    const after = new Store(join(dir, task, 'confirm-picks'));
    assert.equal(after.jobs(after.getRun()!.id, { kind: 'proposal' }).length, jobs.length);
    after.close();
  } finally {
    await scorer.close();
    await executor.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a task with no held-out runs has nothing to confirm', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-confirm-none-'));
  const executor = new LocalExecutor({ workers: 1 });
  const scorer = new Scorer();
  try {
    const c = await confirmPicks(join(dir, 'iris-species'), 'iris-species', { executor, cache: join(dir, 'cache.db'), scorer, seed: 1 });
    assert.deepEqual(c, { single: {}, confirmed: {}, specs: 0 });
  } finally {
    await scorer.close();
    await executor.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
