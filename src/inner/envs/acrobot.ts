import { Rng } from '../../util/rng.js';
import type { Env, EnvInfo, PhysParams, ResetResult, StepResult } from './types.js';

/**
 * Acrobot-v1, faithful to Gymnasium's `classic_control/acrobot.py` with the "book" dynamics
 * (Sutton & Barto): two links hanging from a pivot, torque on the joint between them only,
 * one RK4 step of 0.2 s per action, angles wrapped to [−π, π], velocities clipped to ±4π / ±9π,
 * reset uniform in ±0.1 for every state variable, −1 reward per step (0 on the terminal step),
 * truncation at 500.
 *
 * Parameters: Gymnasium's simulator ignores LINK_LENGTH_2 (it only draws it) and fixes the
 * centres of mass at 0.5 m. Here each link's centre of mass sits at half its length, so
 * `linkLength2` matters; the defaults reproduce Gymnasium exactly. The moments of inertia stay
 * at Gymnasium's constant 1, and the terminal test stays Gymnasium's (on angles only).
 */
export const ACROBOT_INFO: EnvInfo = {
  id: 'Acrobot-v1',
  description: 'Two links hanging from a pivot, actuated only at the joint between them; swing the free end above the line one link length above the pivot.',
  observationNames: ['cos_theta1', 'sin_theta1', 'cos_theta2', 'sin_theta2', 'theta1_dot', 'theta2_dot'],
  observationSpace: {
    type: 'box',
    shape: [6],
    low: [-1, -1, -1, -1, -4 * Math.PI, -9 * Math.PI],
    high: [1, 1, 1, 1, 4 * Math.PI, 9 * Math.PI],
  },
  actionSpace: { type: 'discrete', n: 3 },
  maxEpisodeSteps: 500,
  params: [
    { name: 'linkLength1', default: 1.0, min: 0.3, max: 2, description: 'length of the upper link (m); its centre of mass is at half its length' },
    { name: 'linkLength2', default: 1.0, min: 0.3, max: 2, description: 'length of the lower link (m); its centre of mass is at half its length' },
    { name: 'linkMass1', default: 1.0, min: 0.2, max: 5, description: 'mass of the upper link (kg)' },
    { name: 'linkMass2', default: 1.0, min: 0.2, max: 5, description: 'mass of the lower link (kg)' },
  ],
};

/** Gymnasium's Acrobot constants that are not parameters. */
export const ACROBOT_CONSTANTS = {
  dt: 0.2,
  gravity: 9.8,
  linkMoi: 1.0,
  maxVel1: 4 * Math.PI,
  maxVel2: 9 * Math.PI,
  torques: [-1.0, 0.0, 1.0] as readonly number[],
  resetBound: 0.1,
} as const;

/** Default physical parameters (Gymnasium's). */
export function acrobotDefaults(): PhysParams {
  return Object.fromEntries(ACROBOT_INFO.params.map((p) => [p.name, p.default]));
}

/** Gymnasium's terminal test: the free end is above the line one unit above the pivot. */
export function acrobotTerminal(state: ArrayLike<number>): boolean {
  return -Math.cos(state[0]) - Math.cos(state[1] + state[0]) > 1.0;
}

/**
 * Time derivative of the augmented state [θ1, θ2, θ̇1, θ̇2, torque] under the book dynamics,
 * written into `out` (the torque is held constant, so its derivative is 0).
 */
export function acrobotDerivatives(s: ArrayLike<number>, p: PhysParams, out: Float64Array): void {
  const m1 = p.linkMass1;
  const m2 = p.linkMass2;
  const l1 = p.linkLength1;
  const lc1 = p.linkLength1 / 2;
  const lc2 = p.linkLength2 / 2;
  const i1 = ACROBOT_CONSTANTS.linkMoi;
  const i2 = ACROBOT_CONSTANTS.linkMoi;
  const g = ACROBOT_CONSTANTS.gravity;
  const theta1 = s[0];
  const theta2 = s[1];
  const dtheta1 = s[2];
  const dtheta2 = s[3];
  const torque = s[4];
  const cos2 = Math.cos(theta2);
  const sin2 = Math.sin(theta2);
  const d1 = m1 * lc1 * lc1 + m2 * (l1 * l1 + lc2 * lc2 + 2 * l1 * lc2 * cos2) + i1 + i2;
  const d2 = m2 * (lc2 * lc2 + l1 * lc2 * cos2) + i2;
  const phi2 = m2 * lc2 * g * Math.cos(theta1 + theta2 - Math.PI / 2);
  const phi1 =
    -m2 * l1 * lc2 * dtheta2 * dtheta2 * sin2 - 2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * sin2 + (m1 * lc1 + m2 * l1) * g * Math.cos(theta1 - Math.PI / 2) + phi2;
  // "book" variant: includes the m2·l1·lc2·θ̇1²·sin θ2 term that the NIPS paper omits
  const ddtheta2 = (torque + (d2 / d1) * phi1 - m2 * l1 * lc2 * dtheta1 * dtheta1 * sin2 - phi2) / (m2 * lc2 * lc2 + i2 - (d2 * d2) / d1);
  const ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
  out[0] = dtheta1;
  out[1] = dtheta2;
  out[2] = ddtheta1;
  out[3] = ddtheta2;
  out[4] = 0;
}

/** Wraps `x` into [lo, hi] by whole periods, as Gymnasium's `wrap` (values on a bound stay there). */
function wrap(x: number, lo: number, hi: number): number {
  if (!Number.isFinite(x)) return x;
  const diff = hi - lo;
  // far outside: jump most of the way first, then finish with Gymnasium's loops
  if (x > hi + 2 * diff || x < lo - 2 * diff) x -= Math.trunc((x - lo) / diff) * diff;
  while (x > hi) x -= diff;
  while (x < lo) x += diff;
  return x;
}

function clip(x: number, lo: number, hi: number): number {
  return Math.min(Math.max(x, lo), hi);
}

/**
 * One Acrobot step: a single classical RK4 step of length dt over the augmented state
 * [θ1, θ2, θ̇1, θ̇2, torque] (Gymnasium's `rk4` over t = [0, dt]), then the angle wrap and the
 * velocity clip. Writes [θ1, θ2, θ̇1, θ̇2] into `out` and returns true when the new state is terminal.
 */
export function acrobotDynamics(state: ArrayLike<number>, action: number, p: PhysParams, out: Float64Array): boolean {
  const { dt, torques, maxVel1, maxVel2 } = ACROBOT_CONSTANTS;
  const y0 = Float64Array.of(state[0], state[1], state[2], state[3], torques[action]);
  const k1 = new Float64Array(5);
  const k2 = new Float64Array(5);
  const k3 = new Float64Array(5);
  const k4 = new Float64Array(5);
  const tmp = new Float64Array(5);
  const dt2 = dt / 2.0;
  acrobotDerivatives(y0, p, k1);
  for (let i = 0; i < 5; i++) tmp[i] = y0[i] + dt2 * k1[i];
  acrobotDerivatives(tmp, p, k2);
  for (let i = 0; i < 5; i++) tmp[i] = y0[i] + dt2 * k2[i];
  acrobotDerivatives(tmp, p, k3);
  for (let i = 0; i < 5; i++) tmp[i] = y0[i] + dt * k3[i];
  acrobotDerivatives(tmp, p, k4);
  const ns = new Float64Array(4);
  for (let i = 0; i < 4; i++) ns[i] = y0[i] + (dt / 6.0) * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
  out[0] = wrap(ns[0], -Math.PI, Math.PI);
  out[1] = wrap(ns[1], -Math.PI, Math.PI);
  out[2] = clip(ns[2], -maxVel1, maxVel1);
  out[3] = clip(ns[3], -maxVel2, maxVel2);
  return acrobotTerminal(out);
}

/** The observation of a state: [cos θ1, sin θ1, cos θ2, sin θ2, θ̇1, θ̇2] (a fresh array). */
export function acrobotObservation(state: ArrayLike<number>): Float64Array {
  return Float64Array.of(Math.cos(state[0]), Math.sin(state[0]), Math.cos(state[1]), Math.sin(state[1]), state[2], state[3]);
}

/** Acrobot-v1 with Gymnasium's `reset`/`step` API and a TimeLimit of 500 steps. */
export class AcrobotEnv implements Env {
  readonly info = ACROBOT_INFO;
  private state = new Float64Array(4);
  private params: PhysParams = acrobotDefaults();
  private rng = new Rng(0);
  private elapsed = 0;
  private done = true;

  /** Starts an episode with physical parameters `params` (defaults when omitted). */
  reset(options: { seed?: number; params?: PhysParams } = {}): ResetResult {
    if (options.seed !== undefined) this.rng = new Rng(options.seed);
    this.params = { ...acrobotDefaults(), ...(options.params ?? {}) };
    const b = ACROBOT_CONSTANTS.resetBound;
    for (let i = 0; i < 4; i++) this.state[i] = this.rng.uniform(-b, b);
    this.elapsed = 0;
    this.done = false;
    return { obs: acrobotObservation(this.state), info: { params: { ...this.params } } };
  }

  /** Applies torque −1 (0), 0 (1) or +1 (2) at the joint between the links. */
  step(action: number | ArrayLike<number>): StepResult {
    if (typeof action !== 'number' && action.length !== 1) {
      throw new RangeError(`Acrobot action must be 0, 1 or 2 (or a one-element array), got an array of length ${action.length}`);
    }
    const a = typeof action === 'number' ? action : action[0];
    if (a !== 0 && a !== 1 && a !== 2) throw new RangeError(`Acrobot action must be 0, 1 or 2, got ${String(a)}`);
    if (this.done) throw new Error('Acrobot.step called after the episode ended; call reset() first');
    const next = new Float64Array(4);
    const terminated = acrobotDynamics(this.state, a, this.params, next);
    this.state = next;
    this.elapsed += 1;
    const truncated = !terminated && this.elapsed >= ACROBOT_INFO.maxEpisodeSteps;
    this.done = terminated || truncated;
    return { obs: acrobotObservation(next), reward: terminated ? 0.0 : -1.0, terminated, truncated, info: {} };
  }
}
