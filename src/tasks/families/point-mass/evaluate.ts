/**
 * What the evaluation of a generated point-mass task knows: how many held-out episodes it runs
 * (20, each with its own start and target), the reference return (the scripted controller's on the
 * nominal physics, `scripted.ts`), and the deployment physics, drawn from the evaluation secret
 * within the band the brief states (the same rule as the other simulator families).
 */
import type { ControlTaskDef } from '../../control/define.js';
import type { ControlEvaluationSettings } from '../../control/evaluate.js';
import { deployedEvaluation } from '../evaluate-deployment.js';
import type { PointMassParams } from './define.js';
import { pointMassReference } from './scripted.js';

/** What the evaluation of the point-mass task `def`, drawn with `p`, knows. */
export function pointMassEvaluation(def: ControlTaskDef, p: PointMassParams): ControlEvaluationSettings {
  const reference = pointMassReference(p.nominal);
  const referenceHow =
    'a scripted controller (on each axis, the speed it can still brake from, reached ' +
    `in two steps, drag cancelled) on the nominal physics: ${reference} over 200 steps`;
  return deployedEvaluation(def, p.nominal, p.shift, { reference, referenceHow });
}
