import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runJob } from '../../inner/train.js';
import { validateSpec } from '../../inner/spec-check.js';
import { scoreArtifact } from '../../outer/scoring/hidden-score.js';
import { Scorer } from '../../outer/scoring/scorer-pool.js';
import { LocalExecutor } from '../../run/local.js';
import { getPublicTask } from '../briefs.js';
import { getHiddenEvaluation } from '../hidden.js';
import { useEvalSecret } from '../secret.js';
import { skipWithoutPython } from '../../testing/python.js';
import { type GymnasiumTaskOptions, gymnasiumBrief, gymnasiumTask } from './define.js';
import { gymnasiumEvaluation, gymnasiumEvaluationSettings } from './evaluate.js';

process.env.RRL_EVAL_SECRET = 'gymnasium-test-secret';
const tmp = mkdtempSync(join(tmpdir(), 'rrl-gymnasium-'));
const skip = skipWithoutPython('the Gymnasium task tests that step the bridge');
const skipTorch = skipWithoutPython('the PyTorch PPO trainer test on MuJoCo', ['gymnasium', 'mujoco', 'torch']);
const minimal: GymnasiumTaskOptions = {
  id: 'my-pendulum',
  envId: 'Pendulum-v1',
  obsDim: 3,
  actionSpace: { type: 'box', low: [-2], high: [2] },
  maxEpisodeSteps: 200,
  anchors: { reference: -150 },
};

test('gymnasiumTask fills the defaults: a valid PPO baseline, the brief declares the environment as data, no held-out numbers', () => {
  const def = gymnasiumTask(minimal);
  const brief = gymnasiumBrief(def);
  assert.equal(brief.environment.id, 'gymnasium:Pendulum-v1');
  assert.deepEqual(brief.environment.gymnasium, {
    id: 'Pendulum-v1',
    kwargs: {},
    obsDim: 3,
    actionSpace: { type: 'box', low: [-2], high: [2] },
    maxEpisodeSteps: 200,
  });
  assert.deepEqual(brief.algorithms, ['ppo']);
  assert.deepEqual(
    brief.rewardVariables.map((v) => v.name),
    ['obs_0', 'obs_1', 'obs_2', 'r', 't', 'done'],
  );
  const r = validateSpec(def.baseline, brief);
  assert.ok(r.ok, r.ok ? '' : r.error.message);
  assert.doesNotMatch(JSON.stringify(brief), /heldOut|seed|random:/);
  assert.equal(
    Object.keys(def).some((k) => /hidden|anchor|seed/i.test(k)),
    false,
    'the public definition carries no evaluation settings',
  );
  // Only the evaluation's size is public (issue 42: validation prices the scoring with it).
  assert.equal(def.evaluationEpisodes, 20);
  assert.deepEqual(brief.evaluation, { episodes: 20 });
  const how = "reference: the task's reference return (-150)";
  assert.deepEqual(gymnasiumEvaluationSettings(minimal), { reference: -150, random: undefined, how });
  const threshold = { ...minimal, anchors: undefined, rewardThreshold: 475 };
  assert.match(gymnasiumTask(threshold).metric, /and 475 scores 1$/);
  assert.equal(gymnasiumEvaluationSettings(threshold).reference, 475);
});

test('gymnasiumTask: bad options are one line naming the field', () => {
  const cases: [Partial<GymnasiumTaskOptions>, RegExp][] = [
    [{ id: '../etc' }, /^gymnasium task: id: /],
    [{ envId: 'CartPole v1; rm' }, /^gymnasium task: envId: /],
    [{ obsDim: 0 }, /^gymnasium task: obsDim: /],
    [{ actionSpace: { type: 'box', low: [-Infinity], high: [1] } }, /^gymnasium task: actionSpace: finite bounds/],
    [{ actionSpace: { type: 'discrete', n: 1 } }, /^gymnasium task: actionSpace\.n: /],
    [{ anchors: undefined }, /^gymnasium task: anchors\.reference: needed/],
    [{ anchors: { reference: -150, random: -100 } }, /^gymnasium task: anchors\.random: /],
    [{ observation: [{ name: 'a', description: '' }] }, /^gymnasium task: observation: 1 names for 3/],
    [{ observation: ['x', 'r', 'y'].map((name) => ({ name, description: '' })) }, /^gymnasium task: observation: "r" is not a variable name/],
    [{ episodes: 1 }, /^gymnasium task: episodes: /],
    [{ maxEpisodeSteps: 0 }, /^gymnasium task: maxEpisodeSteps: /],
    [
      { envId: 'mypkg.envs:MyEnv-v0' },
      /^gymnasium task: envId: "mypkg\.envs:MyEnv-v0" names a module to import \(mypkg\.envs\); set allowImport to true to allow it$/,
    ],
  ];
  for (const [patch, want] of cases)
    assert.throws(
      () => gymnasiumTask({ ...minimal, ...patch }),
      (e: Error) => want.test(e.message) && !e.message.includes('\n'),
      JSON.stringify(patch),
    );
  const opted = gymnasiumTask({ ...minimal, envId: 'mypkg.envs:MyEnv-v0', allowImport: true });
  assert.equal(gymnasiumBrief(opted).environment?.gymnasium?.allowImport, true, 'the opt-in travels with the brief to the bridge');
  assert.equal(gymnasiumBrief(gymnasiumTask(minimal)).environment?.gymnasium?.allowImport, undefined);
});

test('PPO trains on Gymnasium CartPole-v1 through the bridge in a job worker, within its budget, and the scorer thread scores it above random on held-out episodes', {
  skip,
}, async () => {
  const { brief, baseline } = getPublicTask('gym-cartpole');
  const spec = { ...structuredClone(baseline), budget: { envSteps: 12_288, targetReturn: null } };
  const executor = new LocalExecutor({ workers: 1 });
  const scorer = new Scorer({ workers: 1 });
  try {
    const dir = join(tmp, 'ppo');
    const r = await executor.execute({ spec, brief, outDir: dir });
    assert.equal(r.status, 'succeeded', r.status === 'failed' ? r.error : '');
    if (r.status !== 'succeeded') return;
    assert.equal(r.artifact.cost.envSteps, 12_288, 'the engine counted every env step of the bridge');
    const returns = r.curve.filter((p) => p.name === 'charts/episodic_return');
    assert.ok(returns.length > 50 && returns.every((p) => p.value >= 8 && p.value <= 500));
    const s = await scorer.score('gym-cartpole', dir);
    assert.ok(s.ok, s.ok ? '' : s.error);
    if (!s.ok) return;
    const a = getHiddenEvaluation('gym-cartpole').anchors();
    assert.ok(a.random > 8 && a.random < 50, `a random policy balances ${a.random} steps`);
    assert.ok(s.score.stderr !== null && s.score.normalized > 2 * s.score.stderr + 0.1, `learned: ${JSON.stringify(s.score)}`);
    assert.ok(s.score.raw > 100, `hidden mean return ${s.score.raw}`);
  } finally {
    await executor.close();
    await scorer.close();
  }
});

test('the hidden evaluation plays one episode per held-out seed: another secret, other episodes', { skip }, () => {
  const options = { ...minimal, id: 'secret-pendulum', episodes: 4 };
  const h = gymnasiumEvaluation(gymnasiumTask(options), gymnasiumEvaluationSettings(options));
  useEvalSecret('first secret');
  const a = h.anchors();
  assert.equal(h.anchors(), a, 'cached per secret');
  useEvalSecret('second secret');
  const b = h.anchors();
  assert.notEqual(a.random, b.random);
  assert.ok(a.random < -150 && b.random < -150, `a random pendulum does worse than the reference: ${a.random}, ${b.random}`);
  useEvalSecret('gymnasium-test-secret');
});

test('the PyTorch PPO command trainer trains InvertedPendulum-v5 (MuJoCo) and the harness scores its policy.json through the bridge', {
  skip: skipTorch,
}, async () => {
  const { brief, baseline } = getPublicTask('inverted-pendulum-torch');
  const spec = { ...structuredClone(baseline), environment: { ...baseline.environment, numEnvs: 2 }, budget: { envSteps: 512, targetReturn: null } };
  (spec.algorithm as { rolloutSteps: number }).rolloutSteps = 128;
  const dir = join(tmp, 'torch');
  const a = await runJob(spec, brief, { outDir: dir });
  assert.equal(a.backend, 'command');
  assert.equal(a.cost.envSteps, 512);
  assert.match(JSON.parse(readFileSync(join(dir, 'status.json'), 'utf8')).backend as string, /^command|torch/);
  const s = scoreArtifact('inverted-pendulum-torch', dir);
  assert.ok(Number.isFinite(s.raw) && s.raw >= 1 && s.raw <= 1000, JSON.stringify(s));
  const bad = {
    ...structuredClone(baseline),
    algorithm: { ...baseline.algorithm, learningRate: 0.01 },
    environment: { ...baseline.environment, numEnvs: 100 },
  };
  await assert.rejects(runJob(bad, brief, { outDir: join(tmp, 'bad') }), /environment\.numEnvs/);
});

test('continuous actions (PPO on Pendulum-v1) and the other algorithms (ARS, DQN, REINFORCE on CartPole-v1) train through the bridge unchanged', {
  skip,
}, async () => {
  const def = gymnasiumTask({ ...minimal, id: 'bridge-pendulum', caps: { maxEnvSteps: 1_024, maxWallSeconds: 120 } });
  const brief = gymnasiumBrief(def);
  const dir = join(tmp, 'pendulum');
  const a = await runJob(
    {
      ...structuredClone(def.baseline),
      environment: { params: {}, wrappers: ['normalize-observation'], numEnvs: 2 },
      algorithm: { ...def.baseline.algorithm, rolloutSteps: 128 },
    },
    brief,
    { outDir: dir },
  );
  assert.equal(a.cost.envSteps, 1_024);
  const policy = JSON.parse(readFileSync(join(dir, 'policy.json'), 'utf8'));
  assert.deepEqual(policy.actionSpace, { type: 'box', low: [-2], high: [2] });
  const s = gymnasiumEvaluation(def, gymnasiumEvaluationSettings(minimal)).score(policy);
  assert.ok(s.raw < 0 && s.raw > -2000 && s.stderr !== null, JSON.stringify(s));
  const cart = getPublicTask('gym-cartpole').brief;
  const specs: Record<string, unknown> = {
    ars: { name: 'ars', stepSize: 0.02, directions: 4, topDirections: 2, noise: 0.03 },
    dqn: {
      name: 'dqn',
      learningRate: 0.001,
      gamma: 0.99,
      bufferSize: 1000,
      batchSize: 32,
      learningStarts: 200,
      trainFrequency: 4,
      targetUpdateInterval: 100,
      explorationInitial: 1,
      explorationFinal: 0.05,
      explorationFraction: 0.5,
    },
    reinforce: { name: 'reinforce', learningRate: 0.001, gamma: 0.99, episodesPerUpdate: 4, entropyCoef: 0.01 },
  };
  for (const [name, algorithm] of Object.entries(specs)) {
    const spec = {
      task: 'gym-cartpole',
      environment: { params: {}, wrappers: [], numEnvs: 2 },
      reward: { expression: 'r + 0.1 * (1 - abs(x) / 2.4)' },
      model: { hidden: [16], activation: 'tanh' },
      algorithm,
      budget: { envSteps: 1_000 },
      seed: 2,
    };
    const r = await runJob(spec, cart, { outDir: join(tmp, name) });
    assert.ok(r.cost.envSteps > 0 && r.cost.envSteps <= 1_000, `${name}: ${r.cost.envSteps}`);
  }
});
