import { Rng } from '../../util/rng.js';
import type { Env, EnvInfo, PhysParams, ResetResult, StepResult } from './types.js';

/**
 * MountainCar-v0, faithful to Gymnasium's `classic_control/mountain_car.py`:
 * an underpowered car in a valley must rock back and forth to reach the flag at position 0.5.
 * v += (a − 1)·force − cos(3p)·gravity, v clipped to ±0.07, p += v, p clipped to [−1.2, 0.6],
 * velocity zeroed on hitting the left wall, goal p ≥ 0.5 with v ≥ 0, −1 reward per step,
 * reset p uniform in [−0.6, −0.4] and v = 0, truncation at 200.
 */
export const MOUNTAIN_CAR_INFO: EnvInfo = {
  id: 'MountainCar-v0',
  description: 'An underpowered car at the bottom of a valley; accelerate left, right or not at all to build momentum and reach the flag on the right hill.',
  observationNames: ['position', 'velocity'],
  observationSpace: { type: 'box', shape: [2], low: [-1.2, -0.07], high: [0.6, 0.07] },
  actionSpace: { type: 'discrete', n: 3 },
  maxEpisodeSteps: 200,
  params: [
    {
      name: 'force',
      default: 0.001,
      min: 0.0002,
      max: 0.005,
      description: 'velocity change per step from the engine (accelerate left: −force, right: +force)',
    },
    { name: 'gravity', default: 0.0025, min: 0.0005, max: 0.01, description: 'velocity change per step from gravity, scaled by the slope cos(3·position)' },
  ],
};

/** Gymnasium's MountainCar constants that are not parameters. */
export const MOUNTAIN_CAR_CONSTANTS = {
  minPosition: -1.2,
  maxPosition: 0.6,
  maxSpeed: 0.07,
  goalPosition: 0.5,
  goalVelocity: 0,
  resetLow: -0.6,
  resetHigh: -0.4,
} as const;

/** Default physical parameters (Gymnasium's). */
export function mountainCarDefaults(): PhysParams {
  return Object.fromEntries(MOUNTAIN_CAR_INFO.params.map((p) => [p.name, p.default]));
}

/**
 * One MountainCar step from [position, velocity] with action 0 (left), 1 (none) or 2 (right),
 * writing the next state into `out`. Returns true when the goal is reached.
 */
export function mountainCarDynamics(state: ArrayLike<number>, action: number, p: PhysParams, out: Float64Array): boolean {
  const { minPosition, maxPosition, maxSpeed, goalPosition, goalVelocity } = MOUNTAIN_CAR_CONSTANTS;
  let position = state[0];
  let velocity = state[1];
  velocity += (action - 1) * p.force + Math.cos(3 * position) * -p.gravity;
  velocity = Math.min(Math.max(velocity, -maxSpeed), maxSpeed);
  position += velocity;
  position = Math.min(Math.max(position, minPosition), maxPosition);
  if (position === minPosition && velocity < 0) velocity = 0;
  out[0] = position;
  out[1] = velocity;
  return position >= goalPosition && velocity >= goalVelocity;
}

/** MountainCar-v0 with Gymnasium's `reset`/`step` API and a TimeLimit of 200 steps. */
export class MountainCarEnv implements Env {
  readonly info = MOUNTAIN_CAR_INFO;
  private state = new Float64Array(2);
  private params: PhysParams = mountainCarDefaults();
  private rng = new Rng(0);
  private elapsed = 0;
  private done = true;

  /** Starts an episode with physical parameters `params` (defaults when omitted). */
  reset(options: { seed?: number; params?: PhysParams } = {}): ResetResult {
    if (options.seed !== undefined) this.rng = new Rng(options.seed);
    this.params = { ...mountainCarDefaults(), ...(options.params ?? {}) };
    this.state[0] = this.rng.uniform(MOUNTAIN_CAR_CONSTANTS.resetLow, MOUNTAIN_CAR_CONSTANTS.resetHigh);
    this.state[1] = 0;
    this.elapsed = 0;
    this.done = false;
    return { obs: Float64Array.from(this.state), info: { params: { ...this.params } } };
  }

  /** Accelerates left (0), not at all (1) or right (2). */
  step(action: number | ArrayLike<number>): StepResult {
    if (typeof action !== 'number' && action.length !== 1) {
      throw new RangeError(`MountainCar action must be 0, 1 or 2 (or a one-element array), got an array of length ${action.length}`);
    }
    const a = typeof action === 'number' ? action : action[0];
    if (a !== 0 && a !== 1 && a !== 2) throw new RangeError(`MountainCar action must be 0, 1 or 2, got ${String(a)}`);
    if (this.done) throw new Error('MountainCar.step called after the episode ended; call reset() first');
    const next = new Float64Array(2);
    const terminated = mountainCarDynamics(this.state, a, this.params, next);
    this.state = next;
    this.elapsed += 1;
    const truncated = !terminated && this.elapsed >= MOUNTAIN_CAR_INFO.maxEpisodeSteps;
    this.done = terminated || truncated;
    return { obs: Float64Array.from(next), reward: -1.0, terminated, truncated, info: {} };
  }
}
