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
  algorithms: AlgorithmName[];
  budget: { maxEnvSteps: number; maxWallSeconds: number };
  /** The hidden evaluation's metric, in words only. */
  metric: string;
}
