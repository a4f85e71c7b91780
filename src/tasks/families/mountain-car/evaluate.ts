/**
 * What the evaluation of a generated MountainCar task knows: how many held-out episodes it runs
 * (20) and the reference return (the scripted policy's on the task's physics, `scripted.ts`).
 * There is no deployment shift: the episodes run on the stated physics.
 */
import type { ControlTaskDef } from '../../control/define.js';
import type { ControlEvaluationSettings } from '../../control/evaluate.js';
import type { MountainCarParams } from './define.js';
import { mountainCarReference } from './scripted.js';

/** What the evaluation of the MountainCar task drawn with `p` knows. */
export function mountainCarEvaluation(_def: ControlTaskDef, p: MountainCarParams): ControlEvaluationSettings {
  const reference = mountainCarReference(p.physics);
  return {
    params: p.physics,
    reference,
    referenceHow: `a scripted policy that swings left for the best number of steps, then accelerates the way the car moves: ${reference} on the task's physics`,
  };
}
