import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskBrief } from '../spec/brief.js';
import type { JobSpec } from '../spec/schema.js';
import { SpecError } from '../spec/validate.js';
import { Rng, mixSeed } from '../util/rng.js';
import { trainArs } from './algos/ars.js';
import { type SupervisedData, trainSupervised } from './algos/supervised.js';
import { trainPpo } from './algos/ppo.js';
import { trainDqn } from './algos/dqn.js';
import { trainReinforce } from './algos/reinforce.js';
import type { AlgoResult, CurvePoint, TrainContext } from './context.js';
import { threadCpuSeconds } from './cost.js';
import { getEnvironment } from './envs/index.js';
import { compileExpression } from './expr.js';
import type { PolicyFile } from './policy.js';
import { initTf } from './tf.js';
import { runCommandTrainer } from './command.js';
import { rewardVariableNames, validateSpec } from './validate.js';

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

/** Hooks for callers (progress bars, benchmarks); never given to the spec's author. */
export interface RunJobOptions {
  /** Directory for the artifact; created if missing. */
  outDir: string;
  /** Supervised tasks: the rows of the sources the spec names (built by the harness). */
  data?: SupervisedData;
  /** Called after every update with the budget used so far and its cap. */
  onProgress?: (used: number, cap: number) => void;
  /** Receives a snapshot of the policy every `snapshotEvery` env steps (benchmarks). */
  onSnapshot?: (envSteps: number, policy: PolicyFile) => void;
  snapshotEvery?: number;
}

const ALGORITHMS: Partial<Record<JobSpec['algorithm']['name'], (ctx: TrainContext, cfg: never) => Promise<AlgoResult>>> = {
  ppo: trainPpo as (ctx: TrainContext, cfg: never) => Promise<AlgoResult>,
  ars: trainArs as (ctx: TrainContext, cfg: never) => Promise<AlgoResult>,
  dqn: trainDqn as (ctx: TrainContext, cfg: never) => Promise<AlgoResult>,
  reinforce: trainReinforce as (ctx: TrainContext, cfg: never) => Promise<AlgoResult>,
};

/** Artifact file names, shared with readers (store, scorer, dashboard). */
export const ARTIFACT_FILES = {
  spec: 'spec.json',
  policy: 'policy.json',
  model: 'model.json',
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
    if (brief.trainer?.kind === 'command') return await trainByCommand(spec, brief, options, wall0);
    const curve: CurvePoint[] = [];
    const log = (name: string, step: number, value: number): void => {
      curve.push({ name, step, wallTime: (performance.now() - wall0) / 1000, value });
    };
    const trained = brief.kind === 'control' ? await trainControl(spec, brief, options, log) : await trainModel(spec, brief, options, log);
    const cost: JobCost = {
      envSteps: trained.envSteps,
      examples: trained.examples,
      wallSeconds: (performance.now() - wall0) / 1000,
      cpuSeconds: threadCpuSeconds() - cpu0,
    };
    const backend = spec.algorithm.name === 'ars' ? 'js' : await initTf();
    writeFileSync(join(dir, trained.file), JSON.stringify(trained.weights));
    writeFileSync(join(dir, ARTIFACT_FILES.curve), curve.map((p) => JSON.stringify(p)).join('\n') + (curve.length ? '\n' : ''));
    writeFileSync(join(dir, ARTIFACT_FILES.cost), JSON.stringify(cost, null, 2));
    const artifact: Artifact = {
      status: 'succeeded',
      dir,
      spec,
      cost,
      updates: trained.updates,
      stopReason: trained.stopReason,
      trainReturn: trained.trainReturn,
      backend,
    };
    writeFileSync(
      join(dir, ARTIFACT_FILES.status),
      JSON.stringify({ status: 'succeeded', stopReason: trained.stopReason, updates: trained.updates, trainReturn: trained.trainReturn, backend }, null, 2),
    );
    return artifact;
  } catch (err) {
    const e = err as Error;
    writeFailureStatus(dir, e.message, e instanceof SpecError ? 'invalid' : e.name === 'NaNError' ? 'nan' : 'error');
    throw err;
  }
}

/** A job of a task whose brief names an outside trainer: the program writes the artifact. */
async function trainByCommand(spec: JobSpec, brief: TaskBrief, options: RunJobOptions, wall0: number): Promise<Artifact> {
  const dir = options.outDir;
  const r = await runCommandTrainer(brief.trainer!, spec, brief, dir, options.data);
  const cost: JobCost = { envSteps: r.envSteps, examples: r.examples, wallSeconds: (performance.now() - wall0) / 1000, cpuSeconds: r.cpuSeconds };
  writeFileSync(join(dir, ARTIFACT_FILES.cost), JSON.stringify(cost, null, 2));
  writeFileSync(
    join(dir, ARTIFACT_FILES.status),
    JSON.stringify({ status: 'succeeded', stopReason: r.stopReason, updates: r.updates, trainReturn: r.trainReturn, backend: 'command' }, null, 2),
  );
  return { status: 'succeeded', dir, spec, cost, updates: r.updates, stopReason: r.stopReason, trainReturn: r.trainReturn, backend: 'command' };
}

interface Trained {
  file: string;
  weights: unknown;
  envSteps: number;
  examples: number;
  updates: number;
  stopReason: string;
  trainReturn: number | null;
}

/** Trains a control policy with the spec's RL algorithm. */
async function trainControl(spec: JobSpec, brief: TaskBrief, options: RunJobOptions, log: TrainContext['log']): Promise<Trained> {
  const env = getEnvironment(brief.environment.id);
  const recent: number[] = [];
  const first: number[] = [];
  let flat = false;
  const maxEnvSteps = Math.min(spec.budget.envSteps ?? 0, brief.budget.maxEnvSteps);
  const every = options.snapshotEvery ?? 0;
  let nextSnapshot = every;
  const ctx: TrainContext = {
    spec,
    brief,
    env,
    params: spec.environment.params,
    demonstrations: spec.dataset.demonstrations !== null ? options.data?.demonstrations : undefined,
    reward: compileExpression(spec.reward.expression ?? 'r', rewardVariableNames(brief)),
    rng: new Rng(mixSeed(spec.seed, 0x7a11)),
    maxEnvSteps,
    log,
    episodes(step, returns, lengths) {
      for (let i = 0; i < returns.length; i++) {
        log('charts/episodic_return', step, returns[i]);
        log('charts/episodic_length', step, lengths[i]);
        if (first.length < 20) first.push(returns[i]);
        recent.push(returns[i]);
        if (recent.length > 20) recent.shift();
      }
      const target = spec.budget.targetReturn;
      if (target !== null && recent.length >= 20 && mean(recent) >= target) return true;
      // A flat training curve after half the budget: hopeless, stop (training returns only).
      if (spec.budget.stopWhenFlat && step >= maxEnvSteps / 2 && first.length >= 20 && recent.length >= 20 && mean(recent) <= mean(first) + 1e-9) {
        flat = true;
        return true;
      }
      return false;
    },
    progress(envSteps, snapshot) {
      options.onProgress?.(envSteps, maxEnvSteps);
      if (options.onSnapshot && every > 0 && envSteps >= nextSnapshot) {
        options.onSnapshot(envSteps, snapshot());
        while (nextSnapshot <= envSteps) nextSnapshot += every;
      }
    },
  };
  if (spec.dataset.demonstrations !== null && !ctx.demonstrations) throw new Error(`dataset.demonstrations: set "${spec.dataset.demonstrations}" was not provided to the job`);
  const trainer = ALGORITHMS[spec.algorithm.name];
  if (!trainer) throw new Error(`algorithm.name: "${spec.algorithm.name}" does not train control tasks`);
  const result = await trainer(ctx, spec.algorithm as never);
  if (result.envSteps > maxEnvSteps) throw new Error(`engine error: ${result.envSteps} env steps exceed the cap ${maxEnvSteps}`);
  return {
    file: ARTIFACT_FILES.policy,
    weights: result.policy,
    envSteps: result.envSteps,
    examples: 0,
    updates: result.updates,
    stopReason: flat ? 'flat' : result.stopReason,
    trainReturn: recent.length ? mean(recent) : null,
  };
}

/** Trains a supervised model on the data the harness provided. */
async function trainModel(spec: JobSpec, brief: TaskBrief, options: RunJobOptions, log: TrainContext['log']): Promise<Trained> {
  if (spec.algorithm.name !== 'supervised') throw new Error(`algorithm.name: "${spec.algorithm.name}" does not train supervised tasks (use "supervised")`);
  if (!options.data) throw new Error('a supervised job needs its data sources (the harness provides them)');
  const maxExamples = Math.min(spec.budget.examples ?? 0, brief.budget.maxExamples ?? 0);
  const r = await trainSupervised(
    { spec, brief, data: options.data, maxExamples, log, progress: (n) => options.onProgress?.(n, maxExamples) },
    spec.algorithm,
  );
  if (r.examples > maxExamples) throw new Error(`engine error: ${r.examples} examples exceed the cap ${maxExamples}`);
  return {
    file: ARTIFACT_FILES.model,
    weights: r.model,
    envSteps: 0,
    examples: r.examples,
    updates: r.epochs,
    stopReason: r.stopReason,
    trainReturn: r.validation ? r.validation.metric : null,
  };
}

function mean(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}
