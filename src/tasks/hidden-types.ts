import type { ModelFile } from '../inner/model.js';
import type { PolicyFile } from '../inner/policy.js';

/** Anchors of the normalised score: `random` maps to 0, `reference` to 1. */
export interface Anchors {
  random: number;
  reference: number;
  /** How each anchor was obtained, in words. */
  how: string;
}

/** A task's hidden evaluation: harness side only, never given to job code. */
export interface HiddenEvaluation {
  taskId: string;
  /** Scores a trained policy (control) or model (supervised) with the task's canonical metric (raw units, higher is better). */
  score(trained: PolicyFile | ModelFile): number;
  /** Scores an artifact directory directly (tasks whose evaluation is an outside command). */
  scoreDir?(dir: string): number;
  /** The normalisation anchors (computed on the same held-out episodes). */
  anchors(): Anchors;
}
