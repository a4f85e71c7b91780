/**
 * What the hidden evaluation of a generated vega-more task knows: the share of its rows held out as
 * its test set. The split itself is drawn from the evaluation secret and the task id
 * (`supervised/evaluate.ts`), never from the generator seed; the anchors are computed on it (the
 * trivial predictor fit on the training pool scores 0, a perfect model 1).
 */

/** Share of each generated vega-more task's rows held out for the hidden test set. */
export const VEGA_MORE_TEST_FRACTION = 0.3;

/** The hidden settings of a generated vega-more task (fields of `SupervisedTaskDef`). */
export function vegaMoreHidden(): { testFraction: number } {
  return { testFraction: VEGA_MORE_TEST_FRACTION };
}
