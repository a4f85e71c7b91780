import test from 'node:test';
import assert from 'node:assert/strict';
import { ACROBOT_CONSTANTS, ACROBOT_INFO, AcrobotEnv, acrobotDefaults, acrobotDynamics, acrobotTerminal } from './acrobot.js';
import { ENVIRONMENTS, getEnvironment } from './index.js';
import { VecEnv } from './vector.js';

/** Physical constants of the reference model, named as in Gymnasium's `_dsdt`. */
interface RefParams {
  m1: number;
  m2: number;
  l1: number;
  lc1: number;
  lc2: number;
  I1: number;
  I2: number;
  g: number;
}

const GYM: RefParams = { m1: 1, m2: 1, l1: 1, lc1: 0.5, lc2: 0.5, I1: 1, I2: 1, g: 9.8 };

/** The "book" equations of motion (Sutton & Barto), written out independently: d/dt [q1, q2, w1, w2, tau]. */
function bookDerivs(y: readonly number[], p: RefParams): number[] {
  const [q1, q2, w1, w2, tau] = y;
  const d1 = p.m1 * p.lc1 ** 2 + p.m2 * (p.l1 ** 2 + p.lc2 ** 2 + 2 * p.l1 * p.lc2 * Math.cos(q2)) + p.I1 + p.I2;
  const d2 = p.m2 * (p.lc2 ** 2 + p.l1 * p.lc2 * Math.cos(q2)) + p.I2;
  // cos(x − π/2) = sin(x)
  const phi2 = p.m2 * p.lc2 * p.g * Math.sin(q1 + q2);
  const phi1 =
    -p.m2 * p.l1 * p.lc2 * w2 ** 2 * Math.sin(q2) - 2 * p.m2 * p.l1 * p.lc2 * w2 * w1 * Math.sin(q2) + (p.m1 * p.lc1 + p.m2 * p.l1) * p.g * Math.sin(q1) + phi2;
  const a2 = (tau + (d2 / d1) * phi1 - p.m2 * p.l1 * p.lc2 * w1 ** 2 * Math.sin(q2) - phi2) / (p.m2 * p.lc2 ** 2 + p.I2 - d2 ** 2 / d1);
  const a1 = -(d2 * a2 + phi1) / d1;
  return [w1, w2, a1, a2, 0];
}

/** A generic classical RK4 step of size h. */
function rk4Step(f: (y: readonly number[]) => number[], y: readonly number[], h: number): number[] {
  const add = (a: readonly number[], b: readonly number[], s: number): number[] => a.map((v, i) => v + s * b[i]);
  const k1 = f(y);
  const k2 = f(add(y, k1, h / 2));
  const k3 = f(add(y, k2, h / 2));
  const k4 = f(add(y, k3, h));
  return y.map((v, i) => v + (h / 6) * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]));
}

function refWrap(x: number): number {
  while (x > Math.PI) x -= 2 * Math.PI;
  while (x < -Math.PI) x += 2 * Math.PI;
  return x;
}

/** Gymnasium's Acrobot step on the state [q1, q2, w1, w2], written out independently. */
function referenceStep(s: readonly number[], action: 0 | 1 | 2, p: RefParams = GYM): number[] {
  const tau = [-1, 0, 1][action];
  const y = rk4Step((v) => bookDerivs(v, p), [...s, tau], 0.2);
  const clip = (x: number, m: number): number => Math.min(Math.max(x, -m), m);
  return [refWrap(y[0]), refWrap(y[1]), clip(y[2], 4 * Math.PI), clip(y[3], 9 * Math.PI)];
}

function obsOf(s: readonly number[]): number[] {
  return [Math.cos(s[0]), Math.sin(s[0]), Math.cos(s[1]), Math.sin(s[1]), s[2], s[3]];
}

function stateOf(o: ArrayLike<number>): number[] {
  return [Math.atan2(o[1], o[0]), Math.atan2(o[3], o[2]), o[4], o[5]];
}

function assertClose(actual: ArrayLike<number>, expected: readonly number[], tol: number, what: string): void {
  assert.equal(actual.length, expected.length, what);
  for (let i = 0; i < expected.length; i++) {
    assert.ok(Math.abs(actual[i] - expected[i]) <= tol, `${what}[${i}]: got ${actual[i]}, expected ${expected[i]}`);
  }
}

const STATES: number[][] = [
  [0, 0, 0, 0],
  [0.05, -0.08, 0.02, -0.03],
  [1.0, -0.5, 2.0, -3.0],
  [-2.5, 2.8, -5.0, 10.0],
  [3.0, 3.1, 12.0, -27.0],
  [Math.PI / 2, 0, 0, 0],
];

/** Torque in the direction of the lower link's swing: pumps energy in (terminates well within 500 steps). */
const pump = (o: ArrayLike<number>): 0 | 2 => (o[5] > 0 ? 2 : 0);

test('constants and defaults match Gymnasium Acrobot-v1', () => {
  assert.equal(ACROBOT_CONSTANTS.dt, 0.2);
  assert.equal(ACROBOT_CONSTANTS.gravity, 9.8);
  assert.equal(ACROBOT_CONSTANTS.linkMoi, 1);
  assert.equal(ACROBOT_CONSTANTS.maxVel1, 4 * Math.PI);
  assert.equal(ACROBOT_CONSTANTS.maxVel2, 9 * Math.PI);
  assert.deepEqual([...ACROBOT_CONSTANTS.torques], [-1, 0, 1]);
  assert.equal(ACROBOT_CONSTANTS.resetBound, 0.1);
  assert.deepEqual(acrobotDefaults(), { linkLength1: 1, linkLength2: 1, linkMass1: 1, linkMass2: 1 });
  assert.equal(ACROBOT_INFO.id, 'Acrobot-v1');
  assert.equal(ACROBOT_INFO.maxEpisodeSteps, 500);
  assert.deepEqual(ACROBOT_INFO.actionSpace, { type: 'discrete', n: 3 });
  assert.deepEqual(ACROBOT_INFO.observationNames, ['cos_theta1', 'sin_theta1', 'cos_theta2', 'sin_theta2', 'theta1_dot', 'theta2_dot']);
  for (const p of ACROBOT_INFO.params) assert.ok(p.min < p.default && p.default < p.max, p.name);
  assert.equal(getEnvironment('Acrobot-v1').info, ACROBOT_INFO);
  assert.ok(ENVIRONMENTS['Acrobot-v1'].make() instanceof AcrobotEnv);
});

test('acrobotDynamics matches an independent RK4 of the book dynamics for several states and every action', () => {
  const out = new Float64Array(4);
  for (const s of STATES) {
    for (const a of [0, 1, 2] as const) {
      acrobotDynamics(s, a, acrobotDefaults(), out);
      assertClose(out, referenceStep(s, a), 1e-9, `state ${JSON.stringify(s)} action ${a}`);
    }
  }
});

test('at rest hanging down with no torque the acrobot stays put; torque turns the joints in opposite senses', () => {
  const out = new Float64Array(4);
  assert.equal(acrobotDynamics([0, 0, 0, 0], 1, acrobotDefaults(), out), false);
  // (not exactly 0: Gymnasium writes the gravity terms as cos(θ − π/2), and cos(−π/2) is 6e-17 in floating point)
  assertClose(out, [0, 0, 0, 0], 1e-15, 'at rest');
  acrobotDynamics([0, 0, 0, 0], 2, acrobotDefaults(), out);
  assert.ok(out[3] > 0 && out[2] < 0, `positive torque: ${out}`);
  acrobotDynamics([0, 0, 0, 0], 0, acrobotDefaults(), out);
  assert.ok(out[3] < 0 && out[2] > 0, `negative torque: ${out}`);
});

test('angles are wrapped to [-pi, pi] and velocities clipped to 4pi and 9pi', () => {
  const out = new Float64Array(4);
  // fast rotation carries both angles across pi; the velocities stay at their limits
  acrobotDynamics([3.0, -3.0, 4 * Math.PI, -9 * Math.PI], 1, acrobotDefaults(), out);
  for (const i of [0, 1]) assert.ok(out[i] >= -Math.PI && out[i] <= Math.PI, `angle ${i}: ${out[i]}`);
  assert.ok(Math.abs(out[2]) <= 4 * Math.PI && Math.abs(out[3]) <= 9 * Math.PI);
  assertClose(out, referenceStep([3.0, -3.0, 4 * Math.PI, -9 * Math.PI], 1), 1e-9, 'wrap case');
  // a velocity far past the limit is clipped exactly to it
  acrobotDynamics([0, 0, 0, 60], 2, acrobotDefaults(), out);
  assert.equal(out[3], 9 * Math.PI);
  acrobotDynamics([0, 0, -40, 0], 0, acrobotDefaults(), out);
  assert.equal(out[2], -4 * Math.PI);
});

test('the terminal test is -cos(t1) - cos(t1 + t2) > 1, strictly', () => {
  assert.equal(acrobotTerminal([0, 0, 0, 0]), false); // hanging down: height -2
  assert.equal(acrobotTerminal([Math.PI, 0, 0, 0]), true); // straight up: height 2
  assert.equal(acrobotTerminal([Math.PI / 2, 0, 0, 0]), false); // horizontal: height 0
  assert.equal(acrobotTerminal([Math.PI / 2, Math.PI / 2, 0, 0]), false); // -0 - (-1) = 1: not > 1
  assert.equal(acrobotTerminal([Math.PI / 2, Math.PI / 2 - 1e-6, 0, 0]), false);
  assert.equal(acrobotTerminal([Math.PI / 2 + 1e-3, Math.PI / 2, 0, 0]), true);
  assert.equal(acrobotTerminal([2.5, 0.3, 0, 0]), -Math.cos(2.5) - Math.cos(2.8) > 1);
  // velocities do not matter
  assert.equal(acrobotTerminal([Math.PI, 0, 10, -20]), true);
});

test('AcrobotEnv.step follows the reference along a trajectory; observations are [cos, sin, cos, sin, w1, w2]', () => {
  const env = new AcrobotEnv();
  const { obs } = env.reset({ seed: 11 });
  let ref = stateOf(obs);
  assertClose(obs, obsOf(ref), 1e-15, 'reset obs');
  const actions = [2, 2, 0, 1, 0, 0, 2, 1, 2, 0, 2, 2] as const;
  for (const a of actions) {
    const r = env.step(a);
    ref = referenceStep(ref, a);
    assertClose(r.obs, obsOf(ref), 1e-9, `after action ${a}`);
  }
});

test('step accepts a one-element array and returns fresh observations', () => {
  const a = new AcrobotEnv();
  const b = new AcrobotEnv();
  const oa = a.reset({ seed: 5 }).obs;
  b.reset({ seed: 5 });
  const r1 = a.step(2);
  assert.deepEqual(r1.obs, b.step([2]).obs);
  assert.notEqual(r1.obs, oa);
  const copy = Float64Array.from(r1.obs);
  r1.obs.fill(123);
  assert.deepEqual(a.step(1).obs, b.step(Int32Array.of(1)).obs, 'mutating a returned obs does not affect the env');
  assert.notDeepEqual(copy, r1.obs);
});

test('reset draws every state variable uniformly in [-0.1, 0.1]', () => {
  const env = new AcrobotEnv();
  const lo = [Infinity, Infinity, Infinity, Infinity];
  const hi = [-Infinity, -Infinity, -Infinity, -Infinity];
  for (let seed = 0; seed < 200; seed++) {
    const { obs } = env.reset({ seed });
    assert.equal(obs.length, 6);
    const s = stateOf(obs);
    for (let i = 0; i < 4; i++) {
      assert.ok(s[i] >= -0.1 - 1e-15 && s[i] <= 0.1 + 1e-15, `seed ${seed} var ${i}: ${s[i]}`);
      lo[i] = Math.min(lo[i], s[i]);
      hi[i] = Math.max(hi[i], s[i]);
    }
    assertClose([obs[0] ** 2 + obs[1] ** 2, obs[2] ** 2 + obs[3] ** 2], [1, 1], 1e-12, 'unit circle');
  }
  for (let i = 0; i < 4; i++) assert.ok(lo[i] < -0.09 && hi[i] > 0.09, `var ${i} range seen [${lo[i]}, ${hi[i]}]`);
});

test('same seed gives the same reset; different seeds differ; an unseeded reset continues the stream', () => {
  const a = new AcrobotEnv();
  const b = new AcrobotEnv();
  assert.deepEqual(a.reset({ seed: 42 }).obs, b.reset({ seed: 42 }).obs);
  assert.notDeepEqual(a.reset({ seed: 42 }).obs, a.reset({ seed: 43 }).obs);
  const first = a.reset({ seed: 7 }).obs;
  const second = a.reset().obs;
  b.reset({ seed: 7 });
  assert.deepEqual(b.reset().obs, second);
  assert.notDeepEqual(first, second);
});

test('reset reports the physical parameters in info; they do not leak into the next reset', () => {
  const env = new AcrobotEnv();
  assert.deepEqual(env.reset({ seed: 1, params: { linkMass2: 2 } }).info.params, { ...acrobotDefaults(), linkMass2: 2 });
  assert.deepEqual(env.reset({ seed: 1 }).info.params, acrobotDefaults());
});

test('params change the dynamics as the book equations say (COM at half of each link length)', () => {
  const s = [0.4, -0.7, 1.5, -2.0];
  const cases: { p: Record<string, number>; ref: RefParams }[] = [
    { p: { linkLength1: 1.5 }, ref: { ...GYM, l1: 1.5, lc1: 0.75 } },
    { p: { linkLength2: 0.6 }, ref: { ...GYM, lc2: 0.3 } },
    { p: { linkMass1: 2.5, linkMass2: 0.4 }, ref: { ...GYM, m1: 2.5, m2: 0.4 } },
  ];
  const out = new Float64Array(4);
  for (const { p, ref } of cases) {
    for (const a of [0, 1, 2] as const) {
      acrobotDynamics(s, a, { ...acrobotDefaults(), ...p }, out);
      assertClose(out, referenceStep(s, a, ref), 1e-9, `${JSON.stringify(p)} action ${a}`);
    }
    // and they make a difference
    acrobotDynamics(s, 1, { ...acrobotDefaults(), ...p }, out);
    const plain = new Float64Array(4);
    acrobotDynamics(s, 1, acrobotDefaults(), plain);
    assert.notDeepEqual(out, plain, JSON.stringify(p));
  }
  // through the env
  const env = new AcrobotEnv();
  const o = env.reset({ seed: 3, params: { linkMass1: 2.5, linkMass2: 0.4 } }).obs;
  assertClose(env.step(2).obs, obsOf(referenceStep(stateOf(o), 2, cases[2].ref)), 1e-9, 'env with masses');
});

test('pumping energy reaches the terminal state: reward -1 each step and 0 on the terminal step', () => {
  const env = new AcrobotEnv();
  let { obs } = env.reset({ seed: 0 });
  const rewards: number[] = [];
  let prev = obs;
  for (let n = 1; n <= 500; n++) {
    const r = env.step(pump(obs));
    rewards.push(r.reward);
    prev = obs;
    obs = r.obs;
    if (r.terminated) {
      assert.equal(r.truncated, false);
      break;
    }
    assert.equal(r.truncated, false, `truncated at ${n}`);
  }
  const n = rewards.length;
  assert.ok(n < 500, `the pumping policy should finish early (${n})`);
  assert.deepEqual(rewards, [...new Array(n - 1).fill(-1), 0]);
  const height = (o: ArrayLike<number>): number => -o[0] - (o[0] * o[2] - o[1] * o[3]); // -cos t1 - cos(t1 + t2)
  assert.ok(height(obs) > 1, `terminal height ${height(obs)}`);
  assert.ok(height(prev) <= 1, `previous height ${height(prev)}`);
  assert.throws(() => env.step(1), /after the episode ended/);
  env.reset();
  assert.doesNotThrow(() => env.step(1));
});

test('hanging without torque is truncated at exactly step 500 with return -500', () => {
  const env = new AcrobotEnv();
  env.reset({ seed: 2 });
  let total = 0;
  for (let n = 1; n <= 500; n++) {
    const r = env.step(1);
    total += r.reward;
    assert.equal(r.terminated, false, `terminated at ${n}`);
    assert.equal(r.truncated, n === 500, `truncated flag at ${n}`);
  }
  assert.equal(total, -500);
  assert.throws(() => env.step(1), /reset/);
});

test('stepping before any reset throws; invalid actions throw a RangeError and do not advance the episode', () => {
  assert.throws(() => new AcrobotEnv().step(0), /reset/);
  const env = new AcrobotEnv();
  env.reset({ seed: 1 });
  for (const bad of [3, -1, 0.5, NaN]) {
    assert.throws(
      () => env.step(bad),
      (e: unknown) => e instanceof RangeError && e.message.includes(String(bad)),
      `action ${bad}`,
    );
  }
  assert.throws(() => env.step([4]), RangeError);
  assert.throws(() => env.step([1, 1]), RangeError);
  assert.throws(() => env.step([]), RangeError);
  // the episode still runs its full 500 steps
  let steps = 0;
  for (;;) {
    steps++;
    if (env.step(1).truncated) break;
  }
  assert.equal(steps, 500);
});

test('VecEnv runs Acrobot: autoreset on termination, episodes reported, deterministic per seed', () => {
  const run = (seed: number): { log: number[][]; eps: { ret: number; length: number }[] } => {
    const vec = new VecEnv(() => new AcrobotEnv(), 3, seed, { linkMass2: [0.8, 1.2] });
    assert.equal(vec.obsDim, 6);
    const actions = new Int32Array(3);
    const log: number[][] = [];
    let sawAutoreset = false;
    for (let s = 0; s < 400; s++) {
      for (let i = 0; i < 3; i++) actions[i] = i === 2 ? 1 : pump(vec.obs.subarray(i * 6, i * 6 + 6));
      vec.step(actions);
      for (let i = 0; i < 3; i++) {
        if (vec.terminated[i]) {
          sawAutoreset = true;
          assert.equal(vec.rewards[i], 0);
          const o = vec.obs.subarray(i * 6, i * 6 + 6);
          for (const v of stateOf(o)) assert.ok(Math.abs(v) <= 0.1 + 1e-15, `fresh obs ${o}`);
        }
      }
      log.push([...vec.obs, ...vec.rewards, ...vec.terminated]);
    }
    assert.ok(sawAutoreset, 'the pumping envs should have terminated');
    return { log, eps: vec.drainEpisodes() };
  };
  const a = run(8);
  assert.ok(a.eps.length >= 2, `episodes: ${a.eps.length}`);
  for (const e of a.eps) assert.equal(e.ret, -(e.length - 1));
  assert.deepEqual(run(8), a);
  assert.notDeepEqual(run(9).log, a.log);
});
