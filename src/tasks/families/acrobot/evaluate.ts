/**
 * What the evaluation of a generated Acrobot task knows: how many held-out episodes it runs (15),
 * the reference return (the scripted energy-pumping policy's on the nominal physics,
 * `scripted.ts`), and the deployment physics, drawn from the evaluation secret within the band the
 * brief states (the same rule as the CartPole family).
 */
import type { ControlTaskDef } from '../../control/define.js';
import type { ControlEvaluationSettings } from '../../control/evaluate.js';
import { deployedEvaluation } from '../evaluate-deployment.js';
import type { AcrobotParams } from './define.js';
import { acrobotReference } from './scripted.js';

/** What the evaluation of the Acrobot task `def`, drawn with `p`, knows. */
export function acrobotEvaluation(def: ControlTaskDef, p: AcrobotParams): ControlEvaluationSettings {
  const reference = acrobotReference(p.nominal);
  const referenceHow = `a scripted energy-pumping policy (torque the way the lower link swings relative to the upper) on the nominal physics: ${reference}`;
  return deployedEvaluation(def, p.nominal, p.shift, { reference, referenceHow });
}
