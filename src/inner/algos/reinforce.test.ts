import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { controlContext, runJob } from '../train.js';
import { getPublicTask } from '../../tasks/briefs.js';
import { scoreArtifact } from '../../outer/scoring/hidden-score.js';
import { type JobSpecInput, JobSpecSchema } from '../../spec/schema.js';
import { Rng } from '../../util/rng.js';
import type { TrainContext } from '../context.js';
import { getEnvironment } from '../envs/index.js';
import type { Env, EnvInfo } from '../envs/types.js';
import { PolicyRunner } from '../policy.js';
import { trainReinforce } from './reinforce.js';

const task = getPublicTask('cartpole-balance');
// The brief may not list reinforce yet; the engine is tested here, not the task's menu.
const brief = task.brief.algorithms.includes('reinforce') ? task.brief : { ...task.brief, algorithms: [...task.brief.algorithms, 'reinforce' as const] };
const tmp = mkdtempSync(join(tmpdir(), 'rrl-reinforce-'));

/** A REINFORCE spec that solves CartPole here: 4 envs, 8 episodes per update, normalised observations. */
function reinforceSpec(envSteps = 100_000, seed = 1): JobSpecInput {
  return {
    task: 'cartpole-balance',
    environment: { params: {}, wrappers: ['normalize-observation'], numEnvs: 4 },
    reward: { expression: 'r' },
    dataset: { demonstrations: null },
    model: { hidden: [64, 64], activation: 'tanh' },
    algorithm: {
      name: 'reinforce',
      learningRate: 2e-3,
      valueLearningRate: 1e-3,
      gamma: 0.99,
      episodesPerUpdate: 8,
      entropyCoef: 0,
      normalizeAdvantages: true,
    },
    budget: { envSteps, targetReturn: null },
    seed,
  };
}

const readCurve = (dir: string): { name: string; step: number; value: number }[] =>
  readFileSync(join(dir, 'curve.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

test('REINFORCE learns CartPole on the hidden evaluation from a fixed seed', async () => {
  const a = await runJob(reinforceSpec(), brief, { outDir: join(tmp, 'learn') });
  assert.ok(a.cost.envSteps <= 100_000);
  const s = scoreArtifact('cartpole-balance', a.dir);
  assert.ok(s.raw >= 475, `REINFORCE hidden score ${s.raw} after ${a.cost.envSteps} env steps`);
  const curve = readCurve(a.dir);
  for (const m of ['charts/episodic_return', 'losses/policy_loss', 'losses/value_loss', 'losses/entropy']) {
    assert.ok(
      curve.some((p) => p.name === m),
      `curve has ${m}`,
    );
  }
});

test('same spec and seed give the same policy; another seed does not', async () => {
  const spec = reinforceSpec(4000);
  const a = await runJob(spec, brief, { outDir: join(tmp, 'det-a') });
  const b = await runJob(spec, brief, { outDir: join(tmp, 'det-b') });
  const c = await runJob({ ...spec, seed: 2 }, brief, { outDir: join(tmp, 'det-c') });
  assert.ok(a.updates > 1);
  const w = (d: string) => readFileSync(join(d, 'policy.json'), 'utf8');
  assert.equal(w(a.dir), w(b.dir));
  assert.notEqual(w(a.dir), w(c.dir));
});

test('REINFORCE never takes more env steps than the budget and stops at a target return', async () => {
  for (const [envSteps, numEnvs] of [
    [1000, 1],
    [1234, 3],
    [50, 8],
  ]) {
    const spec = { ...reinforceSpec(envSteps), environment: { params: {}, wrappers: [], numEnvs } };
    const a = await runJob(spec, brief, { outDir: join(tmp, `budget-${envSteps}-${numEnvs}`) });
    assert.ok(a.cost.envSteps <= envSteps && a.cost.envSteps > envSteps - numEnvs, `reinforce used ${a.cost.envSteps} of ${envSteps} with ${numEnvs} envs`);
    assert.equal(a.stopReason, 'budget');
  }
  const t = await runJob({ ...reinforceSpec(100_000), budget: { envSteps: 100_000, targetReturn: 100 } }, brief, { outDir: join(tmp, 'target') });
  assert.equal(t.stopReason, 'target-return');
  assert.ok(t.cost.envSteps < 100_000);
});

test('a loss that overflows fails as NaN, naming the update', async () => {
  const spec = { ...reinforceSpec(3000), reward: { expression: 'r * 1000000^7' } };
  await assert.rejects(
    runJob(spec, brief, { outDir: join(tmp, 'nan') }),
    (e: Error) => e.name === 'NaNError' && /reinforce (value )?loss became (NaN|Infinity) at update 1\b/.test(e.message),
  );
  assert.equal(JSON.parse(readFileSync(join(tmp, 'nan', 'status.json'), 'utf8')).status, 'failed');
});

/** One-step episodes with a constant observation; action 1 pays 1, action 0 pays 0. */
function bandit(): { info: EnvInfo; make: () => Env } {
  const info: EnvInfo = {
    id: 'Bandit',
    description: 'test env',
    observationNames: ['k'],
    observationSpace: { type: 'box', shape: [1], low: [0], high: [1] },
    actionSpace: { type: 'discrete', n: 2 },
    maxEpisodeSteps: 1,
    params: [],
  };
  const make = (): Env => ({
    info,
    reset: () => ({ obs: Float64Array.of(1), info: {} }),
    step: (a) => ({ obs: Float64Array.of(1), reward: a === 1 ? 1 : 0, terminated: true, truncated: false, info: {} }),
  });
  return { info, make };
}

function context(env: { info: EnvInfo; make: () => Env }, maxEnvSteps: number): TrainContext {
  const spec = JobSpecSchema.parse({
    ...reinforceSpec(maxEnvSteps),
    task: 'unit',
    environment: { numEnvs: 2 },
    model: { hidden: [8], activation: 'tanh' },
    algorithm: { ...(reinforceSpec().algorithm as object), learningRate: 0.05, episodesPerUpdate: 16 },
  });
  const limits = { check: () => {} };
  const { ctx } = controlContext(spec, brief, { env, maxEnvSteps, limits, rewardVariables: [...env.info.observationNames, 'r', 't', 'done'] });
  ctx.rng = new Rng(5);
  return ctx;
}

test('the policy gradient moves probability toward the better action', async () => {
  const ctx = context(bandit(), 1600);
  const r = await trainReinforce(ctx, ctx.spec.algorithm as never);
  assert.equal(r.updates, 100);
  assert.equal(new PolicyRunner(r.policy).act([1], 1)[0], 1);
});

test('REINFORCE refuses continuous action spaces with a clear error', async () => {
  const ctx = context(getEnvironment('Pendulum-v1'), 1000);
  await assert.rejects(trainReinforce(ctx, ctx.spec.algorithm as never), /reinforce needs a discrete action space; Pendulum-v1 has box/);
});
