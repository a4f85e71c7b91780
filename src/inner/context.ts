/**
 * What an algorithm is given (`TrainContext`) and what it returns (`AlgoResult`): the contract
 * between the engine (train.ts), which owns the budget, the caps and the environments, and the
 * algorithms in algos/.
 */
import type { TaskBrief } from '../spec/brief.js';
import type { JobSpec } from '../spec/schema.js';
import type { Rng } from '../util/rng.js';
import type { EnvInfo } from './envs/types.js';
import type { EnvOptions, TrainingEnv } from './envs/wrappers.js';
import type { PolicyFile } from './policy.js';

/**
 * Everything an algorithm needs to train one job. The engine owns the budget: it builds the
 * environments (`makeEnv`) behind wrappers that shape the reward, normalise observations and
 * count every env step against the cap, and it owns the wall-clock and memory caps
 * (`checkLimits`). The algorithm brings its settings and its loop.
 */
export interface TrainContext {
  spec: JobSpec;
  brief: TaskBrief;
  /** The environment family's static description (spaces, observation names). */
  info: EnvInfo;
  rng: Rng;
  /** Demonstrations for a behaviour-cloning warm start (when the spec names a set). */
  demonstrations?: { obs: number[][]; actions: number[] };
  /**
   * Builds `num` environments seeded from the spec, with its physical parameters, behind the
   * engine's wrappers. Every env a job builds draws on the same env-step budget.
   */
  makeEnv(num: number, options?: EnvOptions): TrainingEnv;
  /** Throws when the job has passed its wall-clock or memory cap; call it inside gradient loops. */
  checkLimits(): void;
  /** Records a metric point. */
  log(name: string, step: number, value: number): void;
  /** Reports finished episodes' canonical returns; returns true when the spec's targetReturn is reached. */
  episodes(step: number, returns: number[], lengths: number[]): boolean;
  /** Called after each update with the env steps used so far (progress, periodic snapshots). */
  progress(envSteps: number, snapshot: () => PolicyFile): void;
}

/** What an algorithm returns (the env steps it used are the engine's count, not its own). */
export interface AlgoResult {
  policy: PolicyFile;
  updates: number;
  stopReason: 'budget' | 'target-return';
}

/** Drains the env's finished episodes and reports them; true when they reach the spec's target return. */
export function reportEpisodes(ctx: TrainContext, env: TrainingEnv): boolean {
  const eps = env.drainEpisodes();
  return (
    eps.length > 0 &&
    ctx.episodes(
      env.used,
      eps.map((e) => e.ret),
      eps.map((e) => e.length),
    )
  );
}
