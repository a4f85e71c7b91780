/**
 * What the evaluation of a generated friedman task knows: the share of its rows held out as its test
 * set, the one its definition sizes the training pool with. The split itself is drawn from the
 * evaluation secret and the task id (`supervised/evaluate.ts`), never from the generator seed; the
 * anchors are computed on it (the trivial predictor fit on the training pool scores 0, a perfect model 1).
 */
import type { SupervisedEvaluationSettings } from '../../supervised/evaluate.js';
import { FRIEDMAN_TEST_FRACTION } from './define.js';

/** What the evaluation of a generated friedman task knows. */
export function friedmanEvaluation(): SupervisedEvaluationSettings {
  return { testFraction: FRIEDMAN_TEST_FRACTION };
}
