import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runJob } from './train.js';
import { getPublicTask } from '../tasks/briefs.js';
import { ppoSpec } from '../tasks/control/define.js';
import { scoreArtifact } from '../outer/scoring/hidden-score.js';
import { arsSpec, fastPpoSpec } from '../testing/specs.js';

const { brief } = getPublicTask('cartpole-balance');
const tmp = mkdtempSync(join(tmpdir(), 'rrl-train-'));

test('ARS solves CartPole on the hidden evaluation from a fixed seed', async () => {
  const a = await runJob(arsSpec('cartpole-balance', 20_000), brief, { outDir: join(tmp, 'ars') });
  assert.ok(a.cost.envSteps <= 20_000);
  const s = scoreArtifact('cartpole-balance', a.dir);
  assert.ok(s.raw >= 475, `ARS hidden score ${s.raw}`);
});

test('PPO solves CartPole on the hidden evaluation from a fixed seed', async () => {
  const a = await runJob(fastPpoSpec('cartpole-balance'), brief, { outDir: join(tmp, 'ppo') });
  const s = scoreArtifact('cartpole-balance', a.dir);
  assert.ok(s.raw >= 475, `PPO hidden score ${s.raw}`);
  const curve = readFileSync(join(a.dir, 'curve.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  for (const m of ['charts/episodic_return', 'losses/policy_loss', 'losses/value_loss', 'losses/entropy', 'losses/approx_kl']) {
    assert.ok(
      curve.some((p) => p.name === m),
      `curve has ${m}`,
    );
  }
});

test('same spec and seed give the same weights; another seed does not', async () => {
  const spec = { ...fastPpoSpec('cartpole-balance'), budget: { envSteps: 2048, targetReturn: null } };
  const a = await runJob(spec, brief, { outDir: join(tmp, 'det-a') });
  const b = await runJob(spec, brief, { outDir: join(tmp, 'det-b') });
  const c = await runJob({ ...spec, seed: spec.seed + 1 }, brief, { outDir: join(tmp, 'det-c') });
  const w = (d: string) => readFileSync(join(d, 'policy.json'), 'utf8');
  assert.equal(w(a.dir), w(b.dir));
  assert.notEqual(w(a.dir), w(c.dir));
  const r1 = await runJob(arsSpec('cartpole-balance', 3000, 4), brief, { outDir: join(tmp, 'det-r1') });
  const r2 = await runJob(arsSpec('cartpole-balance', 3000, 4), brief, { outDir: join(tmp, 'det-r2') });
  assert.equal(w(r1.dir), w(r2.dir));
});

test('the engine counts env steps and stops at the budget', async () => {
  for (const envSteps of [1000, 1234]) {
    const a = await runJob(arsSpec('cartpole-balance', envSteps), brief, { outDir: join(tmp, `b-ars-${envSteps}`) });
    assert.ok(a.cost.envSteps <= envSteps && a.cost.envSteps > envSteps * 0.5, `ars used ${a.cost.envSteps} of ${envSteps}`);
    const p = await runJob({ ...fastPpoSpec('cartpole-balance'), budget: { envSteps, targetReturn: null } }, brief, { outDir: join(tmp, `b-ppo-${envSteps}`) });
    assert.ok(p.cost.envSteps <= envSteps, `ppo used ${p.cost.envSteps} of ${envSteps}`);
  }
  await assert.rejects(
    runJob(arsSpec('cartpole-balance', brief.budget.maxEnvSteps + 1), brief, { outDir: join(tmp, 'over') }),
    /budget\.envSteps: got 100001: exceeds the task's cap of 100000/,
  );
});

test('a target return stops training early and says so', async () => {
  const a = await runJob({ ...arsSpec('cartpole-balance', 50_000), budget: { envSteps: 50_000, targetReturn: 200 } }, brief, { outDir: join(tmp, 'target') });
  assert.equal(a.stopReason, 'target-return');
  assert.ok(a.cost.envSteps < 50_000);
});

test('a loss that overflows fails as NaN with the reason', async () => {
  const spec = fastPpoSpec('cartpole-balance');
  const bad = { ...spec, reward: { expression: 'r * 1000000^6' } };
  await assert.rejects(
    runJob(bad, brief, { outDir: join(tmp, 'nan') }),
    (e: Error) => e.name === 'NaNError' && /ppo loss became (NaN|Infinity) at update 1/.test(e.message),
  );
  const status = JSON.parse(readFileSync(join(tmp, 'nan', 'status.json'), 'utf8'));
  assert.equal(status.status, 'failed');
});

test('continuous-action PPO (Gaussian policy) learns Pendulum from a fixed seed', async () => {
  const { REFERENCE_SPECS } = await import('../tasks/reference-specs.js');
  const pend = getPublicTask('pendulum-swingup').brief;
  const a = await runJob(REFERENCE_SPECS['pendulum-swingup'].spec(), pend, { outDir: join(tmp, 'pendulum') });
  const s = scoreArtifact('pendulum-swingup', a.dir);
  assert.ok(s.normalized > 0.6, `Pendulum hidden return ${s.raw} (normalised ${s.normalized})`);
  const policy = JSON.parse(readFileSync(join(a.dir, 'policy.json'), 'utf8'));
  assert.deepEqual(policy.actionSpace, { type: 'box', low: [-2], high: [2] });
});

test("continuous-action PPO learns Pendulum from rl-baselines3-zoo's settings over many minibatches (its std follows the log std each step)", async () => {
  // rl-baselines3-zoo's Pendulum PPO (4 × 1024 steps, 10 epochs, 32 minibatches) moves the log std hundreds
  // of times per rollout: the std must follow every step, or the ratio mixes two policies and the score drops.
  const task = getPublicTask('pendulum-swingup');
  const zoo = ppoSpec('pendulum-swingup', {
    numEnvs: 4,
    rolloutSteps: 1024,
    epochs: 10,
    minibatches: 32,
    learningRate: 0.001,
    gamma: 0.9,
    gaeLambda: 0.95,
    entropyCoef: 0,
    envSteps: 50_000,
  });
  let sum = 0;
  for (const seed of [1, 2, 3]) {
    const a = await runJob({ ...zoo, seed }, task.brief, { outDir: join(tmp, `pendulum-zoo-${seed}`) });
    sum += scoreArtifact('pendulum-swingup', a.dir).normalized;
  }
  assert.ok(sum / 3 > 0.35, `mean normalised hidden score of the zoo settings over seeds 1-3: ${(sum / 3).toFixed(3)}`);
});

test('a hopeless job stops at half its budget when asked to (stopWhenFlat), from training returns only', async () => {
  const mc = getPublicTask('mountaincar-reach');
  const spec = { ...mc.baseline, budget: { envSteps: 20_000, targetReturn: null, stopWhenFlat: true } };
  const a = await runJob(spec, mc.brief, { outDir: join(tmp, 'flat') });
  assert.equal(a.stopReason, 'flat');
  assert.ok(a.cost.envSteps >= 10_000 && a.cost.envSteps < 20_000, `${a.cost.envSteps} env steps`);
  const notFlat = { ...arsSpec('cartpole-balance', 20_000), budget: { envSteps: 20_000, targetReturn: null, stopWhenFlat: true } };
  const ok = await runJob(notFlat, brief, { outDir: join(tmp, 'not-flat') });
  assert.notEqual(ok.stopReason, 'flat', 'a learning job is not stopped');
});
