/**
 * What the hidden evaluation of a generated friedman task knows: the share of its rows held out as
 * its test set. The split itself is drawn from the evaluation secret and the task id
 * (`supervised/evaluate.ts`), never from the generator seed; the anchors are computed on it (the
 * trivial predictor fit on the training pool scores 0, a perfect model 1).
 */

/** Share of each generated friedman task's rows held out for the hidden test set. */
export const FRIEDMAN_TEST_FRACTION = 0.3;

/** The hidden settings of a generated friedman task (fields of `SupervisedTaskDef`). */
export function friedmanHidden(): { testFraction: number } {
  return { testFraction: FRIEDMAN_TEST_FRACTION };
}
