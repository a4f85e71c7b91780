import test from 'node:test';
import assert from 'node:assert/strict';
import { compileExpression } from '../expr/expression.js';
import { RunningNorm } from '../normalize.js';
import { CartPoleEnv } from './cartpole.js';
import type { Env } from './types.js';
import { VecEnv } from './vector.js';
import { NormalizeObservation, ShapeReward, StepBudget, StepCapError, StepCounter, TrainingEnv } from './wrappers.js';

const NAMES = ['x', 'x_dot', 'theta', 'theta_dot', 'r', 't', 'done'];
const noLimits = { check: () => {} };

/** CartPole envs that count the steps their simulators take. */
function counted(): { make: () => Env; steps: () => number } {
  let n = 0;
  const make = (): Env => {
    const env = new CartPoleEnv();
    const step = env.step.bind(env);
    env.step = (a) => {
      n += 1;
      return step(a);
    };
    return env;
  };
  return { make, steps: () => n };
}

/** Alternating pushes, so episodes last a while. */
const actions = (num: number, s: number): Int32Array => Int32Array.from({ length: num }, (_, i) => (s + i) % 2);

test('StepBudget counts every env step and refuses the step that would pass the cap, before the simulators move', () => {
  const sims = counted();
  const counter = new StepCounter(10);
  const env = new StepBudget(new VecEnv(sims.make, 4, 1), counter, noLimits);
  env.step(actions(4, 0));
  env.step(actions(4, 1));
  assert.equal(env.used, 8);
  assert.equal(env.canStep(), false, '8 + 4 > 10');
  // An algorithm that asks for more anyway gets an error, and nothing is stepped or counted.
  assert.throws(
    () => env.step(actions(4, 2)),
    (e: Error) => e instanceof StepCapError && /refused a step of 4 env steps with 8 of the job's 10 already used/.test(e.message),
  );
  assert.equal(sims.steps(), 8);
  assert.equal(counter.used, 8);
});

test('every env a job builds draws on the same budget', () => {
  const counter = new StepCounter(5);
  const reward = compileExpression('r', NAMES);
  const a = new TrainingEnv(new VecEnv(() => new CartPoleEnv(), 2, 1), { counter, limits: noLimits, reward, normalize: false });
  const b = new TrainingEnv(new VecEnv(() => new CartPoleEnv(), 3, 2), { counter, limits: noLimits, reward, normalize: true });
  a.step(actions(2, 0));
  b.step(actions(3, 0));
  assert.equal(counter.used, 5);
  assert.equal(a.canStep(), false);
  assert.throws(() => a.step(actions(2, 1)), StepCapError);
  assert.throws(() => b.step(actions(3, 1)), StepCapError);
});

test('StepBudget checks the limits on every vector step, before stepping', () => {
  let checks = 0;
  const limits = {
    check: () => {
      checks += 1;
      if (checks === 3) throw new Error('past the cap');
    },
  };
  const sims = counted();
  const env = new StepBudget(new VecEnv(sims.make, 2, 1), new StepCounter(100), limits);
  env.step(actions(2, 0));
  env.step(actions(2, 1));
  assert.throws(() => env.step(actions(2, 0)), /past the cap/);
  assert.equal(checks, 3);
  assert.equal(sims.steps(), 4, 'the refused step never reached the simulators');
});

test('ShapeReward evaluates the expression on the final observation, r, t and done of every env', () => {
  const base = new VecEnv(() => new CartPoleEnv(), 3, 7);
  const env = new ShapeReward(base, compileExpression('r + 0.1 * (1 - abs(x) / 2.4) - 2 * done + t / 100', NAMES));
  for (let s = 0; s < 40; s++) {
    env.step(actions(3, s));
    for (let i = 0; i < 3; i++) {
      const x = base.nextObs[i * 4];
      const want = base.rewards[i] + 0.1 * (1 - Math.abs(x) / 2.4) - 2 * base.terminated[i] + base.episodeStep[i] / 100;
      assert.ok(Math.abs(env.rewards[i] - want) < 1e-12, `step ${s} env ${i}: ${env.rewards[i]} vs ${want}`);
    }
  }
  assert.equal(env.obs, base.obs, 'observations pass through raw');
});

test('a reward expression that turns non-finite raises NaNError naming the expression and the variables', () => {
  const env = new ShapeReward(new VecEnv(() => new CartPoleEnv(), 2, 3), compileExpression('r / (t - 1)', NAMES));
  assert.throws(
    () => env.step(actions(2, 0)),
    (e: Error) => e.name === 'NaNError' && /^reward\.expression "r \/ \(t - 1\)" gave Infinity at x=.*, r=1\.000, t=1\.000, done=0\.000$/.test(e.message),
  );
});

test('NormalizeObservation keeps the same statistics and normalised views as RunningNorm folded at every action', () => {
  const num = 3;
  const wrapped = new NormalizeObservation(new VecEnv(() => new CartPoleEnv(), num, 11));
  const raw = new VecEnv(() => new CartPoleEnv(), num, 11);
  const norm = new RunningNorm(4);
  const out = new Float64Array(num * 4);
  for (let s = 0; s < 300; s++) {
    const got = Array.from(wrapped.observe());
    norm.update(raw.obs, num);
    assert.deepEqual(got, Array.from(norm.apply(raw.obs, num, out)), `observe() at step ${s}`);
    assert.deepEqual(Array.from(wrapped.observe()), got, 'a second observe() in the same step folds nothing more');
    wrapped.step(actions(num, s));
    raw.step(actions(num, s));
    assert.deepEqual(Array.from(wrapped.finalObs()), Array.from(norm.apply(raw.nextObs, num, out)), 'finalObs() folds nothing');
    assert.deepEqual(Array.from(wrapped.currentObs()), Array.from(norm.apply(raw.obs, num, out)), 'currentObs() folds nothing');
  }
  assert.deepEqual(wrapped.freeze(), norm.freeze(), 'the frozen statistics (the policy file) are the same');
  const batch = Float32Array.from({ length: 8 }, (_, k) => k - 3);
  assert.deepEqual(wrapped.normalizeInPlace(Float32Array.from(batch), 2), norm.apply(batch, 2, new Float32Array(8)));
});

test('deferred NormalizeObservation folds every observed row as one batch at commit (ARS V2)', () => {
  const wrapped = new NormalizeObservation(new VecEnv(() => new CartPoleEnv(), 1, 5), true);
  const raw = new VecEnv(() => new CartPoleEnv(), 1, 5);
  const norm = new RunningNorm(4);
  const out = new Float64Array(4);
  for (let iteration = 0; iteration < 3; iteration++) {
    const states: number[] = [];
    for (let s = 0; s < 50; s++) {
      assert.deepEqual(Array.from(wrapped.observe()), Array.from(norm.apply(raw.obs, 1, out)), 'statistics stay fixed within an iteration');
      states.push(...raw.obs);
      wrapped.step([s % 2]);
      raw.step([s % 2]);
    }
    wrapped.commit();
    norm.update(states, states.length / 4);
    assert.deepEqual(wrapped.freeze(), norm.freeze());
  }
});

test('TrainingEnv without normalisation hands out the raw observations and no statistics', () => {
  const env = new TrainingEnv(new VecEnv(() => new CartPoleEnv(), 2, 1), {
    counter: new StepCounter(100),
    limits: noLimits,
    reward: compileExpression('r', NAMES),
    normalize: false,
  });
  const x = Float32Array.of(5, 6, 7, 8);
  assert.equal(env.observe(), env.obs);
  assert.equal(env.normalizeInPlace(x, 1)[0], 5);
  env.foldObservations(x, 1);
  assert.equal(env.obsNorm(), null);
});
