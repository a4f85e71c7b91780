import test from 'node:test';
import assert from 'node:assert/strict';
import { POINT_MASS_CONSTANTS, POINT_MASS_INFO, PointMassEnv, pointMassDefaults, pointMassDynamics, pointMassObservation } from './point-mass.js';
import { ENVIRONMENTS, getEnvironment } from './index.js';

/** One step written out independently: [next state, reward]. */
function referenceStep(s: readonly number[], u: readonly number[], p = { mass: 1, damping: 0.5, force: 1 }): [number[], number] {
  const next = [...s];
  let effort = 0;
  for (const k of [0, 1]) {
    const a = Math.max(-1, Math.min(1, u[k]));
    effort += a * a;
    const v = Math.max(-2, Math.min(2, s[2 + k] + 0.05 * ((a * p.force) / p.mass - p.damping * s[2 + k])));
    const x = s[k] + 0.05 * v;
    next[k] = Math.max(-1, Math.min(1, x));
    next[2 + k] = Math.abs(x) > 1 ? 0 : v;
  }
  return [next, -(Math.hypot(next[0] - s[4], next[1] - s[5]) + 0.05 * effort)];
}

test('PointMass-v0 is registered, with two continuous force dimensions and the target offset in its observation', () => {
  assert.equal(getEnvironment('PointMass-v0').info, POINT_MASS_INFO);
  assert.ok(ENVIRONMENTS['PointMass-v0'].make() instanceof PointMassEnv);
  assert.deepEqual(POINT_MASS_INFO.actionSpace, { type: 'box', shape: [2], low: [-1, -1], high: [1, 1] });
  assert.deepEqual(POINT_MASS_INFO.observationNames, ['x', 'y', 'x_dot', 'y_dot', 'dx', 'dy']);
  assert.deepEqual(pointMassDefaults(), { mass: 1, damping: 0.5, force: 1 });
  for (const p of POINT_MASS_INFO.params) assert.ok(p.min <= p.default && p.default < p.max, p.name);
  assert.deepEqual(Array.from(pointMassObservation([0.5, -0.25, 1, 0, -0.5, 0.5])), [0.5, -0.25, 1, 0, -1, 0.75]);
});

test('the dynamics match the equations: drag, clipped force, speed cap, walls; the reward is distance and effort after the step', () => {
  const out = new Float64Array(6);
  const states = [
    [0, 0, 0, 0, 0.5, 0.5],
    [0.3, -0.7, 1.2, -0.4, -0.9, 0.2],
    [0.99, -0.99, 1.9, -1.9, 0, 0], // into both walls
    [0, 0, 1.99, -1.99, 0.1, 0.1], // at the speed cap
  ];
  const params = [pointMassDefaults(), { mass: 2.5, damping: 1.2, force: 0.6 }];
  for (const s of states)
    for (const p of params)
      for (const u of [
        [0, 0],
        [1, -1],
        [0.3, 0.8],
        [5, -7],
      ]) {
        const reward = pointMassDynamics(s, u, p, out);
        const [ref, refReward] = referenceStep(s, u, p as never);
        for (let i = 0; i < 6; i++) assert.ok(Math.abs(out[i] - ref[i]) < 1e-12, `${JSON.stringify({ s, u, p })}[${i}]: ${out[i]} vs ${ref[i]}`);
        assert.ok(Math.abs(reward - refReward) < 1e-12);
      }
  // At the target, at rest, with no force: reward 0 and nothing moves.
  assert.equal(pointMassDynamics([0.2, 0.2, 0, 0, 0.2, 0.2], [0, 0], pointMassDefaults(), out), -0);
  assert.deepEqual(Array.from(out), [0.2, 0.2, 0, 0, 0.2, 0.2]);
  // A wall stops the motion across it.
  pointMassDynamics([0.999, 0, 2, 0, 0, 0], [1, 0], pointMassDefaults(), out);
  assert.equal(out[0], 1);
  assert.equal(out[2], 0);
});

test('reset: puck at rest and target inside ±0.9, seeded; episodes last 200 steps and never end early; bad actions throw', () => {
  const env = new PointMassEnv();
  const a = env.reset({ seed: 5 }).obs;
  const b = new PointMassEnv().reset({ seed: 5 }).obs;
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, new PointMassEnv().reset({ seed: 6 }).obs);
  const r = POINT_MASS_CONSTANTS.resetRange;
  for (let seed = 0; seed < 50; seed++) {
    const o = new PointMassEnv().reset({ seed }).obs;
    assert.ok(Math.abs(o[0]) <= r && Math.abs(o[1]) <= r && o[2] === 0 && o[3] === 0);
    assert.ok(Math.abs(o[0] + o[4]) <= r && Math.abs(o[1] + o[5]) <= r, 'the target inside the reset range');
  }
  env.reset({ seed: 1, params: { mass: 2 } });
  let steps = 0;
  let last = env.step([0.5, -0.5]);
  steps += 1;
  while (!last.truncated) {
    assert.equal(last.terminated, false);
    last = env.step([0.5, -0.5]);
    steps += 1;
  }
  assert.equal(steps, 200);
  assert.throws(() => env.step([0, 0]), /after the episode ended/);
  env.reset();
  assert.throws(() => env.step(1), /two-element array/);
  assert.throws(() => env.step([1]), /two-element array/);
  assert.throws(() => env.step([0, Number.NaN]), /numbers/);
});
