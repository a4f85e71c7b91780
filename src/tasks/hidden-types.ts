import type { ModelFile } from '../inner/model.js';
import type { PolicyFile } from '../inner/policy.js';

/** Anchors of the normalised score: `random` maps to 0, `reference` to 1. */
export interface Anchors {
  random: number;
  reference: number;
  /** How each anchor was obtained, in words. */
  how: string;
}

/** One hidden evaluation's result in the metric's raw units. */
export interface Evaluation {
  /** The canonical metric (higher is better). */
  raw: number;
  /** Bootstrap standard error of `raw` over the held-out episodes or rows; null when unknown. */
  stderr: number | null;
}

/** A task's hidden evaluation: harness side only, never given to job code. */
export interface HiddenEvaluation {
  taskId: string;
  /** Scores a trained policy (control) or model (supervised) with the task's canonical metric (raw units, higher is better). */
  score(trained: PolicyFile | ModelFile): Evaluation;
  /** Scores an artifact directory directly (tasks whose evaluation is an outside command), within `timeoutMs`. */
  scoreDir?(dir: string, timeoutMs?: number): Evaluation;
  /** The normalisation anchors (computed on the same held-out episodes). */
  anchors(): Anchors;
}
