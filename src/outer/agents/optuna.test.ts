import test from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateSpec } from '../../inner/spec-check.js';
import { getPublicTask } from '../../tasks/briefs.js';
import { skipWithoutPython } from '../../testing/python.js';
import { Rng } from '../../util/rng.js';
import { OptunaAgent, type OptunaTrace, MAX_STARTS, optunaMissing } from './optuna.js';
import { buildHeads, decode } from './space.js';
import type { RewardGroup } from './types.js';

const skip = skipWithoutPython("the Optuna agents' tests against the real driver", ['optuna', 'cmaes']);
const { brief, baseline } = getPublicTask('iris-species');
const cart = getPublicTask('cartpole-balance').brief;

/** `n` proposals on one task, as the loop makes them: sequential asks, then one update with their rewards. */
async function round(agent: OptunaAgent, b: typeof brief, n: number, rng: Rng, reward: (t: OptunaTrace) => number, status = 'succeeded') {
  const traces: OptunaTrace[] = [];
  for (let i = 0; i < n; i++) {
    const p = await agent.propose(b, { rng, iteration: 0, history: [] });
    assert.ok(validateSpec(p.spec, b).ok, JSON.stringify(p.spec));
    traces.push(p.trace as OptunaTrace);
  }
  const group: RewardGroup = { brief: b, items: traces.map((t) => ({ trace: t, reward: reward(t), status })) };
  return { traces, stats: await agent.update([group]) };
}

test('TPE and CMA-ES propose specs of the design space through the real driver and learn from what they are told', { skip }, async () => {
  for (const sampler of ['tpe', 'cmaes'] as const) {
    const agent = new OptunaAgent({ sampler, seed: 4 });
    try {
      assert.equal(agent.name, `optuna-${sampler}`);
      const rng = new Rng(2);
      const heads = buildHeads(cart);
      const ars = heads.findIndex((h) => h.name === 'algorithm');
      const steps = heads.findIndex((h) => h.name === 'envSteps');
      // Rewarded: ARS (a categorical: CMA-ES samples it independently) and many env steps (an int on a log scale).
      const reward = (t: OptunaTrace) => (t.choice[ars] === heads[ars].options.indexOf('ars') ? 1 : 0) + t.choice[steps] / 4;
      const seen: OptunaTrace[] = [];
      for (let r = 0; r < 6; r++) {
        const { traces, stats } = await round(agent, cart, 4, rng, reward);
        assert.deepEqual(stats, { optunaTold: 4, optunaErrors: 0 });
        for (const t of traces) {
          assert.equal(t.sampler, sampler);
          // The spec is what decode writes for the point's choice, as the random and model-based searches do.
          assert.equal(Object.keys(t.point).length > 10, true);
          assert.ok(t.choice.every((c, i) => c >= 0 && c < heads[i].options.length));
        }
        seen.push(...traces);
      }
      assert.deepEqual(
        seen.map((t) => t.trial),
        seen.map((_, i) => i),
        'one trial per proposal, in order',
      );
      const early = seen.slice(0, 8).reduce((a, t) => a + t.choice[steps], 0) / 8;
      const late = seen.slice(-8).reduce((a, t) => a + t.choice[steps], 0) / 8;
      assert.ok(late > early, `${sampler}: env steps' option rose from ${early} to ${late}`);
    } finally {
      await agent.close();
    }
  }
});

test("a seeded study's first proposal is the task's baseline spec, told at its nearest point; the rest are the sampler's", { skip }, async () => {
  for (const sampler of ['tpe', 'cmaes'] as const) {
    const agent = new OptunaAgent({ sampler, seed: 1, seeded: true });
    try {
      assert.equal(agent.name, `optuna-${sampler}-seeded`);
      const rng = new Rng(3);
      const first = await agent.propose(brief, { rng, iteration: 0, history: [] });
      assert.deepEqual({ ...(first.spec as object), seed: baseline.seed }, baseline);
      const t = first.trace as OptunaTrace;
      assert.equal(t.baseline, true);
      assert.equal(t.trial, 0);
      const second = await agent.propose(brief, { rng, iteration: 0, history: [] });
      const t2 = second.trace as OptunaTrace;
      assert.equal(t2.baseline, undefined);
      assert.deepEqual(second.spec, decode(brief, buildHeads(brief), t2.choice, (second.spec as { seed: number }).seed));
      // An invalid or failed job is a failed trial; the study goes on.
      const stats = await agent.update([
        {
          brief,
          items: [
            { trace: t, reward: 0.1, status: 'succeeded' },
            { trace: t2, reward: -1, status: 'invalid' },
          ],
        },
      ]);
      assert.deepEqual(stats, { optunaTold: 2, optunaErrors: 0 });
      // The same update again (a resumed run repeats it) tells nothing twice.
      assert.deepEqual(await agent.update([{ brief, items: [{ trace: t, reward: 0.1, status: 'succeeded' }] }]), { optunaTold: 0, optunaErrors: 0 });
      // A new agent given the state replays the history to its own driver, and does not seed the study again.
      const again = new OptunaAgent({ sampler, seed: 1, seeded: true });
      try {
        await again.load(await agent.state());
        const p = await again.propose(brief, { rng, iteration: 1, history: [] });
        assert.equal((p.trace as OptunaTrace).baseline, undefined);
        assert.equal((p.trace as OptunaTrace).trial, 2, 'two trials told before it');
        assert.ok(validateSpec(p.spec, brief).ok);
      } finally {
        await again.close();
      }
    } finally {
      await agent.close();
    }
  }
});

/** A stand-in for Python that behaves badly in one way. */
function fakePython(body: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-optuna-fake-'));
  const file = join(dir, 'python');
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

test('a driver that cannot start, crashes, writes garbage or hangs fails the proposal in one line, and the agent gives up after a few starts', async () => {
  const cases: [string, string, RegExp][] = [
    ['missing', join(tmpdir(), 'no-such-python-here'), /cannot run .*no-such-python-here \(ENOENT\)/],
    ['garbage', fakePython('echo "hello there"; cat >/dev/null'), /not the protocol's: hello there/],
    ['crash', fakePython('echo \'{"ready": true}\'; read line; echo "Traceback: boom" >&2; exit 3'), /exited \(code 3\): Traceback: boom/],
    ['hang', fakePython('echo \'{"ready": true}\'; sleep 30'), /did not answer init within 1 s/],
    ['not ready', fakePython('echo \'{"ready": false, "error": "No module named optuna"}\''), /cannot start: No module named optuna/],
  ];
  for (const [what, python, pattern] of cases) {
    const agent = new OptunaAgent({ sampler: 'tpe', seed: 1, python, timeoutMs: 1000 });
    try {
      for (let i = 0; i < MAX_STARTS; i++) {
        await assert.rejects(agent.propose(brief, { rng: new Rng(1), iteration: 0, history: [] }), (err: Error) => {
          assert.match(err.message, pattern, what);
          assert.ok(!err.message.includes('\n'), 'one line');
          assert.match(err.message, /^optuna tpe: /);
          return true;
        });
      }
      await assert.rejects(
        agent.propose(brief, { rng: new Rng(1), iteration: 0, history: [] }),
        new RegExp(`gave up on the Optuna driver after ${MAX_STARTS} starts`),
      );
      // Telling a dead driver is counted, never thrown.
      assert.deepEqual(await agent.update([{ brief, items: [] }]), { optunaTold: 0, optunaErrors: 0 });
    } finally {
      await agent.close();
    }
  }
  const missing = optunaMissing(join(tmpdir(), 'no-such-python-here'));
  assert.match(missing ?? '', /cannot run .*; run python\/setup-venv.sh/);
});

test('in a run, a driver that hangs is a recorded failure of each proposal, never a crash or a hang of the run', async () => {
  const { trainAgent } = await import('../loop.js');
  const { LocalExecutor } = await import('../../run/local.js');
  const { Store } = await import('../../store/store.js');
  const dir = mkdtempSync(join(tmpdir(), 'rrl-optuna-run-'));
  const ex = new LocalExecutor({ workers: 2 });
  const agent = new OptunaAgent({ sampler: 'cmaes', seed: 1, python: fakePython('echo \'{"ready": true}\'; sleep 30'), timeoutMs: 500 });
  try {
    await trainAgent(dir, { tasks: ['iris-species'], agent: 'optuna-cmaes', iterations: 1, group: 2, seed: 1 }, ex, { agent, noiseFile: null });
    const store = new Store(dir);
    try {
      const jobs = store.jobs(store.getRun()!.id, { kind: 'proposal' });
      assert.equal(jobs.length, 2);
      for (const j of jobs) {
        assert.equal(j.status, 'invalid');
        assert.match(j.error ?? '', /optuna cmaes: the Optuna driver did not answer init within 1 s/);
      }
    } finally {
      store.close();
    }
  } finally {
    await agent.close();
    await ex.close();
  }
});
