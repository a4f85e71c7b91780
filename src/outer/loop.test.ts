import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trainAgent } from './loop.js';
import { LocalExecutor } from '../run/local.js';
import { Store } from '../store/store.js';
import { arsSpec } from '../testing/specs.js';
import { ScriptedAgent } from '../testing/scripted-agent.js';
import { REFERENCE_SPECS } from '../tasks/reference-specs.js';

test('invalid specs and crashing jobs are recorded with a penalty while the loop goes on', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-loop-'));
  const task = 'cartpole-short';
  const agent = new ScriptedAgent([
    (i) => arsSpec(task, 5000, i),
    () => ({ ...arsSpec(task), algorithm: { name: 'ars', stepSize: 5, directions: 8, topDirections: 4, noise: 0.03 } }),
    () => ({ ...arsSpec(task), reward: { expression: 'r + x.constructor' } }),
    () => ({ ...arsSpec(task), reward: { expression: 'r + log(x)' } }),
  ]);
  const executor = new LocalExecutor({ workers: 2 });
  try {
    const summary = await trainAgent(dir, { tasks: [task], agent: 'random', iterations: 2, group: 4, seed: 7 }, executor, { agent });
    assert.equal(summary.iterations.length, 2);
    assert.equal(summary.jobs, 8);
    const store = new Store(dir);
    const jobs = store.jobs(summary.run, { kind: 'proposal' });
    store.close();
    const bySlot = (slot: number) => jobs.filter((j) => j.slot === slot);
    for (const j of bySlot(0)) {
      assert.equal(j.status, 'succeeded');
      assert.ok(j.normalized !== null && j.normalized > 0.9, `ARS job scored ${j.normalized}`);
    }
    for (const j of bySlot(1)) {
      assert.equal(j.status, 'invalid');
      assert.match(j.error ?? '', /algorithm\.stepSize: got 5: .*<=1/);
      assert.equal(j.reward, -1);
    }
    for (const j of bySlot(2)) {
      assert.equal(j.status, 'invalid');
      assert.match(j.error ?? '', /reward\.expression.*x\.constructor.*property access is not allowed/);
      assert.equal(j.reward, -1);
    }
    for (const j of bySlot(3)) {
      assert.equal(j.status, 'failed');
      assert.equal(j.failureKind, 'nan');
      assert.match(j.error ?? '', /reward\.expression "r \+ log\(x\)" gave NaN/);
      assert.equal(j.reward, -1);
    }
    // The agent was paid for every proposal, penalties included.
    assert.equal(agent.updates.length, 2);
    assert.deepEqual(
      agent.updates[0][0].items.map((i) => i.reward < 0),
      [false, true, true, true],
    );
  } finally {
    await executor.close();
  }
});

test('confirm: false trains no confirmation job and pays no bonus, and changes no job and no score', async () => {
  const task = 'two-spirals';
  // Two proposals of the task's better reference spec (well above its baseline spec): candidates for the bonus.
  const better = REFERENCE_SPECS[task].spec() as Record<string, unknown>;
  const specs = [1, 2].map((seed) => ({ ...better, seed }));
  const run = async (confirm: boolean | undefined) => {
    const dir = mkdtempSync(join(tmpdir(), 'rrl-confirm-'));
    const executor = new LocalExecutor({ workers: 2 });
    try {
      const config = { tasks: [task], agent: 'random' as const, iterations: 1, group: 2, seed: 3, ...(confirm === undefined ? {} : { confirm }) };
      await trainAgent(dir, config, executor, { agent: new ScriptedAgent(specs.map((s) => () => s)), cache: null, noiseFile: null });
    } finally {
      await executor.close();
    }
    const store = new Store(dir);
    const jobs = store.jobs(store.getRun()!.id);
    const bonuses = (store.db.prepare('SELECT detail FROM rewards').all() as { detail: string }[]).map(
      (r) => (JSON.parse(r.detail) as { bonus: number }).bonus,
    );
    store.close();
    const proposals = jobs.filter((j) => j.kind === 'proposal').map((j) => [j.status, j.normalized]);
    return { confirms: jobs.filter((j) => j.kind === 'confirm').length, proposals, bonuses };
  };
  const usual = await run(undefined);
  const without = await run(false);
  assert.ok(usual.confirms > 0, 'by default the candidates are confirmed on the harness seeds');
  assert.equal(without.confirms, 0);
  assert.deepEqual(without.proposals, usual.proposals, 'the same jobs and scores');
  assert.deepEqual(without.bonuses, [0, 0]);
});
