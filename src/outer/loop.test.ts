import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { train } from './loop.js';
import { LocalExecutor } from '../run/local.js';
import { Store } from '../store/store.js';
import { arsSpec } from '../testing/specs.js';
import { ScriptedAgent } from '../testing/scripted-agent.js';

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
    const summary = await train(dir, { tasks: [task], agent: 'random', iterations: 2, group: 4, seed: 7 }, executor, { agent });
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
