import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskBrief } from '../spec/brief.js';
import type { JobSpec } from '../spec/schema.js';
import { SpecError } from '../spec/validate.js';
import { Rng, mixSeed } from '../util/rng.js';
import { trainArs } from './algos/ars.js';
import { trainPpo } from './algos/ppo.js';
import type { AlgoResult, CurvePoint, TrainContext } from './context.js';
import { threadCpuSeconds } from './cost.js';
import { getEnvironment } from './envs/index.js';
import { compileExpression } from './expr.js';
import type { PolicyFile } from './policy.js';
import { initTf } from './tf.js';
import { rewardVariableNames, validateSpec } from './validate.js';

/** Compute a job used, counted by the engine. */
export interface JobCost {
  envSteps: number;
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
  stopReason: AlgoResult['stopReason'];
  /** Mean canonical return of the last (up to) 20 training episodes, or null if none finished. */
  trainReturn: number | null;
  backend: string;
}

/** Hooks for callers (progress bars, benchmarks); never given to the spec's author. */
export interface RunJobOptions {
  /** Directory for the artifact; created if missing. */
  outDir: string;
  /** Called after every update with env steps used so far. */
  onProgress?: (envSteps: number, maxEnvSteps: number) => void;
  /** Receives a snapshot of the policy every `snapshotEvery` env steps (benchmarks). */
  onSnapshot?: (envSteps: number, policy: PolicyFile) => void;
  snapshotEvery?: number;
}

const ALGORITHMS: Record<JobSpec['algorithm']['name'], (ctx: TrainContext, cfg: never) => Promise<AlgoResult>> = {
  ppo: trainPpo as (ctx: TrainContext, cfg: never) => Promise<AlgoResult>,
  ars: trainArs as (ctx: TrainContext, cfg: never) => Promise<AlgoResult>,
};

/** Artifact file names, shared with readers (store, scorer, dashboard). */
export const ARTIFACT_FILES = {
  spec: 'spec.json',
  policy: 'policy.json',
  curve: 'curve.jsonl',
  cost: 'cost.json',
  status: 'status.json',
} as const;

/** Writes a failure status into an artifact directory (used by the engine and the executor). */
export function writeFailureStatus(dir: string, reason: string, kind: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, ARTIFACT_FILES.status), JSON.stringify({ status: 'failed', kind, error: reason }, null, 2));
}

/**
 * Runs one training job for real: validates the spec against the task's brief, trains
 * with the chosen algorithm within the budget the engine counts itself, and writes the
 * artifact (spec, policy weights, curve, cost, status) to `options.outDir`.
 * Same spec and seed give the same result. Throws on invalid specs and failed training,
 * after writing the failure into `status.json`.
 */
export async function runJob(input: unknown, brief: TaskBrief, options: RunJobOptions): Promise<Artifact> {
  const dir = options.outDir;
  mkdirSync(dir, { recursive: true });
  const wall0 = performance.now();
  const cpu0 = threadCpuSeconds();
  try {
    const checked = validateSpec(input, brief);
    if (!checked.ok) throw checked.error;
    const spec = checked.spec;
    writeFileSync(join(dir, ARTIFACT_FILES.spec), JSON.stringify(spec, null, 2));
    const env = getEnvironment(brief.environment.id);
    const curve: CurvePoint[] = [];
    const recent: number[] = [];
    const maxEnvSteps = Math.min(spec.budget.envSteps, brief.budget.maxEnvSteps);
    const every = options.snapshotEvery ?? 0;
    let nextSnapshot = every;
    const log = (name: string, step: number, value: number): void => {
      curve.push({ name, step, wallTime: (performance.now() - wall0) / 1000, value });
    };
    const ctx: TrainContext = {
      spec,
      brief,
      env,
      params: spec.environment.params,
      reward: compileExpression(spec.reward.expression, rewardVariableNames(brief)),
      rng: new Rng(mixSeed(spec.seed, 0x7a11)),
      maxEnvSteps,
      log,
      episodes(step, returns, lengths) {
        for (let i = 0; i < returns.length; i++) {
          log('charts/episodic_return', step, returns[i]);
          log('charts/episodic_length', step, lengths[i]);
          recent.push(returns[i]);
          if (recent.length > 20) recent.shift();
        }
        const target = spec.budget.targetReturn;
        return target !== null && recent.length >= 20 && mean(recent) >= target;
      },
      progress(envSteps, snapshot) {
        options.onProgress?.(envSteps, maxEnvSteps);
        if (options.onSnapshot && every > 0 && envSteps >= nextSnapshot) {
          options.onSnapshot(envSteps, snapshot());
          while (nextSnapshot <= envSteps) nextSnapshot += every;
        }
      },
    };
    const result = await ALGORITHMS[spec.algorithm.name](ctx, spec.algorithm as never);
    if (result.envSteps > maxEnvSteps) throw new Error(`engine error: ${result.envSteps} env steps exceed the cap ${maxEnvSteps}`);
    const cost: JobCost = {
      envSteps: result.envSteps,
      wallSeconds: (performance.now() - wall0) / 1000,
      cpuSeconds: threadCpuSeconds() - cpu0,
    };
    const backend = spec.algorithm.name === 'ppo' ? await initTf() : 'js';
    writeFileSync(join(dir, ARTIFACT_FILES.policy), JSON.stringify(result.policy));
    writeFileSync(join(dir, ARTIFACT_FILES.curve), curve.map((p) => JSON.stringify(p)).join('\n') + (curve.length ? '\n' : ''));
    writeFileSync(join(dir, ARTIFACT_FILES.cost), JSON.stringify(cost, null, 2));
    const artifact: Artifact = {
      status: 'succeeded',
      dir,
      spec,
      cost,
      updates: result.updates,
      stopReason: result.stopReason,
      trainReturn: recent.length ? mean(recent) : null,
      backend,
    };
    writeFileSync(
      join(dir, ARTIFACT_FILES.status),
      JSON.stringify({ status: 'succeeded', stopReason: result.stopReason, updates: result.updates, trainReturn: artifact.trainReturn, backend }, null, 2),
    );
    return artifact;
  } catch (err) {
    const e = err as Error;
    writeFailureStatus(dir, e.message, e instanceof SpecError ? 'invalid' : e.name === 'NaNError' ? 'nan' : 'error');
    throw err;
  }
}

function mean(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}
