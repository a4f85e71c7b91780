/**
 * The private side of the task registry. Only the harness's scorer (`outer/score.ts`)
 * imports this module; job code in workers or on cluster nodes never does.
 */
import type { HiddenEvaluation } from './hidden-types.js';
import { hidden as cartpoleBalance } from './cartpole-balance/hidden.js';
import { hidden as cartpoleShort } from './cartpole-short/hidden.js';

const HIDDEN: HiddenEvaluation[] = [cartpoleBalance, cartpoleShort];

/** The hidden evaluation of a task. */
export function getHiddenEvaluation(taskId: string): HiddenEvaluation {
  const h = HIDDEN.find((x) => x.taskId === taskId);
  if (!h) throw new Error(`no hidden evaluation for task "${taskId}"`);
  return h;
}
