import { Rng } from '../../util/rng.js';
import type { Env, EnvInfo, PhysParams, ResetResult, StepResult } from './types.js';

/**
 * Pendulum-v1, faithful to Gymnasium's `classic_control/pendulum.py`: swing a pendulum up and
 * keep it upright with a bounded torque. θ = 0 is upright. Semi-implicit Euler with dt 0.05:
 * θ̇ += (3g/(2l)·sin θ + 3/(m l²)·u)·dt, clipped to ±8, then θ += θ̇·dt. The reward is
 * −(normalised θ² + 0.1·θ̇² + 0.001·u²) on the state before the update; never terminates;
 * reset θ uniform in [−π, π], θ̇ uniform in [−1, 1]; truncation at 200.
 */
export const PENDULUM_INFO: EnvInfo = {
  id: 'Pendulum-v1',
  description: 'A pendulum hanging from a fixed pivot, driven by a bounded torque; swing it up and hold it upright (theta = 0) with little speed and effort.',
  observationNames: ['cos_theta', 'sin_theta', 'theta_dot'],
  observationSpace: { type: 'box', shape: [3], low: [-1, -1, -8], high: [1, 1, 8] },
  actionSpace: { type: 'box', shape: [1], low: [-2], high: [2] },
  maxEpisodeSteps: 200,
  params: [
    { name: 'gravity', default: 10.0, min: 1, max: 25, description: 'gravitational acceleration (m/s²)' },
    { name: 'mass', default: 1.0, min: 0.2, max: 5, description: 'mass of the pendulum (kg)' },
    { name: 'length', default: 1.0, min: 0.2, max: 3, description: 'length of the pendulum (m)' },
  ],
};

/** Gymnasium's Pendulum constants that are not parameters. */
export const PENDULUM_CONSTANTS = {
  dt: 0.05,
  maxSpeed: 8,
  maxTorque: 2.0,
  resetTheta: Math.PI,
  resetThetaDot: 1.0,
} as const;

/** Default physical parameters (Gymnasium's). */
export function pendulumDefaults(): PhysParams {
  return Object.fromEntries(PENDULUM_INFO.params.map((p) => [p.name, p.default]));
}

/** Gymnasium's `angle_normalize`: ((x + π) mod 2π) − π with a floored modulo, so the result is in [−π, π). */
export function angleNormalize(x: number): number {
  const period = 2 * Math.PI;
  let r = (x + Math.PI) % period;
  if (r !== 0 && r < 0) r += period;
  return r - Math.PI;
}

/**
 * One Pendulum step from [θ, θ̇] with torque `u` (clipped to ±2), writing [θ, θ̇] into `out`.
 * Returns the reward, which Gymnasium computes on the state before the update.
 */
export function pendulumDynamics(state: ArrayLike<number>, u: number, p: PhysParams, out: Float64Array): number {
  const { dt, maxSpeed, maxTorque } = PENDULUM_CONSTANTS;
  const th = state[0];
  const thdot = state[1];
  const g = p.gravity;
  const m = p.mass;
  const l = p.length;
  const torque = Math.min(Math.max(u, -maxTorque), maxTorque);
  const costs = angleNormalize(th) ** 2 + 0.1 * thdot ** 2 + 0.001 * torque ** 2;
  let newThdot = thdot + (((3 * g) / (2 * l)) * Math.sin(th) + (3.0 / (m * l ** 2)) * torque) * dt;
  newThdot = Math.min(Math.max(newThdot, -maxSpeed), maxSpeed);
  out[0] = th + newThdot * dt;
  out[1] = newThdot;
  return -costs;
}

/** The observation of a state: [cos θ, sin θ, θ̇] (a fresh array). */
export function pendulumObservation(state: ArrayLike<number>): Float64Array {
  return Float64Array.of(Math.cos(state[0]), Math.sin(state[0]), state[1]);
}

/** Pendulum-v1 with Gymnasium's `reset`/`step` API and a TimeLimit of 200 steps. */
export class PendulumEnv implements Env {
  readonly info = PENDULUM_INFO;
  private state = new Float64Array(2);
  private params: PhysParams = pendulumDefaults();
  private rng = new Rng(0);
  private elapsed = 0;
  private done = true;

  /** Starts an episode with physical parameters `params` (defaults when omitted). */
  reset(options: { seed?: number; params?: PhysParams } = {}): ResetResult {
    if (options.seed !== undefined) this.rng = new Rng(options.seed);
    this.params = { ...pendulumDefaults(), ...(options.params ?? {}) };
    const { resetTheta, resetThetaDot } = PENDULUM_CONSTANTS;
    this.state[0] = this.rng.uniform(-resetTheta, resetTheta);
    this.state[1] = this.rng.uniform(-resetThetaDot, resetThetaDot);
    this.elapsed = 0;
    this.done = false;
    return { obs: pendulumObservation(this.state), info: { params: { ...this.params } } };
  }

  /**
   * Applies torque `u` (a number or a one-element array); values outside [−2, 2] are clipped,
   * as Gymnasium does. NaN, non-numbers and arrays of another length throw.
   */
  step(action: number | ArrayLike<number>): StepResult {
    if (typeof action !== 'number' && action.length !== 1) {
      throw new RangeError(`Pendulum action must be a torque or a one-element array, got an array of length ${action.length}`);
    }
    const u = typeof action === 'number' ? action : action[0];
    if (typeof u !== 'number' || Number.isNaN(u)) throw new RangeError(`Pendulum action must be a number, got ${String(u)}`);
    if (this.done) throw new Error('Pendulum.step called after the episode ended; call reset() first');
    const next = new Float64Array(2);
    const reward = pendulumDynamics(this.state, u, this.params, next);
    this.state = next;
    this.elapsed += 1;
    const truncated = this.elapsed >= PENDULUM_INFO.maxEpisodeSteps;
    this.done = truncated;
    return { obs: pendulumObservation(next), reward, terminated: false, truncated, info: {} };
  }
}
