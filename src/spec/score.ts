/** The hidden evaluation's number for one artifact, as it passes from the scorer to the reward and the store. */

/** The hidden evaluation's verdict on one artifact. */
export interface Score {
  raw: number;
  normalized: number;
  /**
   * Standard error of `normalized`: bootstrap over the held-out episodes (control) or test rows
   * (supervised); null when the evaluation cannot tell (an evaluation command that reports
   * neither per-row results nor a standard error).
   */
  stderr: number | null;
}
