/**
 * The evaluation side of the task families (harness side only: `tasks/hidden.ts` imports it):
 * what the evaluation of a task a family drew knows, built from the family's name and the
 * parameters it drew (`ExtraTask.madeFrom`) by the family's own `evaluate.ts`.
 */
import type { ControlTaskDef } from '../control/define.js';
import type { ControlEvaluationSettings } from '../control/evaluate.js';
import type { MadeByFamily } from '../extra.js';
import type { SupervisedEvaluationSettings } from '../supervised/evaluate.js';
import { acrobotEvaluation } from './acrobot/evaluate.js';
import { blobsEvaluation } from './blobs/evaluate.js';
import { cartpoleEvaluation } from './cartpole/evaluate.js';
import { countsEvaluation } from './counts/evaluate.js';
import { friedmanEvaluation } from './friedman/evaluate.js';
import { mountainCarEvaluation } from './mountain-car/evaluate.js';
import { pendulumEvaluation } from './pendulum/evaluate.js';
import { pointMassEvaluation } from './point-mass/evaluate.js';
import { ringsEvaluation } from './rings/evaluate.js';
import { syntheticEvaluation } from './synthetic/evaluate.js';
import { tabularEvaluation } from './tabular/evaluate.js';
import { vegaMoreEvaluation } from './vega-more/evaluate.js';

/** Each control family's evaluation, by family name (the parameters are the ones its `define.ts` drew). */
const CONTROL: Record<string, (def: ControlTaskDef, params: never) => ControlEvaluationSettings> = {
  cartpole: cartpoleEvaluation,
  pendulum: pendulumEvaluation,
  'mountain-car': mountainCarEvaluation,
  acrobot: acrobotEvaluation,
  'point-mass': pointMassEvaluation,
};

/** What the evaluation of a control task a family drew knows; throws for a family without one. */
export function familyControlEvaluation(t: { def: ControlTaskDef; madeFrom: MadeByFamily }): ControlEvaluationSettings {
  const evaluation = CONTROL[t.madeFrom.family];
  if (!evaluation) throw new Error(`${t.def.id}: no control family "${t.madeFrom.family}" has an evaluation`);
  return evaluation(t.def, t.madeFrom.params as never);
}

/** Each supervised family's evaluation, by family name. */
const SUPERVISED: Record<string, () => SupervisedEvaluationSettings> = {
  tabular: tabularEvaluation,
  synthetic: syntheticEvaluation,
  blobs: blobsEvaluation,
  friedman: friedmanEvaluation,
  'vega-more': vegaMoreEvaluation,
  rings: ringsEvaluation,
  counts: countsEvaluation,
};

/** What the evaluation of a supervised task a family drew knows; throws for a family without one. */
export function familySupervisedEvaluation(t: { def: { id: string }; madeFrom: MadeByFamily }): SupervisedEvaluationSettings {
  const evaluation = SUPERVISED[t.madeFrom.family];
  if (!evaluation) throw new Error(`${t.def.id}: no supervised family "${t.madeFrom.family}" has an evaluation`);
  return evaluation();
}
