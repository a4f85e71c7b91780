/**
 * What the evaluation of a generated rings task knows: nothing beyond its definition, whose
 * `testFraction` (public) sizes both the training pool and the test set. The split itself is drawn from the
 * evaluation secret and the task id (`supervised/evaluate.ts`), never from the generator seed; the
 * anchors are computed on it (the trivial predictor fit on the training pool scores 0, a perfect model 1).
 */
import type { SupervisedEvaluationSettings } from '../../supervised/evaluate.js';

/** What the evaluation of a generated rings task knows. */
export function ringsEvaluation(): SupervisedEvaluationSettings {
  return {}; // its test share is public, in the task definition (def.testFraction)
}
