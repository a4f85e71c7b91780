/**
 * What the hidden evaluation of a generated CartPole task knows: how many held-out episodes it
 * runs, the reference return, and the deployment physics, drawn from the evaluation secret within
 * the band the brief states (nominal value ± the stated relative shift). The generator seed
 * alone never determines them.
 */
import type { PhysParams } from '../../../inner/envs/types.js';
import { heldOutSeeds } from '../../secret.js';

/** Held-out episodes per generated CartPole task. */
export const CARTPOLE_FAMILY_EPISODES = 30;

/** The hidden settings of a generated CartPole task (see `ControlTaskDef.hidden`). */
export function cartpoleHidden(nominal: PhysParams): { params: PhysParams; episodes: number; reference: number; referenceHow: string } {
  return { params: nominal, episodes: CARTPOLE_FAMILY_EPISODES, reference: 500, referenceHow: 'the maximum return (500 steps)' };
}

/**
 * The physics the policy is deployed on: each nominal value moved by a share of `shift` drawn
 * from the secret (uniform in [-shift, +shift]), kept inside the simulator's bounds.
 */
export function cartpoleDeployment(taskId: string, nominal: PhysParams, shift: number, bounds: Record<string, [number, number]>, secret: string): PhysParams {
  const out: PhysParams = {};
  for (const [name, value] of Object.entries(nominal)) {
    const u = (heldOutSeeds(`${taskId}/physics/${name}`, 1, secret)[0] & 0x7fffffff) / 0x80000000; // in [0, 1)
    const [lo, hi] = bounds[name] ?? [-Infinity, Infinity];
    out[name] = Math.min(hi, Math.max(lo, value * (1 + shift * (2 * u - 1))));
  }
  return out;
}
