/**
 * What the hidden evaluation of a generated synthetic task knows: the share of the generated
 * points held out as its test set. The split is drawn from the evaluation secret and the task id
 * (`supervised/evaluate.ts`), never from the generator seed; the anchors are computed on it (the
 * majority class scores 0, a perfect classifier 1).
 */

/** Share of each generated synthetic task's points held out for the hidden test set. */
export const SYNTHETIC_TEST_FRACTION = 0.3;

/** The hidden settings of a generated synthetic task (fields of `SupervisedTaskDef`). */
export function syntheticHidden(): { testFraction: number } {
  return { testFraction: SYNTHETIC_TEST_FRACTION };
}
