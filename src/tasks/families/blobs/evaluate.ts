/**
 * What the hidden evaluation of a generated blobs task knows: the share of its rows held out as
 * its test set. The split itself is drawn from the evaluation secret and the task id
 * (`supervised/evaluate.ts`), never from the generator seed; the anchors are computed on it (the
 * trivial predictor fit on the training pool scores 0, a perfect model 1).
 */

/** Share of each generated blobs task's rows held out for the hidden test set. */
export const BLOBS_TEST_FRACTION = 0.3;

/** The hidden settings of a generated blobs task (fields of `SupervisedTaskDef`). */
export function blobsHidden(): { testFraction: number } {
  return { testFraction: BLOBS_TEST_FRACTION };
}
