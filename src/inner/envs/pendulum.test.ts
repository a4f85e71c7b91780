import test from 'node:test';
import assert from 'node:assert/strict';
import { PENDULUM_CONSTANTS, PENDULUM_INFO, PendulumEnv, angleNormalize, pendulumDefaults, pendulumDynamics } from './pendulum.js';
import { ENVIRONMENTS, getEnvironment } from './index.js';
import { VecEnv } from './vector.js';

/** The angle mapped into [-pi, pi) by whole turns, computed independently of `angleNormalize`. */
function refNormalize(x: number): number {
  return x - 2 * Math.PI * Math.floor((x + Math.PI) / (2 * Math.PI));
}

/** Gymnasium's Pendulum-v1 step, written out independently. Returns [next state, reward]. */
function referenceStep(s: readonly number[], u: number, g = 10, m = 1, l = 1): [number[], number] {
  const dt = 0.05;
  const torque = Math.max(-2, Math.min(2, u));
  const reward = -(refNormalize(s[0]) ** 2 + 0.1 * s[1] ** 2 + 0.001 * torque ** 2);
  const acc = (3 * g * Math.sin(s[0])) / (2 * l) + (3 * torque) / (m * l * l);
  const w = Math.max(-8, Math.min(8, s[1] + acc * dt));
  return [[s[0] + w * dt, w], reward];
}

function assertClose(actual: ArrayLike<number>, expected: readonly number[], tol: number, what: string): void {
  assert.equal(actual.length, expected.length, what);
  for (let i = 0; i < expected.length; i++) {
    assert.ok(Math.abs(actual[i] - expected[i]) <= tol, `${what}[${i}]: got ${actual[i]}, expected ${expected[i]}`);
  }
}

const obsOf = (s: readonly number[]): number[] => [Math.cos(s[0]), Math.sin(s[0]), s[1]];

const STATES: number[][] = [
  [0, 0],
  [0.1, -0.2],
  [Math.PI, 0],
  [-2.5, 3.0],
  [2.9, -7.9],
  [7.0, 1.5], // an angle beyond one turn (the state keeps raw angles, as Gymnasium's does)
  [-9.5, -4.0],
];

/** Energy-shaping swing-up with a PD hold near the top; keeps the pendulum up (reward near 0). */
function controller(o: ArrayLike<number>): number {
  const th = Math.atan2(o[1], o[0]);
  if (o[0] > 0.8) return -10 * th - 2 * o[2];
  const energy = (0.5 * o[2] * o[2]) / 3 + 5 * (o[0] - 1); // relative to upright at rest, per unit m l² / 3
  return energy < 0 ? 2 * Math.sign(o[2] || 1) : -0.5 * o[2];
}

test('constants and defaults match Gymnasium Pendulum-v1', () => {
  assert.deepEqual({ ...PENDULUM_CONSTANTS }, { dt: 0.05, maxSpeed: 8, maxTorque: 2, resetTheta: Math.PI, resetThetaDot: 1 });
  assert.deepEqual(pendulumDefaults(), { gravity: 10, mass: 1, length: 1 });
  assert.equal(PENDULUM_INFO.id, 'Pendulum-v1');
  assert.equal(PENDULUM_INFO.maxEpisodeSteps, 200);
  assert.deepEqual(PENDULUM_INFO.actionSpace, { type: 'box', shape: [1], low: [-2], high: [2] });
  assert.deepEqual(PENDULUM_INFO.observationNames, ['cos_theta', 'sin_theta', 'theta_dot']);
  for (const p of PENDULUM_INFO.params) assert.ok(p.min < p.default && p.default < p.max, p.name);
  assert.equal(getEnvironment('Pendulum-v1').info, PENDULUM_INFO);
  assert.ok(ENVIRONMENTS['Pendulum-v1'].make() instanceof PendulumEnv);
});

test('angleNormalize maps into [-pi, pi) by whole turns, like Python ((x + pi) % 2pi) - pi', () => {
  assert.equal(angleNormalize(0), 0);
  assert.equal(angleNormalize(Math.PI), -Math.PI);
  assert.equal(angleNormalize(-Math.PI), -Math.PI);
  for (const x of [0.3, -0.3, 3.0, -3.0, 4.0, -4.0, 7.5, -7.5, 100.25, -100.25]) {
    const y = angleNormalize(x);
    assert.ok(y >= -Math.PI && y < Math.PI, `${x} -> ${y}`);
    assert.ok(Math.abs(y - refNormalize(x)) < 1e-12, `${x} -> ${y}`);
    const turns = (x - y) / (2 * Math.PI);
    assert.ok(Math.abs(turns - Math.round(turns)) < 1e-12, `${x} -> ${y}: whole turns`);
  }
});

test('pendulumDynamics matches the reference equations for several states and torques', () => {
  const out = new Float64Array(2);
  for (const s of STATES) {
    for (const u of [-2, -0.7, 0, 0.3, 2]) {
      const reward = pendulumDynamics(s, u, pendulumDefaults(), out);
      const [ref, refReward] = referenceStep(s, u);
      assertClose(out, ref, 1e-9, `state ${JSON.stringify(s)} u ${u}`);
      assert.ok(Math.abs(reward - refReward) <= 1e-9, `reward for ${JSON.stringify(s)} u ${u}: ${reward} vs ${refReward}`);
    }
  }
});

test('the reward is computed on the state before the update: 0 upright at rest, -pi^2 hanging down', () => {
  const out = new Float64Array(2);
  // -0 (the negated zero cost, as in Gymnasium), equal to 0
  assert.ok(pendulumDynamics([0, 0], 0, pendulumDefaults(), out) === 0);
  assert.deepEqual(Array.from(out), [0, 0]);
  assert.equal(pendulumDynamics([Math.PI, 0], 0, pendulumDefaults(), out), -(Math.PI ** 2));
  assert.equal(pendulumDynamics([-Math.PI, 0], 0, pendulumDefaults(), out), -(Math.PI ** 2));
  // velocity and torque terms
  assert.ok(Math.abs(pendulumDynamics([0, 2], 0, pendulumDefaults(), out) - -0.4) < 1e-15);
  assert.ok(Math.abs(pendulumDynamics([0, 0], 2, pendulumDefaults(), out) - -0.004) < 1e-15);
  // the worst reward Gymnasium documents: -(pi^2 + 0.1 * 8^2 + 0.001 * 2^2)
  const worst = pendulumDynamics([Math.PI, 8], -2, pendulumDefaults(), out);
  assert.ok(Math.abs(worst - -16.2736044) < 1e-7, `worst ${worst}`);
  // the reward ignores the step's outcome: same state, different torque, same angle/velocity part
  const r0 = pendulumDynamics([1.0, 0.5], 0, pendulumDefaults(), out);
  const r1 = pendulumDynamics([1.0, 0.5], 1, pendulumDefaults(), out);
  assert.ok(Math.abs(r0 - r1 - 0.001) < 1e-12);
});

test('torque is clipped to [-2, 2] in the dynamics and the cost; velocity is clipped to +-8', () => {
  const a = new Float64Array(2);
  const b = new Float64Array(2);
  const s = [0.7, -1.2];
  assert.equal(pendulumDynamics(s, 5, pendulumDefaults(), a), pendulumDynamics(s, 2, pendulumDefaults(), b));
  assert.deepEqual(a, b);
  assert.equal(pendulumDynamics(s, -100, pendulumDefaults(), a), pendulumDynamics(s, -2, pendulumDefaults(), b));
  assert.deepEqual(a, b);
  assert.equal(pendulumDynamics(s, Infinity, pendulumDefaults(), a), pendulumDynamics(s, 2, pendulumDefaults(), b));
  assert.deepEqual(a, b);
  pendulumDynamics([Math.PI / 2, 7.9], 2, pendulumDefaults(), a);
  assert.equal(a[1], 8);
  assert.equal(a[0], Math.PI / 2 + 8 * 0.05, 'the angle moves with the clipped new velocity');
  pendulumDynamics([-Math.PI / 2, -7.9], -2, pendulumDefaults(), a);
  assert.equal(a[1], -8);
});

test('a hand-computed step: gravity pulls the pendulum away from upright', () => {
  const out = new Float64Array(2);
  pendulumDynamics([Math.PI / 2, 0], 0, pendulumDefaults(), out);
  // thdot' = 3*10/2 * sin(pi/2) * 0.05 = 0.75; th' = pi/2 + 0.75 * 0.05
  assertClose(out, [Math.PI / 2 + 0.0375, 0.75], 1e-15, 'from horizontal');
  pendulumDynamics([0, 0], 1, pendulumDefaults(), out);
  assertClose(out, [0.0075, 0.15], 1e-15, 'torque only');
});

test('PendulumEnv.step follows the reference along a trajectory; rewards included', () => {
  const env = new PendulumEnv();
  const { obs } = env.reset({ seed: 11 });
  let ref = [Math.atan2(obs[1], obs[0]), obs[2]];
  const torques = [2, 2, -1.5, 0, 0.4, -2, -3, 1, 2, 0];
  for (const u of torques) {
    const r = env.step(u);
    const [next, reward] = referenceStep(ref, u);
    ref = next;
    assertClose(r.obs, obsOf(ref), 1e-9, `after u ${u}`);
    assert.ok(Math.abs(r.reward - reward) < 1e-9, `reward after u ${u}`);
    assert.equal(r.terminated, false);
  }
});

test('step accepts a number, a one-element array or a Float64Array alike', () => {
  const envs = [new PendulumEnv(), new PendulumEnv(), new PendulumEnv()];
  for (const e of envs) e.reset({ seed: 5 });
  const r = [envs[0].step(0.8), envs[1].step([0.8]), envs[2].step(Float64Array.of(0.8))];
  assert.deepEqual(r[0], r[1]);
  assert.deepEqual(r[0], r[2]);
});

test('invalid actions throw a RangeError and do not advance the episode; stepping before reset throws', () => {
  assert.throws(() => new PendulumEnv().step(0), /reset/);
  const env = new PendulumEnv();
  env.reset({ seed: 1 });
  assert.throws(
    () => env.step(NaN),
    (e: unknown) => e instanceof RangeError && e.message.includes('NaN'),
  );
  assert.throws(() => env.step([NaN]), RangeError);
  assert.throws(() => env.step([]), RangeError);
  assert.throws(() => env.step([1, 2]), RangeError);
  assert.throws(() => env.step(['1'] as unknown as number[]), RangeError);
  let steps = 0;
  for (;;) {
    steps++;
    if (env.step(0).truncated) break;
  }
  assert.equal(steps, 200);
});

test('never terminates; truncated at exactly step 200; stepping afterwards throws until reset', () => {
  const env = new PendulumEnv();
  let { obs } = env.reset({ seed: 3 });
  let total = 0;
  for (let n = 1; n <= 200; n++) {
    const r = env.step(controller(obs));
    obs = r.obs;
    total += r.reward;
    assert.ok(r.reward <= 0);
    assert.equal(r.terminated, false);
    assert.equal(r.truncated, n === 200, `truncated flag at ${n}`);
  }
  // the scripted controller swings up and holds: far better than hanging (about -200 * pi^2 / 2)
  assert.ok(total > -800, `return ${total}`);
  assert.ok(obs[0] > 0.99 && Math.abs(obs[2]) < 0.1, `held upright at the end: ${obs}`);
  assert.throws(() => env.step(0), /after the episode ended/);
  env.reset();
  assert.doesNotThrow(() => env.step(0));
});

test('reset draws theta uniformly in [-pi, pi] and theta_dot in [-1, 1]', () => {
  const env = new PendulumEnv();
  const lo = [Infinity, Infinity];
  const hi = [-Infinity, -Infinity];
  for (let seed = 0; seed < 300; seed++) {
    const { obs } = env.reset({ seed });
    assert.equal(obs.length, 3);
    const th = Math.atan2(obs[1], obs[0]);
    assert.ok(Math.abs(obs[0] ** 2 + obs[1] ** 2 - 1) < 1e-12);
    assert.ok(obs[2] >= -1 && obs[2] <= 1, `seed ${seed}: ${obs[2]}`);
    lo[0] = Math.min(lo[0], th);
    hi[0] = Math.max(hi[0], th);
    lo[1] = Math.min(lo[1], obs[2]);
    hi[1] = Math.max(hi[1], obs[2]);
  }
  assert.ok(lo[0] < -3.0 && hi[0] > 3.0, `theta range seen [${lo[0]}, ${hi[0]}]`);
  assert.ok(lo[1] < -0.95 && hi[1] > 0.95, `theta_dot range seen [${lo[1]}, ${hi[1]}]`);
});

test('same seed gives the same reset; different seeds differ; an unseeded reset continues the stream', () => {
  const a = new PendulumEnv();
  const b = new PendulumEnv();
  assert.deepEqual(a.reset({ seed: 42 }).obs, b.reset({ seed: 42 }).obs);
  assert.notDeepEqual(a.reset({ seed: 42 }).obs, a.reset({ seed: 43 }).obs);
  const first = a.reset({ seed: 7 }).obs;
  const second = a.reset().obs;
  b.reset({ seed: 7 });
  assert.deepEqual(b.reset().obs, second);
  assert.notDeepEqual(first, second);
});

test('params: reported in info, used by the dynamics as the equations say, not leaking into the next reset', () => {
  const s = [0.9, -0.4];
  const out = new Float64Array(2);
  for (const [p, args] of [
    [{ gravity: 9.81 }, [9.81, 1, 1]],
    [{ mass: 2.5 }, [10, 2.5, 1]],
    [{ length: 0.6 }, [10, 1, 0.6]],
    [{ gravity: 4, mass: 0.5, length: 2 }, [4, 0.5, 2]],
  ] as const) {
    for (const u of [-2, 0, 1.3]) {
      const reward = pendulumDynamics(s, u, { ...pendulumDefaults(), ...p }, out);
      const [ref, refReward] = referenceStep(s, u, ...args);
      assertClose(out, ref, 1e-9, `${JSON.stringify(p)} u ${u}`);
      assert.ok(Math.abs(reward - refReward) < 1e-12);
    }
  }
  const env = new PendulumEnv();
  const r = env.reset({ seed: 1, params: { length: 0.6 } });
  assert.deepEqual(r.info.params, { gravity: 10, mass: 1, length: 0.6 });
  const next = env.step(1).obs;
  assertClose(next, obsOf(referenceStep([Math.atan2(r.obs[1], r.obs[0]), r.obs[2]], 1, 10, 1, 0.6)[0]), 1e-9, 'env with length');
  assert.deepEqual(env.reset({ seed: 1 }).info.params, pendulumDefaults());
});

test('returned observations are fresh arrays', () => {
  const env = new PendulumEnv();
  const o0 = env.reset({ seed: 2 }).obs;
  const o1 = env.step(1).obs;
  assert.notEqual(o0, o1);
  o0.fill(9);
  o1.fill(9);
  const ref = new PendulumEnv();
  ref.reset({ seed: 2 });
  ref.step(1);
  assert.deepEqual(env.step(1).obs, ref.step(1).obs);
});

test('VecEnv runs Pendulum with Float64Array torques: truncation every 200 steps, autoreset, deterministic per seed', () => {
  const run = (seed: number): { log: number[][]; eps: { ret: number; length: number }[] } => {
    const vec = new VecEnv(() => new PendulumEnv(), 3, seed, { gravity: [8, 12] });
    assert.equal(vec.obsDim, 3);
    const actions = new Float64Array(3);
    const log: number[][] = [];
    for (let s = 0; s < 450; s++) {
      for (let i = 0; i < 3; i++) actions[i] = i === 0 ? controller(vec.obs.subarray(0, 3)) : i === 1 ? 0.5 : -2.5;
      const before = vec.obs.slice(3, 6);
      vec.step(actions);
      assert.ok(vec.rewards[1] <= 0 && vec.rewards[1] >= -16.3);
      assert.equal(vec.terminated[0] + vec.terminated[1] + vec.terminated[2], 0);
      const ended = (s + 1) % 200 === 0;
      assert.deepEqual(Array.from(vec.truncated), ended ? [1, 1, 1] : [0, 0, 0], `step ${s}`);
      if (!ended) assert.deepEqual(vec.obs.slice(3, 6), vec.nextObs.slice(3, 6));
      else assert.notDeepEqual(vec.obs.slice(3, 6), vec.nextObs.slice(3, 6));
      assert.ok(Math.abs(vec.nextObs[5] - before[2]) <= ((3 * 12) / 2) * 0.05 + 3 * 0.5 * 0.05 + 1e-12, 'bounded velocity change');
      log.push([...vec.obs, ...vec.nextObs, ...vec.rewards]);
    }
    return { log, eps: vec.drainEpisodes() };
  };
  const a = run(4);
  assert.equal(a.eps.length, 6);
  for (const e of a.eps) assert.equal(e.length, 200);
  // the controller beats constant torques
  assert.ok(a.eps[0].ret > a.eps[1].ret && a.eps[0].ret > a.eps[2].ret, JSON.stringify(a.eps));
  assert.deepEqual(run(4), a);
  assert.notDeepEqual(run(5).log, a.log);
});
