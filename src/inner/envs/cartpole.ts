import { Rng } from '../../util/rng.js';
import type { Env, EnvInfo, PhysParams, ResetResult, StepResult } from './types.js';

/**
 * CartPole-v1, faithful to Gymnasium's `classic_control/cartpole.py`:
 * Euler integration with tau 0.02, force ±10 N, failure at |theta| > 12° or |x| > 2.4,
 * reset uniform in ±0.05 for every state variable, +1 reward per step, truncation at 500.
 */
export const CARTPOLE_INFO: EnvInfo = {
  id: 'CartPole-v1',
  description: 'A pole hinged on a cart moving on a frictionless track; push the cart left or right to keep the pole upright.',
  observationNames: ['x', 'x_dot', 'theta', 'theta_dot'],
  observationSpace: {
    type: 'box',
    shape: [4],
    low: [-4.8, -Infinity, -0.41887902047863906, -Infinity],
    high: [4.8, Infinity, 0.41887902047863906, Infinity],
  },
  actionSpace: { type: 'discrete', n: 2 },
  maxEpisodeSteps: 500,
  params: [
    { name: 'gravity', default: 9.8, min: 1, max: 25, description: 'gravitational acceleration (m/s²)' },
    { name: 'massCart', default: 1.0, min: 0.1, max: 10, description: 'mass of the cart (kg)' },
    { name: 'massPole', default: 0.1, min: 0.01, max: 2, description: 'mass of the pole (kg)' },
    { name: 'poleLength', default: 0.5, min: 0.1, max: 2, description: 'half the length of the pole (m)' },
    { name: 'forceMag', default: 10.0, min: 1, max: 30, description: 'magnitude of the push (N)' },
  ],
};

/** Gymnasium's CartPole thresholds and step size. */
export const CARTPOLE_CONSTANTS = {
  tau: 0.02,
  thetaThresholdRadians: (12 * 2 * Math.PI) / 360,
  xThreshold: 2.4,
  resetBound: 0.05,
} as const;

/** Default physical parameters (Gymnasium's). */
export function cartpoleDefaults(): PhysParams {
  return Object.fromEntries(CARTPOLE_INFO.params.map((p) => [p.name, p.default]));
}

/**
 * One Euler step of the CartPole equations of motion (Florian 2005, as in Gymnasium),
 * writing the next state into `out`. Returns true when the new state is terminal.
 */
export function cartpoleDynamics(state: ArrayLike<number>, action: number, p: PhysParams, out: Float64Array): boolean {
  const { tau, thetaThresholdRadians, xThreshold } = CARTPOLE_CONSTANTS;
  const x = state[0];
  const xDot = state[1];
  const theta = state[2];
  const thetaDot = state[3];
  const totalMass = p.massPole + p.massCart;
  const poleMassLength = p.massPole * p.poleLength;
  const force = action === 1 ? p.forceMag : -p.forceMag;
  const cos = Math.cos(theta);
  const sin = Math.sin(theta);
  const temp = (force + poleMassLength * thetaDot * thetaDot * sin) / totalMass;
  const thetaAcc = (p.gravity * sin - cos * temp) / (p.poleLength * (4.0 / 3.0 - (p.massPole * cos * cos) / totalMass));
  const xAcc = temp - (poleMassLength * thetaAcc * cos) / totalMass;
  out[0] = x + tau * xDot;
  out[1] = xDot + tau * xAcc;
  out[2] = theta + tau * thetaDot;
  out[3] = thetaDot + tau * thetaAcc;
  return out[0] < -xThreshold || out[0] > xThreshold || out[2] < -thetaThresholdRadians || out[2] > thetaThresholdRadians;
}

/** CartPole-v1 with Gymnasium's `reset`/`step` API and a TimeLimit of 500 steps. */
export class CartPoleEnv implements Env {
  readonly info = CARTPOLE_INFO;
  private state = new Float64Array(4);
  private params: PhysParams = cartpoleDefaults();
  private rng = new Rng(0);
  private elapsed = 0;
  private done = true;

  /** Starts an episode with physical parameters `params` (defaults when omitted). */
  reset(options: { seed?: number; params?: PhysParams } = {}): ResetResult {
    if (options.seed !== undefined) this.rng = new Rng(options.seed);
    this.params = { ...cartpoleDefaults(), ...(options.params ?? {}) };
    const b = CARTPOLE_CONSTANTS.resetBound;
    for (let i = 0; i < 4; i++) this.state[i] = this.rng.uniform(-b, b);
    this.elapsed = 0;
    this.done = false;
    return { obs: Float64Array.from(this.state), info: { params: { ...this.params } } };
  }

  /** Pushes left (0) or right (1). */
  step(action: number | ArrayLike<number>): StepResult {
    const a = typeof action === 'number' ? action : action[0];
    if (a !== 0 && a !== 1) throw new RangeError(`CartPole action must be 0 or 1, got ${String(a)}`);
    if (this.done) throw new Error('CartPole.step called after the episode ended; call reset() first');
    const next = new Float64Array(4);
    const terminated = cartpoleDynamics(this.state, a, this.params, next);
    this.state = next;
    this.elapsed += 1;
    const truncated = !terminated && this.elapsed >= CARTPOLE_INFO.maxEpisodeSteps;
    this.done = terminated || truncated;
    return { obs: Float64Array.from(next), reward: 1.0, terminated, truncated, info: {} };
  }
}
