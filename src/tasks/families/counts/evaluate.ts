/**
 * What the evaluation of a generated counts task knows: the share of its rows held out as its test
 * set, the one its definition sizes the training pool with (`COUNTS_CONFIG.testFraction`). The split
 * itself is drawn from the evaluation secret and the task id (`supervised/evaluate.ts`), never from
 * the generator seed; the anchors are computed on it (the trivial predictor fit on the training
 * pool, its mean or for MAE its median, scores 0; a perfect model 1).
 */
import type { SupervisedEvaluationSettings } from '../../supervised/evaluate.js';
import { COUNTS_CONFIG } from './define.js';

/** What the evaluation of a generated counts task knows. */
export function countsEvaluation(): SupervisedEvaluationSettings {
  return { testFraction: COUNTS_CONFIG.testFraction };
}
