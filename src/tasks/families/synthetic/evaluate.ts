/**
 * What the evaluation of a generated synthetic task knows: the share of its points held out as its test
 * set, the one its definition sizes the training pool with. The split itself is drawn from the
 * evaluation secret and the task id (`supervised/evaluate.ts`), never from the generator seed; the
 * anchors are computed on it (the trivial predictor fit on the training pool scores 0, a perfect model 1).
 */
import type { SupervisedEvaluationSettings } from '../../supervised/evaluate.js';

/** What the evaluation of a generated synthetic task knows. */
export function syntheticEvaluation(): SupervisedEvaluationSettings {
  return {}; // its test share is public, in the task definition (def.testFraction)
}
