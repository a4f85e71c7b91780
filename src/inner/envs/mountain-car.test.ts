import test from 'node:test';
import assert from 'node:assert/strict';
import { MOUNTAIN_CAR_CONSTANTS, MOUNTAIN_CAR_INFO, MountainCarEnv, mountainCarDefaults, mountainCarDynamics } from './mountain-car.js';
import { ENVIRONMENTS, getEnvironment } from './index.js';
import { VecEnv } from './vector.js';

/** Gymnasium's MountainCar-v0 step, written out independently. Returns [next state, goal reached]. */
function referenceStep(s: readonly number[], action: 0 | 1 | 2, force = 0.001, gravity = 0.0025): [number[], boolean] {
  let v = s[1] + ((action - 1) * force - gravity * Math.cos(3 * s[0]));
  if (v > 0.07) v = 0.07;
  if (v < -0.07) v = -0.07;
  let p = s[0] + v;
  if (p > 0.6) p = 0.6;
  if (p < -1.2) p = -1.2;
  if (p === -1.2 && v < 0) v = 0;
  return [[p, v], p >= 0.5 && v >= 0];
}

function assertClose(actual: ArrayLike<number>, expected: readonly number[], tol: number, what: string): void {
  assert.equal(actual.length, expected.length, what);
  for (let i = 0; i < expected.length; i++) {
    assert.ok(Math.abs(actual[i] - expected[i]) <= tol, `${what}[${i}]: got ${actual[i]}, expected ${expected[i]}`);
  }
}

const STATES: number[][] = [
  [-0.5, 0],
  [-0.523, 0.0012],
  [0.3, 0.05],
  [-1.0, -0.04],
  [0.1, -0.069],
  [-0.2, 0.0699],
  [0.45, 0.06],
];

/** Accelerate in the direction of motion (right when at rest): builds momentum and reaches the flag. */
const pushWithVelocity = (o: ArrayLike<number>): 0 | 2 => (o[1] >= 0 ? 2 : 0);

/** Runs one episode from `seed` with `policy`, returning the number of steps and the flags of the last step. */
function rollout(
  env: MountainCarEnv,
  seed: number,
  policy: (o: Float64Array) => 0 | 1 | 2,
): { steps: number; ret: number; terminated: boolean; truncated: boolean; last: Float64Array } {
  let { obs } = env.reset({ seed });
  let ret = 0;
  for (let n = 1; n <= 1000; n++) {
    const r = env.step(policy(obs));
    ret += r.reward;
    obs = r.obs;
    if (r.terminated || r.truncated) return { steps: n, ret, terminated: r.terminated, truncated: r.truncated, last: obs };
  }
  throw new Error('episode did not end');
}

test('constants and defaults match Gymnasium MountainCar-v0', () => {
  assert.deepEqual(
    { ...MOUNTAIN_CAR_CONSTANTS },
    {
      minPosition: -1.2,
      maxPosition: 0.6,
      maxSpeed: 0.07,
      goalPosition: 0.5,
      goalVelocity: 0,
      resetLow: -0.6,
      resetHigh: -0.4,
    },
  );
  assert.deepEqual(mountainCarDefaults(), { force: 0.001, gravity: 0.0025 });
  assert.equal(MOUNTAIN_CAR_INFO.id, 'MountainCar-v0');
  assert.equal(MOUNTAIN_CAR_INFO.maxEpisodeSteps, 200);
  assert.deepEqual(MOUNTAIN_CAR_INFO.actionSpace, { type: 'discrete', n: 3 });
  assert.deepEqual(MOUNTAIN_CAR_INFO.observationNames, ['position', 'velocity']);
  for (const p of MOUNTAIN_CAR_INFO.params) assert.ok(p.min < p.default && p.default < p.max, p.name);
  assert.equal(getEnvironment('MountainCar-v0').info, MOUNTAIN_CAR_INFO);
  assert.ok(ENVIRONMENTS['MountainCar-v0'].make() instanceof MountainCarEnv);
});

test('mountainCarDynamics matches the reference equations for several states and every action', () => {
  const out = new Float64Array(2);
  for (const s of STATES) {
    for (const a of [0, 1, 2] as const) {
      const done = mountainCarDynamics(s, a, mountainCarDefaults(), out);
      const [ref, refDone] = referenceStep(s, a);
      assertClose(out, ref, 1e-12, `state ${JSON.stringify(s)} action ${a}`);
      assert.equal(done, refDone, `done for state ${JSON.stringify(s)} action ${a}`);
    }
  }
});

test('a hand-computed step from the valley floor', () => {
  // at p = -pi/6, cos(3p) = cos(-pi/2) = 0: only the engine acts
  const p0 = -Math.PI / 6;
  const out = new Float64Array(2);
  mountainCarDynamics([p0, 0], 2, mountainCarDefaults(), out);
  assertClose(out, [p0 + 0.001, 0.001], 1e-15, 'push right');
  mountainCarDynamics([p0, 0], 0, mountainCarDefaults(), out);
  assertClose(out, [p0 - 0.001, -0.001], 1e-15, 'push left');
  mountainCarDynamics([p0, 0], 1, mountainCarDefaults(), out);
  assertClose(out, [p0, 0], 1e-15, 'coast');
  // at p = 0 the slope pulls left with the full gravity term
  mountainCarDynamics([0, 0], 1, mountainCarDefaults(), out);
  assertClose(out, [-0.0025, -0.0025], 1e-15, 'gravity at p = 0');
});

test('velocity is clipped to +-0.07 and position to [-1.2, 0.6]', () => {
  const out = new Float64Array(2);
  mountainCarDynamics([-0.5, 0.0695], 2, mountainCarDefaults(), out);
  assert.equal(out[1], 0.07);
  mountainCarDynamics([-0.5, -0.0695], 0, mountainCarDefaults(), out);
  assert.equal(out[1], -0.07);
  mountainCarDynamics([0.59, 0.06], 2, mountainCarDefaults(), out);
  assert.equal(out[0], 0.6);
});

test('hitting the left wall stops the car', () => {
  const out = new Float64Array(2);
  for (const a of [0, 1, 2] as const) {
    assert.equal(mountainCarDynamics([-1.19, -0.05], a, mountainCarDefaults(), out), false);
    assert.deepEqual(Array.from(out), [-1.2, 0], `action ${a}`);
  }
  // at the wall, gravity (the slope rises to the left there) is stronger than the engine: it rolls back right
  for (const a of [0, 1] as const) {
    mountainCarDynamics([-1.2, 0], a, mountainCarDefaults(), out);
    assert.ok(out[0] > -1.2 && out[1] > 0, `leaves the wall with action ${a}: ${out}`);
  }
  // through the env: pushing left only while rolling left pumps energy until the car bumps into the wall;
  // every bump zeroes the velocity, and the car rolls out again
  const env = new MountainCarEnv();
  let { obs } = env.reset({ seed: 4 });
  let hits = 0;
  for (let n = 0; n < 200; n++) {
    const r = env.step(obs[1] < 0 ? 0 : 1);
    if (r.obs[0] === -1.2) {
      hits++;
      assert.equal(r.obs[1], 0, `velocity at the wall (step ${n})`);
      assert.ok(obs[1] < 0, 'it was moving left before the bump');
    }
    obs = r.obs;
  }
  assert.ok(hits > 0, 'the car should reach the wall');
});

test('the goal needs position >= 0.5 and velocity >= 0', () => {
  const out = new Float64Array(2);
  assert.equal(mountainCarDynamics([0.49, 0.02], 1, mountainCarDefaults(), out), true);
  assert.ok(out[0] >= 0.5 && out[1] >= 0);
  assert.equal(mountainCarDynamics([0.45, 0.0], 1, mountainCarDefaults(), out), false);
  // past the flag but rolling back: not a goal
  assert.equal(mountainCarDynamics([0.55, -0.01], 1, mountainCarDefaults(), out), false);
  assert.ok(out[0] >= 0.5 && out[1] < 0, `state ${out}`);
  // exactly at the flag with zero velocity counts (>=)
  const p = { force: 0.001, gravity: 0 };
  assert.equal(mountainCarDynamics([0.5, 0], 1, p, out), true);
  assert.deepEqual(Array.from(out), [0.5, 0]);
});

test('MountainCarEnv.step follows the reference along a trajectory', () => {
  const env = new MountainCarEnv();
  const { obs } = env.reset({ seed: 11 });
  let ref = Array.from(obs);
  const actions = [2, 2, 0, 1, 0, 0, 2, 1, 2, 0, 0, 0, 2] as const;
  for (const a of actions) {
    const r = env.step(a);
    ref = referenceStep(ref, a)[0];
    assertClose(r.obs, ref, 1e-12, `after action ${a}`);
    assert.equal(r.reward, -1);
  }
});

test('pushing in the direction of velocity reaches the goal in under 200 steps', () => {
  const env = new MountainCarEnv();
  for (let seed = 0; seed < 10; seed++) {
    const { steps, ret, terminated, truncated, last } = rollout(env, seed, pushWithVelocity);
    assert.ok(terminated && !truncated, `seed ${seed}: terminated ${terminated} truncated ${truncated}`);
    assert.ok(steps < 200, `seed ${seed}: ${steps} steps`);
    assert.equal(ret, -steps);
    assert.ok(last[0] >= 0.5 && last[1] >= 0, `seed ${seed}: goal state ${last}`);
    assert.throws(() => env.step(1), /after the episode ended/);
  }
});

test('not pushing never reaches the goal: truncated at exactly 200 with return -200', () => {
  const env = new MountainCarEnv();
  for (let seed = 0; seed < 5; seed++) {
    env.reset({ seed });
    for (let n = 1; n <= 200; n++) {
      const r = env.step(1);
      assert.equal(r.terminated, false, `seed ${seed} terminated at ${n}`);
      assert.equal(r.truncated, n === 200, `seed ${seed} truncated flag at ${n}`);
      assert.ok(r.obs[0] < 0.5);
    }
    assert.throws(() => env.step(1), /reset/);
  }
  assert.deepEqual(rollout(env, 3, () => 1).ret, -200);
});

test('reset draws position uniformly in [-0.6, -0.4] with zero velocity', () => {
  const env = new MountainCarEnv();
  let lo = Infinity;
  let hi = -Infinity;
  for (let seed = 0; seed < 200; seed++) {
    const { obs } = env.reset({ seed });
    assert.equal(obs.length, 2);
    assert.ok(obs[0] >= -0.6 && obs[0] <= -0.4, `seed ${seed}: ${obs[0]}`);
    assert.equal(obs[1], 0);
    lo = Math.min(lo, obs[0]);
    hi = Math.max(hi, obs[0]);
  }
  assert.ok(lo < -0.59 && hi > -0.41, `range seen [${lo}, ${hi}]`);
});

test('same seed gives the same reset; different seeds differ; an unseeded reset continues the stream', () => {
  const a = new MountainCarEnv();
  const b = new MountainCarEnv();
  assert.deepEqual(a.reset({ seed: 42 }).obs, b.reset({ seed: 42 }).obs);
  assert.notDeepEqual(a.reset({ seed: 42 }).obs, a.reset({ seed: 43 }).obs);
  const first = a.reset({ seed: 7 }).obs;
  const second = a.reset().obs;
  b.reset({ seed: 7 });
  assert.deepEqual(b.reset().obs, second);
  assert.notDeepEqual(first, second);
});

test('params: reported in info, used by the dynamics, not leaking into the next reset', () => {
  const env = new MountainCarEnv();
  const r = env.reset({ seed: 1, params: { force: 0.002, gravity: 0.002 } });
  assert.deepEqual(r.info.params, { force: 0.002, gravity: 0.002 });
  const next = env.step(2).obs;
  assertClose(next, referenceStep(Array.from(r.obs), 2, 0.002, 0.002)[0], 1e-12, 'env with params');
  assert.deepEqual(env.reset({ seed: 1 }).info.params, mountainCarDefaults());
  // a strong engine climbs straight up the right hill
  const strong = rollout(env, 1, () => 2);
  assert.equal(strong.truncated, true, 'default engine cannot climb directly');
  const env2 = new MountainCarEnv();
  env2.reset({ seed: 1, params: { force: 0.004 } });
  let n = 0;
  let done = false;
  while (!done) {
    done = env2.step(2).terminated;
    n++;
    assert.ok(n < 200);
  }
});

test('invalid actions throw a RangeError and do not advance the episode; stepping before reset throws', () => {
  assert.throws(() => new MountainCarEnv().step(1), /reset/);
  const env = new MountainCarEnv();
  env.reset({ seed: 1 });
  for (const bad of [3, -1, 1.5, NaN]) {
    assert.throws(
      () => env.step(bad),
      (e: unknown) => e instanceof RangeError && e.message.includes(String(bad)),
      `action ${bad}`,
    );
  }
  assert.throws(() => env.step([7]), RangeError);
  assert.throws(() => env.step([1, 1]), RangeError);
  let steps = 0;
  for (;;) {
    steps++;
    if (env.step([1]).truncated) break;
  }
  assert.equal(steps, 200);
});

test('returned observations are fresh arrays', () => {
  const env = new MountainCarEnv();
  const o0 = env.reset({ seed: 2 }).obs;
  const o1 = env.step(2).obs;
  o0.fill(9);
  o1.fill(9);
  const ref = new MountainCarEnv();
  ref.reset({ seed: 2 });
  ref.step(2);
  assert.deepEqual(env.step(2).obs, ref.step(2).obs);
});

test('VecEnv runs MountainCar: goal and truncation episodes, autoreset, deterministic per seed', () => {
  const run = (seed: number): { log: number[][]; eps: { ret: number; length: number }[] } => {
    const vec = new VecEnv(() => new MountainCarEnv(), 2, seed);
    assert.equal(vec.obsDim, 2);
    const actions = new Int32Array(2);
    const log: number[][] = [];
    for (let s = 0; s < 450; s++) {
      actions[0] = pushWithVelocity(vec.obs.subarray(0, 2));
      actions[1] = 1;
      vec.step(actions);
      if (vec.terminated[0]) {
        assert.ok(vec.nextObs[0] >= 0.5, `terminal obs ${vec.nextObs.subarray(0, 2)}`);
        assert.ok(vec.obs[0] >= -0.6 && vec.obs[0] <= -0.4 && vec.obs[1] === 0, `fresh obs ${vec.obs.subarray(0, 2)}`);
      }
      assert.equal(vec.terminated[1], 0);
      log.push([...vec.obs, ...vec.nextObs, ...vec.rewards, ...vec.terminated, ...vec.truncated]);
    }
    return { log, eps: vec.drainEpisodes() };
  };
  const a = run(5);
  const goals = a.eps.filter((e) => e.length < 200);
  const timeouts = a.eps.filter((e) => e.length === 200);
  assert.ok(goals.length >= 3, `goal episodes: ${goals.length}`);
  assert.equal(timeouts.length, 2, 'the coasting env truncates at 200 and 400');
  for (const e of a.eps) assert.equal(e.ret, -e.length);
  assert.deepEqual(run(5), a);
  assert.notDeepEqual(run(6).log, a.log);
});
