/**
 * Harness side, shared by the simulator families with a deployment shift (cartpole, pendulum,
 * acrobot): the physics a policy is deployed on, drawn from the evaluation secret within the band
 * the brief states. The generator seed alone never determines them.
 */
import type { PhysParams } from '../../inner/envs/types.js';
import { heldOutSeeds } from '../secret.js';

/**
 * The deployment physics: each nominal value moved by a share of `shift` drawn from the secret
 * (uniform in [-shift, +shift]), kept inside the simulator's bounds.
 */
export function deploymentPhysics(taskId: string, nominal: PhysParams, shift: number, bounds: Record<string, [number, number]>, secret: string): PhysParams {
  const out: PhysParams = {};
  for (const [name, value] of Object.entries(nominal)) {
    const u = (heldOutSeeds(`${taskId}/physics/${name}`, 1, secret)[0] & 0x7fffffff) / 0x80000000; // in [0, 1)
    const [lo, hi] = bounds[name] ?? [-Infinity, Infinity];
    out[name] = Math.min(hi, Math.max(lo, value * (1 + shift * (2 * u - 1))));
  }
  return out;
}
