import test from 'node:test';
import assert from 'node:assert/strict';
import { CARTPOLE_CONSTANTS, CARTPOLE_INFO, CartPoleEnv, cartpoleDefaults, cartpoleDynamics } from './cartpole.js';
import { VecEnv } from './vector.js';
import type { PhysParams, ResetResult } from './types.js';

/** Gymnasium's CartPole-v1 step (classic_control/cartpole.py, euler), written out independently. */
function referenceStep(
  s: readonly number[],
  action: 0 | 1,
  p: { gravity: number; massCart: number; massPole: number; length: number; forceMag: number } = {
    gravity: 9.8,
    massCart: 1.0,
    massPole: 0.1,
    length: 0.5,
    forceMag: 10.0,
  },
): number[] {
  const tau = 0.02;
  const [x, xDot, theta, thetaDot] = s;
  const total = p.massPole + p.massCart;
  const F = action === 1 ? p.forceMag : -p.forceMag;
  const temp = (F + p.massPole * p.length * thetaDot ** 2 * Math.sin(theta)) / total;
  const thetaAcc = (p.gravity * Math.sin(theta) - Math.cos(theta) * temp) / (p.length * (4 / 3 - (p.massPole * Math.cos(theta) ** 2) / total));
  const xAcc = temp - (p.massPole * p.length * thetaAcc * Math.cos(theta)) / total;
  return [x + tau * xDot, xDot + tau * xAcc, theta + tau * thetaDot, thetaDot + tau * thetaAcc];
}

function assertClose(actual: ArrayLike<number>, expected: readonly number[], tol: number, what: string): void {
  assert.equal(actual.length, expected.length, what);
  for (let i = 0; i < expected.length; i++) {
    assert.ok(Math.abs(actual[i] - expected[i]) <= tol, `${what}[${i}]: got ${actual[i]}, expected ${expected[i]}`);
  }
}

const STATES: number[][] = [
  [0, 0, 0, 0],
  [0.01, -0.02, 0.03, -0.04],
  [-1.3, 0.7, -0.15, 1.2],
  [2.0, -1.5, 0.2, -2.5],
  [0.5, 3.0, -0.05, 0.3],
  [-0.2, 0.1, 0.1, 4.0],
];

/** Resets `env` (seed 3) and applies `action` until the episode ends, recording what each step returned. */
function rollConstant(
  env: CartPoleEnv,
  action: 0 | 1,
): { steps: number; prev: Float64Array; last: Float64Array; rewards: number[]; flags: [boolean, boolean][] } {
  let prev = env.reset({ seed: 3 }).obs;
  let last = prev;
  const rewards: number[] = [];
  const flags: [boolean, boolean][] = [];
  for (let n = 1; n <= 1000; n++) {
    const r = env.step(action);
    rewards.push(r.reward);
    flags.push([r.terminated, r.truncated]);
    prev = last;
    last = r.obs;
    if (r.terminated || r.truncated) return { steps: n, prev, last, rewards, flags };
  }
  throw new Error('episode did not end');
}

test('constants and defaults match Gymnasium CartPole-v1', () => {
  assert.equal(CARTPOLE_CONSTANTS.tau, 0.02);
  assert.equal(CARTPOLE_CONSTANTS.xThreshold, 2.4);
  assert.ok(Math.abs(CARTPOLE_CONSTANTS.thetaThresholdRadians - 0.20943951) < 1e-8);
  assert.equal(CARTPOLE_CONSTANTS.thetaThresholdRadians, (12 * Math.PI) / 180);
  assert.equal(CARTPOLE_CONSTANTS.resetBound, 0.05);
  assert.deepEqual(cartpoleDefaults(), { gravity: 9.8, massCart: 1.0, massPole: 0.1, poleLength: 0.5, forceMag: 10.0 });
  assert.equal(CARTPOLE_INFO.maxEpisodeSteps, 500);
  assert.deepEqual(CARTPOLE_INFO.actionSpace, { type: 'discrete', n: 2 });
  assert.deepEqual(CARTPOLE_INFO.observationNames, ['x', 'x_dot', 'theta', 'theta_dot']);
});

test('cartpoleDynamics matches the reference equations for hand-picked states and both actions', () => {
  const out = new Float64Array(4);
  for (const s of STATES) {
    for (const a of [0, 1] as const) {
      cartpoleDynamics(s, a, cartpoleDefaults(), out);
      assertClose(out, referenceStep(s, a), 1e-12, `state ${JSON.stringify(s)} action ${a}`);
    }
  }
});

test('a hand-computed step from the zero state: pushing right accelerates the cart right and tips the pole left', () => {
  const out = new Float64Array(4);
  cartpoleDynamics([0, 0, 0, 0], 1, cartpoleDefaults(), out);
  // temp = 10/1.1; thetaAcc = -temp / (0.5 * (4/3 - 0.1/1.1)); xAcc = temp - 0.05 * thetaAcc / 1.1
  const temp = 10 / 1.1;
  const thetaAcc = -temp / (0.5 * (4 / 3 - 0.1 / 1.1));
  const xAcc = temp - (0.05 * thetaAcc) / 1.1;
  assertClose(out, [0, 0.02 * xAcc, 0, 0.02 * thetaAcc], 1e-12, 'zero state');
  assert.ok(out[1] > 0 && out[3] < 0);
});

test('CartPoleEnv.step follows the reference equations along a trajectory', () => {
  const env = new CartPoleEnv();
  const { obs } = env.reset({ seed: 11 });
  let ref = Array.from(obs);
  const actions = [1, 1, 0, 1, 0, 0, 0, 1, 1, 0] as const;
  for (const a of actions) {
    const r = env.step(a);
    ref = referenceStep(ref, a);
    assertClose(r.obs, ref, 1e-12, `after action ${a}`);
  }
});

test('step accepts an action given as a one-element array', () => {
  const a = new CartPoleEnv();
  const b = new CartPoleEnv();
  a.reset({ seed: 5 });
  b.reset({ seed: 5 });
  assert.deepEqual(a.step(1).obs, b.step([1]).obs);
});

test('reset draws every variable uniformly in [-0.05, 0.05]', () => {
  const env = new CartPoleEnv();
  const seen = [Infinity, -Infinity];
  for (let seed = 0; seed < 200; seed++) {
    const { obs } = env.reset({ seed });
    assert.equal(obs.length, 4);
    for (const v of obs) {
      assert.ok(v >= -0.05 && v <= 0.05, `seed ${seed}: ${v}`);
      seen[0] = Math.min(seen[0], v);
      seen[1] = Math.max(seen[1], v);
    }
  }
  // the draws cover the interval (not e.g. [0, 0.05] only)
  assert.ok(seen[0] < -0.045 && seen[1] > 0.045, `range seen ${seen}`);
});

test('same seed gives the same reset; different seeds differ; an unseeded reset continues the stream', () => {
  const a = new CartPoleEnv();
  const b = new CartPoleEnv();
  assert.deepEqual(a.reset({ seed: 42 }).obs, b.reset({ seed: 42 }).obs);
  assert.notDeepEqual(a.reset({ seed: 42 }).obs, a.reset({ seed: 43 }).obs);
  // seeded once, then unseeded resets are deterministic too and differ from the first
  const first = a.reset({ seed: 7 }).obs;
  const second = a.reset().obs;
  b.reset({ seed: 7 });
  assert.deepEqual(b.reset().obs, second);
  assert.notDeepEqual(first, second);
});

test('reset reports the physical parameters in info', () => {
  const env = new CartPoleEnv();
  const r: ResetResult = env.reset({ seed: 1, params: { poleLength: 0.8 } });
  assert.deepEqual(r.info.params, { ...cartpoleDefaults(), poleLength: 0.8 });
  // params do not leak into the next reset
  assert.deepEqual(env.reset({ seed: 1 }).info.params, cartpoleDefaults());
});

test('termination is strictly beyond ±2.4 and ±12 degrees', () => {
  const p = cartpoleDefaults();
  const out = new Float64Array(4);
  const th = CARTPOLE_CONSTANTS.thetaThresholdRadians;
  // x' = x + tau*x_dot and theta' = theta + tau*theta_dot are exact with zero velocities
  assert.equal(cartpoleDynamics([2.4, 0, 0, 0], 0, p, out), false);
  assert.equal(out[0], 2.4);
  assert.equal(cartpoleDynamics([-2.4, 0, 0, 0], 1, p, out), false);
  assert.equal(cartpoleDynamics([2.4 + 1e-12, 0, 0, 0], 0, p, out), true);
  assert.equal(cartpoleDynamics([-2.4 - 1e-12, 0, 0, 0], 1, p, out), true);
  assert.equal(cartpoleDynamics([0, 0, th, 0], 1, p, out), false);
  assert.equal(out[2], th);
  assert.equal(cartpoleDynamics([0, 0, -th, 0], 0, p, out), false);
  assert.equal(cartpoleDynamics([0, 0, th + 1e-12, 0], 1, p, out), true);
  assert.equal(cartpoleDynamics([0, 0, -th - 1e-12, 0], 0, p, out), true);
  // decided on the new state, not the old one
  assert.equal(cartpoleDynamics([2.39, 1, 0, 0], 1, p, out), true); // 2.39 + 0.02 = 2.41
  assert.equal(cartpoleDynamics([2.41, -1, 0, 0], 0, p, out), false); // 2.41 - 0.02 = 2.39
});

test('an env pushed one way terminates on the first state past a threshold, with reward 1 every step', () => {
  for (const a of [0, 1] as const) {
    const env = new CartPoleEnv();
    const { steps, prev, last, rewards, flags } = rollConstant(env, a);
    const th = CARTPOLE_CONSTANTS.thetaThresholdRadians;
    const out = (o: Float64Array): boolean => Math.abs(o[0]) > 2.4 || Math.abs(o[2]) > th;
    assert.ok(out(last), `terminal obs ${last} should be past a threshold`);
    assert.ok(!out(prev), `previous obs ${prev} should be inside`);
    assert.ok(steps < 100, `constant pushing falls quickly (${steps})`);
    assert.deepEqual(rewards, new Array(steps).fill(1));
    assert.deepEqual(flags.at(-1), [true, false]);
    assert.ok(flags.slice(0, -1).every(([t, u]) => !t && !u));
  }
});

test('a balancing PD controller is truncated at exactly step 500', () => {
  const env = new CartPoleEnv();
  let { obs } = env.reset({ seed: 0 });
  let total = 0;
  for (let n = 1; n <= 500; n++) {
    const r = env.step(obs[2] + 0.5 * obs[3] > 0 ? 1 : 0);
    total += r.reward;
    obs = r.obs;
    assert.equal(r.terminated, false, `terminated at step ${n}`);
    assert.equal(r.truncated, n === 500, `truncated flag at step ${n}`);
  }
  assert.equal(total, 500);
  assert.throws(() => env.step(0), /reset/);
});

test('stepping after termination throws until reset', () => {
  const env = new CartPoleEnv();
  rollConstant(env, 1);
  assert.throws(() => env.step(1), /after the episode ended/);
  env.reset();
  assert.doesNotThrow(() => env.step(1));
});

test('stepping before any reset throws', () => {
  assert.throws(() => new CartPoleEnv().step(0), /reset/);
});

test('invalid actions throw a RangeError naming the action', () => {
  const env = new CartPoleEnv();
  env.reset({ seed: 1 });
  for (const bad of [2, -1, 0.5, NaN]) {
    assert.throws(
      () => env.step(bad),
      (e: unknown) => e instanceof RangeError && e.message.includes(String(bad)),
      `action ${bad}`,
    );
  }
  assert.throws(() => env.step([3]), RangeError);
  // a rejected action does not advance or end the episode
  assert.doesNotThrow(() => env.step(0));
});

test('params override the dynamics as the equations say (longer, heavier pole, other gravity and force)', () => {
  const s = [0.1, -0.3, 0.08, 0.5];
  const overrides: { p: PhysParams; ref: Parameters<typeof referenceStep>[2] }[] = [
    { p: { poleLength: 1.0 }, ref: { gravity: 9.8, massCart: 1.0, massPole: 0.1, length: 1.0, forceMag: 10 } },
    { p: { massPole: 0.5, massCart: 2.0 }, ref: { gravity: 9.8, massCart: 2.0, massPole: 0.5, length: 0.5, forceMag: 10 } },
    { p: { gravity: 3.7, forceMag: 5 }, ref: { gravity: 3.7, massCart: 1.0, massPole: 0.1, length: 0.5, forceMag: 5 } },
  ];
  for (const { p, ref } of overrides) {
    for (const a of [0, 1] as const) {
      const out = new Float64Array(4);
      cartpoleDynamics(s, a, { ...cartpoleDefaults(), ...p }, out);
      assertClose(out, referenceStep(s, a, ref), 1e-12, `${JSON.stringify(p)} action ${a}`);
    }
  }
  // through the env: a longer pole falls more slowly
  const short = new CartPoleEnv();
  const long = new CartPoleEnv();
  const o = short.reset({ seed: 9 }).obs;
  assert.deepEqual(long.reset({ seed: 9, params: { poleLength: 1.0 } }).obs, o);
  const rs = short.step(1).obs;
  const rl = long.step(1).obs;
  assertClose(rl, referenceStep(Array.from(o), 1, overrides[0].ref), 1e-12, 'env with poleLength 1.0');
  assert.ok(Math.abs(rl[3] - o[3]) < Math.abs(rs[3] - o[3]), 'angular acceleration smaller with a longer pole');
});

// ---------------------------------------------------------------- VecEnv

/** Steps a VecEnv with a fixed action sequence, returning a log of everything it exposed. */
function runVec(vec: VecEnv, steps: number, policy: (i: number, obs: Float64Array) => number): number[][] {
  const log: number[][] = [];
  const actions = new Int32Array(vec.num);
  for (let s = 0; s < steps; s++) {
    for (let i = 0; i < vec.num; i++) actions[i] = policy(i, vec.obs.subarray(i * vec.obsDim, (i + 1) * vec.obsDim));
    vec.step(actions);
    log.push([...vec.obs, ...vec.nextObs, ...vec.rewards, ...vec.terminated, ...vec.truncated]);
  }
  return log;
}

test('VecEnv starts from reset observations and exposes its shape', () => {
  const vec = new VecEnv(() => new CartPoleEnv(), 3, 1);
  assert.equal(vec.num, 3);
  assert.equal(vec.obsDim, 4);
  assert.equal(vec.obs.length, 12);
  for (const v of vec.obs) assert.ok(Math.abs(v) <= 0.05);
  assert.deepEqual(vec.nextObs, vec.obs);
  // environments are seeded differently
  assert.notDeepEqual(vec.obs.slice(0, 4), vec.obs.slice(4, 8));
});

test('VecEnv autoresets in the same step: obs is a fresh reset, nextObs the terminal observation', () => {
  const vec = new VecEnv(() => new CartPoleEnv(), 2, 5);
  const th = CARTPOLE_CONSTANTS.thetaThresholdRadians;
  // env 0 always pushes right (falls fast), env 1 balances
  const policy = (i: number, o: Float64Array): number => (i === 0 ? 1 : o[2] + 0.5 * o[3] > 0 ? 1 : 0);
  let found = false;
  const actions = new Int32Array(2);
  for (let s = 0; s < 200 && !found; s++) {
    const before = vec.obs.slice();
    for (let i = 0; i < 2; i++) actions[i] = policy(i, vec.obs.subarray(i * 4, i * 4 + 4));
    vec.step(actions);
    // the non-finished env: obs and nextObs agree and follow the reference dynamics
    const expected1 = referenceStep(Array.from(before.slice(4, 8)), actions[1] as 0 | 1);
    assertClose(vec.nextObs.slice(4, 8), expected1, 1e-12, 'env 1 nextObs');
    assert.deepEqual(vec.obs.slice(4, 8), vec.nextObs.slice(4, 8));
    assert.equal(vec.terminated[1], 0);
    const expected0 = referenceStep(Array.from(before.slice(0, 4)), 1);
    assertClose(vec.nextObs.slice(0, 4), expected0, 1e-12, 'env 0 nextObs');
    if (vec.terminated[0]) {
      found = true;
      const term = vec.nextObs.slice(0, 4);
      assert.ok(Math.abs(term[0]) > 2.4 || Math.abs(term[2]) > th, `terminal obs ${term}`);
      const fresh = vec.obs.slice(0, 4);
      for (const v of fresh) assert.ok(Math.abs(v) <= 0.05, `reset obs ${fresh}`);
      assert.equal(vec.rewards[0], 1);
      assert.equal(vec.truncated[0], 0);
    } else {
      assert.deepEqual(vec.obs.slice(0, 4), vec.nextObs.slice(0, 4));
    }
  }
  assert.ok(found, 'env 0 should have terminated');
  // the next step continues from the fresh observation, not the terminal one
  const fresh = Array.from(vec.obs.slice(0, 4));
  vec.step(Int32Array.from([0, 0]));
  assertClose(vec.nextObs.slice(0, 4), referenceStep(fresh, 0), 1e-12, 'step after autoreset');
});

test('VecEnv.episodeStep counts steps in the current episode, 1 on the first step', () => {
  const vec = new VecEnv(() => new CartPoleEnv(), 1, 2);
  assert.equal(vec.episodeStep[0], 0);
  vec.step([0]);
  assert.equal(vec.episodeStep[0], 1);
  vec.step([0]);
  assert.equal(vec.episodeStep[0], 2);
  let n = 2;
  while (!vec.terminated[0]) {
    vec.step([0]);
    n++;
  }
  const [ep] = vec.drainEpisodes();
  assert.equal(ep.length, n);
  vec.step([0]);
  assert.equal(vec.episodeStep[0], 1, 'first step of the next episode');
});

test('VecEnv.episodeStep on the terminal step is the finished episode length (it feeds `t` of the reward expression)', () => {
  const vec = new VecEnv(() => new CartPoleEnv(), 1, 2);
  let n = 0;
  do {
    vec.step([1]);
    n++;
  } while (!vec.terminated[0]);
  assert.equal(vec.episodeStep[0], n);
});

test('VecEnv.drainEpisodes returns each finished episode once, with its return and length', () => {
  const vec = new VecEnv(() => new CartPoleEnv(), 4, 17);
  const expected: { ret: number; length: number }[] = [];
  const running = [0, 0, 0, 0];
  const lengths = [0, 0, 0, 0];
  const got: { ret: number; length: number }[] = [];
  const actions = new Int32Array(4);
  for (let s = 0; s < 300; s++) {
    for (let i = 0; i < 4; i++) {
      const o = vec.obs.subarray(i * 4, i * 4 + 4);
      // env 0 balances (truncates at 500 — not within 300 steps), the others push mostly one way
      actions[i] = i === 0 ? (o[2] + 0.5 * o[3] > 0 ? 1 : 0) : (s + i) % 5 === 0 ? 0 : 1;
    }
    vec.step(actions);
    for (let i = 0; i < 4; i++) {
      running[i] += vec.rewards[i];
      lengths[i] += 1;
      if (vec.terminated[i] || vec.truncated[i]) {
        expected.push({ ret: running[i], length: lengths[i] });
        running[i] = 0;
        lengths[i] = 0;
      }
    }
    if (s % 7 === 0) got.push(...vec.drainEpisodes());
  }
  got.push(...vec.drainEpisodes());
  assert.ok(expected.length >= 10, `episodes finished: ${expected.length}`);
  // same episodes, in the order they finished (env index order within a step)
  assert.deepEqual(got, expected);
  for (const e of got) assert.equal(e.ret, e.length); // reward 1 per step
  assert.deepEqual(vec.drainEpisodes(), []);
});

test('VecEnv reports truncation at 500 steps as a finished episode of return 500', () => {
  const vec = new VecEnv(() => new CartPoleEnv(), 2, 3);
  runVec(vec, 500, (_i, o) => (o[2] + 0.5 * o[3] > 0 ? 1 : 0));
  assert.deepEqual(Array.from(vec.truncated), [1, 1]);
  assert.deepEqual(Array.from(vec.terminated), [0, 0]);
  assert.deepEqual(vec.drainEpisodes(), [
    { ret: 500, length: 500 },
    { ret: 500, length: 500 },
  ]);
});

class RecordingCartPole extends CartPoleEnv {
  readonly resets: PhysParams[] = [];
  override reset(options: { seed?: number; params?: PhysParams } = {}): ResetResult {
    this.resets.push({ ...(options.params ?? {}) });
    return super.reset(options);
  }
}

test('VecEnv domain randomisation draws each episode parameter inside [lo, hi]; fixed values pass through', () => {
  const made: RecordingCartPole[] = [];
  const vec = new VecEnv(
    () => {
      const e = new RecordingCartPole();
      made.push(e);
      return e;
    },
    3,
    21,
    { poleLength: [0.4, 0.9], massCart: 1.5 },
  );
  runVec(vec, 400, () => 1); // pushing right: many short episodes
  const all = made.flatMap((e) => e.resets);
  assert.ok(all.length >= 3 + 20, `resets: ${all.length}`);
  for (const p of all) {
    assert.deepEqual(Object.keys(p).sort(), ['massCart', 'poleLength']);
    assert.equal(p.massCart, 1.5);
    assert.ok(p.poleLength >= 0.4 && p.poleLength <= 0.9, `poleLength ${p.poleLength}`);
  }
  const lengths = all.map((p) => p.poleLength);
  assert.equal(new Set(lengths).size, lengths.length, 'a new draw at every episode');
  assert.ok(Math.min(...lengths) < 0.5 && Math.max(...lengths) > 0.8, 'draws spread over the range');
});

test('VecEnv episodes run with the drawn parameters', () => {
  const made: RecordingCartPole[] = [];
  const vec = new VecEnv(
    () => {
      const e = new RecordingCartPole();
      made.push(e);
      return e;
    },
    1,
    4,
    { poleLength: [0.3, 1.5] },
  );
  const o = Array.from(vec.obs);
  const L = made[0].resets[0].poleLength;
  vec.step([1]);
  assertClose(vec.nextObs, referenceStep(o, 1, { gravity: 9.8, massCart: 1, massPole: 0.1, length: L, forceMag: 10 }), 1e-12, `poleLength ${L}`);
});

test('VecEnv is deterministic for a seed and differs across seeds', () => {
  const settings = { poleLength: [0.4, 0.9] as [number, number] };
  const policy = (i: number, o: Float64Array): number => (o[2] + 0.3 * o[3] > 0 !== (i % 2 === 0) ? 1 : 0);
  const a = runVec(new VecEnv(() => new CartPoleEnv(), 4, 99, settings), 300, policy);
  const b = runVec(new VecEnv(() => new CartPoleEnv(), 4, 99, settings), 300, policy);
  const c = runVec(new VecEnv(() => new CartPoleEnv(), 4, 100, settings), 300, policy);
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
});
