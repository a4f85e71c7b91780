import type { TaskBrief } from '../spec/brief.js';
import type { JobSpec } from '../spec/schema.js';
import type { Rng } from '../util/rng.js';
import type { CompiledExpression } from './expr.js';
import type { Env, EnvInfo } from './envs/types.js';
import type { ParamSetting } from './envs/vector.js';
import type { PolicyFile } from './policy.js';

/** Thrown when training produces a non-finite number (loss, reward, weights). */
export class NaNError extends Error {
  /** Builds the error; `message` says where the NaN appeared. */
  constructor(message: string) {
    super(message);
    this.name = 'NaNError';
  }
}

/** One point of a training curve: a slash-namespaced metric at an env step. */
export interface CurvePoint {
  name: string;
  step: number;
  wallTime: number;
  value: number;
}

/** Everything an algorithm needs to train one job; the engine owns the budget. */
export interface TrainContext {
  spec: JobSpec;
  brief: TaskBrief;
  env: { info: EnvInfo; make: () => Env };
  params: Record<string, ParamSetting>;
  reward: CompiledExpression;
  rng: Rng;
  /** Demonstrations for a behaviour-cloning warm start (when the spec names a set). */
  demonstrations?: { obs: number[][]; actions: number[] };
  /** The hard cap on env steps (min of the spec's budget and the brief's). */
  maxEnvSteps: number;
  /** Records a metric point. */
  log(name: string, step: number, value: number): void;
  /** Reports finished episodes' canonical returns; returns true when the spec's targetReturn is reached. */
  episodes(step: number, returns: number[], lengths: number[]): boolean;
  /** Called after each update with the env steps used so far (progress, periodic snapshots). */
  progress(envSteps: number, snapshot: () => PolicyFile): void;
}

/** What an algorithm returns. */
export interface AlgoResult {
  policy: PolicyFile;
  envSteps: number;
  updates: number;
  stopReason: 'budget' | 'target-return';
}

/** Computes the training reward for every env of a vector after a step into `out`. */
export function shapedRewards(
  reward: CompiledExpression,
  obsDim: number,
  num: number,
  nextObs: Float64Array,
  envReward: Float64Array,
  t: Int32Array,
  terminated: Uint8Array,
  scratch: Float64Array,
  out: Float64Array,
): void {
  for (let i = 0; i < num; i++) {
    for (let k = 0; k < obsDim; k++) scratch[k] = nextObs[i * obsDim + k];
    scratch[obsDim] = envReward[i];
    scratch[obsDim + 1] = t[i];
    scratch[obsDim + 2] = terminated[i];
    const v = reward.evaluate(scratch);
    if (!Number.isFinite(v)) {
      const vars = reward.variables.map((n, j) => `${n}=${scratch[j].toPrecision(4)}`).join(', ');
      throw new NaNError(`reward.expression "${reward.source}" gave ${v} at ${vars}`);
    }
    out[i] = v;
  }
}
