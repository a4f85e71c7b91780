/**
 * What the evaluation of a generated Pendulum task knows: how many held-out episodes it runs (15),
 * the reference return (the scripted swing-up controller's on the nominal physics, `scripted.ts`),
 * and the deployment physics, drawn from the evaluation secret within the band the brief states
 * (the same rule as the CartPole family).
 */
import type { ControlTaskDef } from '../../control/define.js';
import type { ControlEvaluationSettings } from '../../control/evaluate.js';
import { deployedEvaluation } from '../evaluate-deployment.js';
import type { PendulumParams } from './define.js';
import { pendulumReference } from './scripted.js';

/** What the evaluation of the Pendulum task `def`, drawn with `p`, knows. */
export function pendulumEvaluation(def: ControlTaskDef, p: PendulumParams): ControlEvaluationSettings {
  const reference = pendulumReference(p.nominal);
  const referenceHow = `a scripted swing-up controller (energy pumping, then a PD hold) on the nominal physics: ${reference} over 200 steps`;
  return deployedEvaluation(def, p.nominal, p.shift, { reference, referenceHow });
}
