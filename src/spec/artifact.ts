/**
 * What a job leaves behind, as it passes from the executor to the scorer and the store: the
 * artifact's summary, the compute it used, its training curve, and the names of its files.
 */
import type { JobSpec } from './schema.js';

/** Compute a job used, counted by the engine. */
export interface JobCost {
  /** Environment steps (control tasks; 0 for supervised ones). */
  envSteps: number;
  /** Training examples processed, summed over epochs (supervised tasks; 0 for control ones). */
  examples: number;
  wallSeconds: number;
  cpuSeconds: number;
}

/** What `runJob` leaves in the artifact directory, summarised. */
export interface Artifact {
  status: 'succeeded';
  dir: string;
  spec: JobSpec;
  cost: JobCost;
  updates: number;
  stopReason: string;
  /** Control: mean canonical return of the last (up to) 20 training episodes; supervised: the validation metric. */
  trainReturn: number | null;
  backend: string;
}

/** One point of a training curve: a slash-namespaced metric at an env step. */
export interface CurvePoint {
  name: string;
  step: number;
  wallTime: number;
  value: number;
}

/** Artifact file names, shared with readers (store, scorer, dashboard). */
export const ARTIFACT_FILES = {
  spec: 'spec.json',
  policy: 'policy.json',
  model: 'model.json',
  curve: 'curve.jsonl',
  cost: 'cost.json',
  status: 'status.json',
} as const;
