/**
 * Harness side, shared by the simulator families with a deployment shift (cartpole, pendulum,
 * acrobot): the physics a policy is deployed on, drawn from the evaluation secret within the band
 * the brief states. The generator seed alone never determines them.
 */
import { getEnvironment } from '../../inner/envs/index.js';
import type { PhysParams } from '../../inner/envs/types.js';
import type { ControlTaskDef } from '../control/define.js';
import type { ControlEvaluationSettings } from '../control/evaluate.js';
import { heldOutSeeds } from '../secret.js';
import { simBounds } from './sim.js';

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

/**
 * What the evaluation of a simulator family's task knows when its deployment physics are drawn
 * from the secret within ±`shift` of the `nominal` physics (the simulator's bounds kept).
 */
export function deployedEvaluation(
  def: ControlTaskDef,
  nominal: PhysParams,
  shift: number,
  known: { reference: number; referenceHow: string },
): ControlEvaluationSettings {
  const bounds = simBounds(getEnvironment(def.envId).info);
  return { params: nominal, ...known, deployment: (secret) => deploymentPhysics(def.id, nominal, shift, bounds, secret) };
}
