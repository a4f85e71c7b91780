/**
 * What the hidden evaluation of a generated rings task knows: the share of its rows held out as
 * its test set. The split itself is drawn from the evaluation secret and the task id
 * (`supervised/evaluate.ts`), never from the generator seed; the anchors are computed on it (the
 * trivial predictor fit on the training pool scores 0, a perfect model 1).
 */

/** Share of each generated rings task's rows held out for the hidden test set. */
export const RINGS_TEST_FRACTION = 0.3;

/** The hidden settings of a generated rings task (fields of `SupervisedTaskDef`). */
export function ringsHidden(): { testFraction: number } {
  return { testFraction: RINGS_TEST_FRACTION };
}
