/**
 * What the evaluation of a generated CartPole task knows: how many held-out episodes it runs and
 * the reference return. Its deployment physics are drawn from the evaluation secret within the
 * band the brief states, by the rule the simulator families share (`../evaluate-deployment.ts`).
 */
import type { ControlTaskDef } from '../../control/define.js';
import type { ControlEvaluationSettings } from '../../control/evaluate.js';
import { deployedEvaluation } from '../evaluate-deployment.js';
import type { CartpoleParams } from './define.js';

/** What the evaluation of the CartPole task `def`, drawn with `p`, knows. */
export function cartpoleEvaluation(def: ControlTaskDef, p: CartpoleParams): ControlEvaluationSettings {
  return deployedEvaluation(def, p.nominal, p.shift, { reference: 500, referenceHow: 'the maximum return (500 steps)' });
}
