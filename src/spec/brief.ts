import type { AlgorithmName } from './schema.js';

/** A named variable the agent may use, with what it means. */
export interface VariableInfo {
  name: string;
  description: string;
}

/** A physical parameter the job may set, within [min, max]. */
export interface TunableParam {
  name: string;
  default: number;
  min: number;
  max: number;
  description: string;
}

/** A supervised task's data as the brief describes it (never the hidden test split). */
export interface SupervisedInfo {
  features: VariableInfo[];
  target: { name: string; description: string; type: 'classification' | 'regression'; classes?: string[] };
  /** The catalog: every source the job may draw on, described in words, with its size. */
  sources: { id: string; description: string; examples: number }[];
}

/**
 * What the trainer agent may see of a task. Never the seeds, data or numbers of the
 * hidden evaluation.
 */
export interface TaskBrief {
  id: string;
  title: string;
  family: string;
  kind: 'control' | 'supervised';
  split: 'train' | 'held-out';
  data: 'real' | 'synthetic' | 'simulated';
  description: string;
  environment: {
    id: string;
    observation: VariableInfo[];
    actions: string;
    params: TunableParam[];
    wrappers: string[];
  };
  /** Every name the reward expression may use, in the order the engine passes them. */
  rewardVariables: VariableInfo[];
  demonstrations: { id: string; description: string }[];
  /** Supervised tasks: what is predicted from what, and the catalog of sources. */
  supervised?: SupervisedInfo;
  algorithms: AlgorithmName[];
  /** Caps: env steps for control tasks, examples processed for supervised ones. */
  budget: { maxEnvSteps: number; maxExamples?: number; maxWallSeconds: number };
  /** The hidden evaluation's metric, in words only. */
  metric: string;
}
