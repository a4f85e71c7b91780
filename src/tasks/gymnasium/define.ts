/**
 * A control task on any registered Gymnasium environment, stepped in the Python bridge
 * (inner/envs/gym-bridge.ts). `gymnasiumTask` is the one entry point for task files and code:
 * it checks the options, fills the defaults and returns the public definition, whose public parts
 * are `gymnasiumBrief(def)` and `def.baseline`. What its evaluation knows (held-out episodes,
 * anchors) is built on the harness side from the same options (`gymnasiumEvaluationSettings` in
 * `evaluate.ts`; the built-in tasks' are listed there by id); nothing here imports it.
 *
 * The spaces come as data (`obsDim`, `actionSpace`, `maxEpisodeSteps`), as `describeGymnasium`
 * reports them (what `rrl task new --gymnasium ID` writes into the file): listing tasks never
 * starts Python, and the bridge checks them against the real environment when a job starts.
 */
import type { CommandTrainer, GymnasiumEnvironment, TaskBrief, VariableInfo } from '../../spec/brief.js';
import type { AlgorithmName, JobSpecInput } from '../../spec/schema.js';
import { gymnasiumIdProblem } from '../../inner/envs/gym-id.js';
import { ppoSpec } from '../control/define.js';

/** What a Gymnasium task is made from; only `id`, `envId`, the spaces and a reference anchor are required. */
export interface GymnasiumTaskOptions {
  /** Task id (letters, digits, `-` and `_`). */
  id: string;
  /** Gymnasium id, e.g. `CartPole-v1`, `InvertedPendulum-v5`; `module:Env-v0` only with `allowImport`. */
  envId: string;
  /** Lets `envId` name a module for Gymnasium to import first (`mypkg.envs:MyEnv-v0`); default false. */
  allowImport?: boolean;
  /** Keyword arguments of `gymnasium.make` (JSON values). */
  envKwargs?: Record<string, unknown>;
  /** Length of a flattened observation (`describeGymnasium(...).obsDim`). */
  obsDim: number;
  /** The action space (`describeGymnasium(...).actionSpace`; a box needs finite bounds). */
  actionSpace: { type: 'discrete'; n: number } | { type: 'box'; low: number[]; high: number[] };
  /** Steps after which an episode is cut. */
  maxEpisodeSteps: number;
  title?: string;
  description?: string;
  family?: string;
  split?: 'train' | 'held-out' | 'example';
  /** One name and meaning per observation value (default `obs_0` … with no meaning). */
  observation?: VariableInfo[];
  /** The actions in words (default: from the space). */
  actions?: string;
  /** The environment reward in words. */
  rewardWords?: string;
  /** The metric in words (default: mean return over held-out episodes, normalised by the anchors). */
  metric?: string;
  /**
   * Normalisation anchors: `reference` scores 1 (e.g. Gymnasium's reward threshold); `random`
   * scores 0 (default: a uniformly random policy on the same held-out episodes, measured).
   */
  anchors?: { reference?: number; random?: number; how?: string };
  /** Gymnasium's reward threshold, the reference when `anchors.reference` is not given. */
  rewardThreshold?: number | null;
  /** The baseline job spec (default: CleanRL's PPO settings for the space). */
  baseline?: JobSpecInput;
  /** Caps a job may not pass (defaults: 100 000 env steps, 600 s). */
  caps?: { maxEnvSteps?: number; maxWallSeconds?: number; maxMemoryMb?: number };
  /** Algorithms a job may use (default: all four for discrete actions, PPO for boxes). */
  algorithms?: AlgorithmName[];
  /** Held-out episodes of the hidden evaluation (default 20). */
  episodes?: number;
  /** An outside program that trains the jobs (e.g. the PyTorch PPO); default: the embedded engine. */
  trainer?: CommandTrainer;
}

/** A Gymnasium task with every default filled. */
export interface GymnasiumTaskDef {
  id: string;
  title: string;
  family: string;
  split: 'train' | 'held-out' | 'example';
  description: string;
  gymnasium: GymnasiumEnvironment;
  observation: VariableInfo[];
  actions: string;
  rewardWords: string;
  metric: string;
  algorithms: AlgorithmName[];
  caps: { maxEnvSteps: number; maxWallSeconds: number; maxMemoryMb?: number };
  /** Held-out episodes of the hidden evaluation (their number is public, their seeds are not). */
  evaluationEpisodes: number;
  baseline: JobSpecInput;
  trainer?: CommandTrainer;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A one-line error naming the field, for a bad option. */
function bad(field: string, why: string): never {
  throw new Error(`gymnasium task: ${field}: ${why}`);
}

/** CleanRL's PPO settings: `ppo_continuous_action.py` for boxes, `ppo.py` for discrete actions. */
export function cleanRlBaseline(task: string, actionSpace: GymnasiumTaskOptions['actionSpace'], envSteps: number): JobSpecInput {
  if (actionSpace.type === 'box') {
    return ppoSpec(task, {
      numEnvs: 1,
      rolloutSteps: 2048,
      epochs: 10,
      minibatches: 32,
      learningRate: 3e-4,
      gamma: 0.99,
      gaeLambda: 0.95,
      entropyCoef: 0,
      envSteps,
      normalize: true,
    });
  }
  return ppoSpec(task, {
    numEnvs: 4,
    rolloutSteps: 128,
    epochs: 4,
    minibatches: 4,
    learningRate: 2.5e-4,
    gamma: 0.99,
    gaeLambda: 0.95,
    entropyCoef: 0.01,
    envSteps,
  });
}

/** The return that scores 1: the options' reference anchor, else Gymnasium's reward threshold (undefined when neither). */
export function gymnasiumReference(o: Pick<GymnasiumTaskOptions, 'anchors' | 'rewardThreshold'>): number | undefined {
  return o.anchors?.reference ?? o.rewardThreshold ?? undefined;
}

/** Checks the options and fills the defaults; throws one line naming the field on bad input. */
export function gymnasiumTask(o: GymnasiumTaskOptions): GymnasiumTaskDef {
  if (typeof o.id !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(o.id)) bad('id', 'letters, digits, - and _ (at most 64)');
  if (typeof o.envId !== 'string') bad('envId', 'a Gymnasium id such as CartPole-v1');
  const idProblem = gymnasiumIdProblem(o.envId, o.allowImport === true, 'allowImport');
  if (idProblem) bad('envId', idProblem);
  if (!Number.isInteger(o.obsDim) || o.obsDim < 1 || o.obsDim > 4096) bad('obsDim', 'an integer from 1 to 4096');
  if (!Number.isInteger(o.maxEpisodeSteps) || o.maxEpisodeSteps < 1)
    bad('maxEpisodeSteps', 'a positive integer (environments without a time limit need max_episode_steps in envKwargs)');
  const a = o.actionSpace;
  if (a?.type === 'discrete') {
    if (!Number.isInteger(a.n) || a.n < 2) bad('actionSpace.n', 'an integer of at least 2');
  } else if (a?.type === 'box') {
    if (!Array.isArray(a.low) || !Array.isArray(a.high) || a.low.length < 1 || a.low.length !== a.high.length)
      bad('actionSpace', 'low and high of the same non-zero length');
    if (![...a.low, ...a.high].every(Number.isFinite) || a.low.some((l, i) => !(l < a.high[i]))) bad('actionSpace', 'finite bounds with low < high');
  } else bad('actionSpace.type', 'discrete or box');
  const observation = o.observation ?? Array.from({ length: o.obsDim }, (_, i) => ({ name: `obs_${i}`, description: `observation value ${i}` }));
  if (observation.length !== o.obsDim) bad('observation', `${observation.length} names for ${o.obsDim} observation values`);
  const reserved = new Set(['r', 't', 'done']);
  for (const v of observation)
    if (!NAME.test(v.name) || reserved.has(v.name))
      bad('observation', `"${String(v.name).slice(0, 40)}" is not a variable name (a letter or _, then letters, digits or _; not r, t or done)`);
  if (new Set(observation.map((v) => v.name)).size !== observation.length) bad('observation', 'names must be unique');
  const reference = gymnasiumReference(o);
  if (reference === undefined || !Number.isFinite(reference))
    bad('anchors.reference', 'needed (the return that scores 1) when Gymnasium has no reward threshold for the environment');
  const random = o.anchors?.random;
  if (random !== undefined && (!Number.isFinite(random) || !(random < reference))) bad('anchors.random', 'a finite number below anchors.reference');
  const episodes = o.episodes ?? 20;
  if (!Number.isInteger(episodes) || episodes < 2 || episodes > 256) bad('episodes', 'an integer from 2 to 256');
  const maxEnvSteps = o.caps?.maxEnvSteps ?? 100_000;
  const maxWallSeconds = o.caps?.maxWallSeconds ?? 600;
  if (!Number.isInteger(maxEnvSteps) || maxEnvSteps < 1) bad('caps.maxEnvSteps', 'a positive integer');
  if (!(maxWallSeconds > 0)) bad('caps.maxWallSeconds', 'a positive number');
  const discrete = a.type === 'discrete';
  const actions =
    o.actions ??
    (a.type === 'discrete'
      ? `discrete: an index from 0 to ${a.n - 1}`
      : `continuous: ${a.low.length} value${a.low.length > 1 ? 's' : ''} in [${a.low.join(', ')}] to [${a.high.join(', ')}] (clipped to the bounds)`);
  return {
    id: o.id,
    title: o.title ?? `Gymnasium ${o.envId}`,
    family: o.family ?? `gymnasium-${o.envId.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`,
    split: o.split ?? 'example',
    description:
      o.description ??
      `Train a policy for the Gymnasium environment ${o.envId} that collects as much ` +
        `of its reward as possible. Episodes last at most ${o.maxEpisodeSteps} steps.`,
    gymnasium: {
      id: o.envId,
      ...(o.allowImport === true ? { allowImport: true } : {}),
      kwargs: o.envKwargs ?? {},
      obsDim: o.obsDim,
      actionSpace: a,
      maxEpisodeSteps: o.maxEpisodeSteps,
    },
    observation,
    actions,
    rewardWords: o.rewardWords ?? `the environment reward of ${o.envId}`,
    metric:
      o.metric ??
      `mean undiscounted return of the greedy policy over held-out episodes of ${o.envId}; ` +
        `normalised so that a uniformly random policy scores 0 and ${reference} scores 1`,
    algorithms: o.algorithms ?? (discrete ? ['ppo', 'ars', 'dqn', 'reinforce'] : ['ppo']),
    caps: { maxEnvSteps, maxWallSeconds, ...(o.caps?.maxMemoryMb !== undefined ? { maxMemoryMb: o.caps.maxMemoryMb } : {}) },
    evaluationEpisodes: episodes,
    baseline: o.baseline ?? cleanRlBaseline(o.id, a, maxEnvSteps),
    trainer: o.trainer,
  };
}

/** The public brief of a Gymnasium task (no seeds, no anchors). */
export function gymnasiumBrief(def: GymnasiumTaskDef): TaskBrief {
  return {
    id: def.id,
    title: def.title,
    family: def.family,
    kind: 'control',
    split: def.split,
    data: 'simulated',
    description: def.description,
    environment: {
      id: `gymnasium:${def.gymnasium.id}`,
      observation: def.observation,
      actions: def.actions,
      params: [],
      wrappers: ['normalize-observation'],
      gymnasium: def.gymnasium,
    },
    rewardVariables: [
      ...def.observation.map((v) => ({ name: v.name, description: `${v.description} (after the step)` })),
      { name: 'r', description: def.rewardWords },
      { name: 't', description: 'steps taken in this episode, 1 on the first step' },
      { name: 'done', description: '1 on the step where the episode terminated (not on a time-limit cut), else 0' },
    ],
    demonstrations: [],
    algorithms: def.algorithms,
    budget: {
      maxEnvSteps: def.caps.maxEnvSteps,
      maxWallSeconds: def.caps.maxWallSeconds,
      ...(def.caps.maxMemoryMb !== undefined ? { maxMemoryMb: def.caps.maxMemoryMb } : {}),
    },
    metric: def.metric,
    evaluation: { episodes: def.evaluationEpisodes },
    ...(def.trainer ? { trainer: def.trainer } : {}),
  };
}
