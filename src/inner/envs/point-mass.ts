import { Rng } from '../../util/rng.js';
import type { Env, EnvInfo, PhysParams, ResetResult, StepResult } from './types.js';

/**
 * PointMass-v0 (built in; no Gymnasium counterpart): a puck on a flat square table, 2 m a side,
 * pushed by a two-dimensional force towards a target point that changes every episode. A
 * double integrator with linear drag, semi-implicit Euler with dt 0.05:
 * v += (u·force/mass − damping·v)·dt per axis (u clipped to [−1, 1]², v clipped to ±2 m/s),
 * then p += v·dt; a wall (|p| = 1) stops the puck's motion across it. The reward is
 * −(distance to the target + 0.05·|u|²) on the state after the step; never terminates;
 * reset puck and target each uniform in [−0.9, 0.9]², at rest; truncation at 200.
 */
export const POINT_MASS_INFO: EnvInfo = {
  id: 'PointMass-v0',
  description:
    'A puck on a flat square table pushed by a two-dimensional force (each axis in [−1, 1] times the largest force); ' +
    'bring it to the target point of the episode and keep it there with little effort.',
  observationNames: ['x', 'y', 'x_dot', 'y_dot', 'dx', 'dy'],
  observationSpace: { type: 'box', shape: [6], low: [-1, -1, -2, -2, -2, -2], high: [1, 1, 2, 2, 2, 2] },
  actionSpace: { type: 'box', shape: [2], low: [-1, -1], high: [1, 1] },
  maxEpisodeSteps: 200,
  params: [
    { name: 'mass', default: 1.0, min: 0.1, max: 10, description: 'mass of the puck (kg)' },
    { name: 'damping', default: 0.5, min: 0, max: 5, description: 'linear drag: deceleration per unit of speed (1/s)' },
    { name: 'force', default: 1.0, min: 0.1, max: 10, description: 'largest force along each axis (N): an action of ±1 applies ±force' },
  ],
};

/** The constants that are not parameters. */
export const POINT_MASS_CONSTANTS = {
  dt: 0.05,
  maxSpeed: 2,
  /** Walls at ±halfWidth on both axes. */
  halfWidth: 1,
  /** Puck and target start uniform in ±resetRange on both axes. */
  resetRange: 0.9,
  /** Weight of the effort |u|² in the reward. */
  effortCost: 0.05,
} as const;

/** Default physical parameters. */
export function pointMassDefaults(): PhysParams {
  return Object.fromEntries(POINT_MASS_INFO.params.map((p) => [p.name, p.default]));
}

/**
 * One step from state [x, y, ẋ, ẏ, target_x, target_y] with force command `u` (two values, each
 * clipped to [−1, 1]), writing the next state into `out`. Returns the reward on the next state.
 */
export function pointMassDynamics(state: ArrayLike<number>, u: ArrayLike<number>, p: PhysParams, out: Float64Array): number {
  const { dt, maxSpeed, halfWidth, effortCost } = POINT_MASS_CONSTANTS;
  let effort = 0;
  for (let k = 0; k < 2; k++) {
    const a = Math.min(Math.max(u[k], -1), 1);
    effort += a * a;
    let v = state[2 + k] + ((a * p.force) / p.mass - p.damping * state[2 + k]) * dt;
    v = Math.min(Math.max(v, -maxSpeed), maxSpeed);
    let x = state[k] + v * dt;
    if (x > halfWidth || x < -halfWidth) {
      x = Math.min(Math.max(x, -halfWidth), halfWidth);
      v = 0;
    }
    out[k] = x;
    out[2 + k] = v;
  }
  out[4] = state[4];
  out[5] = state[5];
  return -(Math.hypot(out[0] - out[4], out[1] - out[5]) + effortCost * effort);
}

/** The observation of a state: [x, y, ẋ, ẏ, target_x − x, target_y − y] (a fresh array). */
export function pointMassObservation(s: ArrayLike<number>): Float64Array {
  return Float64Array.of(s[0], s[1], s[2], s[3], s[4] - s[0], s[5] - s[1]);
}

/** PointMass-v0 with the Gymnasium `reset`/`step` API and a TimeLimit of 200 steps. */
export class PointMassEnv implements Env {
  readonly info = POINT_MASS_INFO;
  private state = new Float64Array(6);
  private params: PhysParams = pointMassDefaults();
  private rng = new Rng(0);
  private elapsed = 0;
  private done = true;

  /** Starts an episode with physical parameters `params` (defaults when omitted): puck at rest, a new target. */
  reset(options: { seed?: number; params?: PhysParams } = {}): ResetResult {
    if (options.seed !== undefined) this.rng = new Rng(options.seed);
    this.params = { ...pointMassDefaults(), ...(options.params ?? {}) };
    const r = POINT_MASS_CONSTANTS.resetRange;
    this.state[0] = this.rng.uniform(-r, r);
    this.state[1] = this.rng.uniform(-r, r);
    this.state[2] = 0;
    this.state[3] = 0;
    this.state[4] = this.rng.uniform(-r, r);
    this.state[5] = this.rng.uniform(-r, r);
    this.elapsed = 0;
    this.done = false;
    return { obs: pointMassObservation(this.state), info: { params: { ...this.params } } };
  }

  /** Pushes with force command `u` (two values; each clipped to [−1, 1]). NaN or another length throws. */
  step(action: number | ArrayLike<number>): StepResult {
    if (typeof action === 'number' || action.length !== 2) {
      throw new RangeError(
        `PointMass action must be a two-element array, got ${typeof action === 'number' ? 'a number' : `an array of length ${action.length}`}`,
      );
    }
    for (let k = 0; k < 2; k++) {
      if (typeof action[k] !== 'number' || Number.isNaN(action[k])) throw new RangeError(`PointMass action must hold numbers, got ${String(action[k])}`);
    }
    if (this.done) throw new Error('PointMass.step called after the episode ended; call reset() first');
    const next = new Float64Array(6);
    const reward = pointMassDynamics(this.state, action, this.params, next);
    this.state = next;
    this.elapsed += 1;
    const truncated = this.elapsed >= POINT_MASS_INFO.maxEpisodeSteps;
    this.done = truncated;
    return { obs: pointMassObservation(next), reward, terminated: false, truncated, info: {} };
  }
}
