/**
 * The public half of a control task on a built-in simulator: its definition, the brief built
 * from it (with the environment's public description) and its baseline spec. What its evaluation
 * knows (held-out episodes, deployment physics, reference return) lives in `evaluate.ts`, on the
 * harness side, looked up by task id; nothing here imports it.
 */
import type { TaskBrief, TunableParam, VariableInfo } from '../../spec/brief.js';
import type { AlgorithmName, JobSpecInput } from '../../spec/schema.js';
import { getEnvironment } from '../../inner/envs/index.js';
import type { DemoRecipe } from './demos.js';

/** Everything that defines a control task. */
export interface ControlTaskDef {
  id: string;
  title: string;
  family: string;
  split: 'train' | 'held-out';
  envId: string;
  description: string;
  observation: VariableInfo[];
  actions: string;
  rewardWords: string;
  /**
   * Tunable physical parameters with the ranges a job may use; `default` is the task's nominal
   * value (a generated task's drawn physics), the simulator's default when absent.
   */
  params: (Omit<TunableParam, 'default'> & { default?: number })[];
  algorithms: AlgorithmName[];
  maxEnvSteps: number;
  maxWallSeconds: number;
  metric: string;
  /** Held-out episodes of the hidden evaluation (their number is public, their seeds are not). */
  evaluationEpisodes: number;
  baseline: JobSpecInput;
  /** Demonstration sets the job may warm-start from (behaviour cloning). */
  demonstrations?: DemoRecipe[];
}

/** The public brief of a control task. */
export function controlBrief(def: ControlTaskDef): TaskBrief {
  const info = getEnvironment(def.envId).info;
  const defaults = Object.fromEntries(info.params.map((p) => [p.name, p.default]));
  return {
    id: def.id,
    title: def.title,
    family: def.family,
    kind: 'control',
    split: def.split,
    data: 'simulated',
    description: def.description,
    environment: {
      id: def.envId,
      observation: def.observation,
      actions: def.actions,
      params: def.params.map((p) => ({ ...p, default: p.default ?? defaults[p.name] })),
      wrappers: ['normalize-observation'],
    },
    rewardVariables: [
      ...def.observation.map((v) => ({ name: v.name, description: `${v.description} (after the step)` })),
      { name: 'r', description: def.rewardWords },
      { name: 't', description: 'steps taken in this episode, 1 on the first step' },
      { name: 'done', description: '1 on the step where the episode terminated (not on a time-limit cut), else 0' },
    ],
    demonstrations: (def.demonstrations ?? []).map((d) => ({ id: d.id, description: d.description })),
    algorithms: def.algorithms,
    budget: { maxEnvSteps: def.maxEnvSteps, maxWallSeconds: def.maxWallSeconds },
    metric: def.metric,
    evaluation: { episodes: def.evaluationEpisodes },
  };
}

/** A PPO spec in CleanRL's style for control baselines. */
export function ppoSpec(
  task: string,
  o: Partial<{
    numEnvs: number;
    rolloutSteps: number;
    epochs: number;
    minibatches: number;
    learningRate: number;
    gamma: number;
    gaeLambda: number;
    entropyCoef: number;
    envSteps: number;
    expression: string;
    normalize: boolean;
    hidden: number[];
  }>,
): JobSpecInput {
  return {
    task,
    environment: { params: {}, wrappers: o.normalize ? ['normalize-observation'] : [], numEnvs: o.numEnvs ?? 4 },
    reward: { expression: o.expression ?? 'r' },
    dataset: { demonstrations: null },
    model: { hidden: o.hidden ?? [64, 64], activation: 'tanh' },
    algorithm: {
      name: 'ppo',
      learningRate: o.learningRate ?? 2.5e-4,
      annealLr: true,
      gamma: o.gamma ?? 0.99,
      gaeLambda: o.gaeLambda ?? 0.95,
      clip: 0.2,
      epochs: o.epochs ?? 4,
      minibatches: o.minibatches ?? 4,
      rolloutSteps: o.rolloutSteps ?? 128,
      entropyCoef: o.entropyCoef ?? 0.01,
    },
    budget: { envSteps: o.envSteps ?? 100_000, targetReturn: null },
    seed: 1,
  };
}
