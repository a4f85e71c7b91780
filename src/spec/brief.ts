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
  /**
   * Present when the table has categorical columns or missing cells (then `dataset.columns` decides
   * how they become inputs): each feature's kind, its level count and its share of missing cells.
   */
  columns?: { name: string; kind: 'numeric' | 'categorical'; levels?: number; missing: number }[];
  /** The catalog: every source the job may draw on, described in words, with its size. */
  sources: { id: string; description: string; examples: number }[];
}

/**
 * A Gymnasium environment as a task declares it (spaces as data, checked against the bridge's
 * own description when the environments are made).
 */
export interface GymnasiumEnvironment {
  /** The Gymnasium id, e.g. `InvertedPendulum-v5`. */
  id: string;
  /** True when the task lets `id` name a module to import (`module:Env-v0`); absent: it may not. */
  allowImport?: boolean;
  /** Keyword arguments of `gymnasium.make` (JSON values). */
  kwargs: Record<string, unknown>;
  /** Length of a flattened observation. */
  obsDim: number;
  /** The action space (a box's bounds are finite). */
  actionSpace: { type: 'discrete'; n: number } | { type: 'box'; low: number[]; high: number[] };
  /** Steps after which an episode is cut (Gymnasium's TimeLimit). */
  maxEpisodeSteps: number;
}

/**
 * The size of a task's hidden evaluation, never its seeds or rows: how big a test set is, which a
 * practitioner knows. Validation prices the scoring of a spec with it (inner/compute-estimate.ts).
 */
export interface EvaluationSize {
  /** Control tasks: the held-out episodes the trained policy runs. */
  episodes?: number;
  /** Supervised tasks: the rows of the hidden test set. */
  rows?: number;
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
  /** `example`: a worked example (e.g. of a command trainer), in no experiment's split. */
  split: 'train' | 'held-out' | 'example';
  data: 'real' | 'synthetic' | 'simulated';
  description: string;
  environment: {
    id: string;
    observation: VariableInfo[];
    actions: string;
    params: TunableParam[];
    wrappers: string[];
    /** Present when the environment is a Gymnasium one, stepped in the Python bridge (inner/envs/gym-bridge.ts). */
    gymnasium?: GymnasiumEnvironment;
  };
  /** Every name the reward expression may use, in the order the engine passes them. */
  rewardVariables: VariableInfo[];
  demonstrations: { id: string; description: string }[];
  /** Supervised tasks: what is predicted from what, and the catalog of sources. */
  supervised?: SupervisedInfo;
  algorithms: AlgorithmName[];
  /**
   * Caps: env steps for control tasks, examples processed for supervised ones, wall-clock
   * seconds, and (when set) a job's memory in MB; the engine enforces each of them itself.
   */
  budget: { maxEnvSteps: number; maxExamples?: number; maxWallSeconds: number; maxMemoryMb?: number };
  /** The hidden evaluation's metric, in words only. */
  metric: string;
  /** The hidden evaluation's size (episodes or test rows). */
  evaluation: EvaluationSize;
  /** Who trains: absent, the built-in engine; `command`, an outside program (see CommandTrainer). */
  trainer?: CommandTrainer;
}

/**
 * An outside program that trains a task's jobs. It is run as `argv... SPEC_PATH JOB_DIR`
 * (`node` means the Node running recursive-rl; a path relative to the recursive-rl folder is
 * resolved against it). The job directory holds `brief.json` and, for supervised tasks,
 * `data.json` (the rows of the sources the spec names); the program writes its weights in
 * its own format plus `curve.jsonl`, `cost.json` and `status.json` there.
 */
export interface CommandTrainer {
  kind: 'command';
  argv: string[];
  /** What the program trains, in words (the agent reads it). */
  description: string;
}

/** A job's memory cap when its brief sets none: JS heap plus tensor (WebAssembly) memory, in MB. */
export const DEFAULT_JOB_MEMORY_MB = 1024;

/** The memory cap, in MB, that the engine enforces on a job of this brief. */
export function jobMemoryCapMb(brief: Pick<TaskBrief, 'budget'>): number {
  return brief.budget.maxMemoryMb ?? DEFAULT_JOB_MEMORY_MB;
}
