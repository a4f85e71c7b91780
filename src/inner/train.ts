/**
 * The training engine's entry: `runJob` validates a spec against its task's brief, trains it with
 * the chosen algorithm (control: PPO, DQN, REINFORCE or ARS in environments behind the engine's
 * wrappers; supervised: the supervised trainer on the harness's data; or an outside command) within
 * the budget and caps the engine counts itself, and writes the artifact.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACT_FILES, type Artifact, type CurvePoint, type JobCost } from '../spec/artifact.js';
import type { TaskBrief } from '../spec/brief.js';
import type { SupervisedData } from '../spec/data.js';
import type { JobSpec } from '../spec/schema.js';
import { SpecError } from '../spec/validate.js';
import { Rng, mixSeed } from '../util/rng.js';
import { trainArs } from './algos/ars.js';
import { trainDqn } from './algos/dqn.js';
import { trainPpo } from './algos/ppo.js';
import { trainReinforce } from './algos/reinforce.js';
import { trainSupervised } from './algos/supervised.js';
import { runCommandTrainer } from './command.js';
import type { AlgoResult, TrainContext } from './context.js';
import { threadCpuSeconds } from './cost.js';
import { type ClosableVectorEnv, type EnvSource, environmentFor } from './envs/source.js';
import { VecEnv } from './envs/vector.js';
import { StepCounter, TrainingEnv } from './envs/wrappers.js';
import { errorKind } from './errors.js';
import { compileExpression } from './expr/expression.js';
import { type JobLimits, jobLimits } from './limits.js';
import { FUSED_BACKEND } from './nn/mlp.js';
import type { PolicyFile } from './policy.js';
import { rewardVariableNames, validateSpec, validateSpecAsWritten } from './spec-check.js';

/** The artifact's file names and types, for callers of the engine. */
export { ARTIFACT_FILES, type Artifact, type JobCost } from '../spec/artifact.js';

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
  /**
   * When the job's wall clock started, in ms since the epoch (default: when runJob is called).
   * A caller that spent time on the job before (e.g. loading the engine) passes when it took it,
   * so that the time counts against the task's wall-clock cap.
   */
  startedAt?: number;
}

/** A control algorithm's entry point (its settings typed by the algorithm). */
type ControlTrainer = (ctx: TrainContext, cfg: never) => Promise<AlgoResult>;

/** The control algorithms by `algorithm.name`. */
const ALGORITHMS: Partial<Record<JobSpec['algorithm']['name'], ControlTrainer>> = {
  ppo: trainPpo as ControlTrainer,
  ars: trainArs as ControlTrainer,
  dqn: trainDqn as ControlTrainer,
  reinforce: trainReinforce as ControlTrainer,
};

/** Writes a failure status into an artifact directory (used by the engine and the executor). */
export function writeFailureStatus(dir: string, reason: string, kind: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, ARTIFACT_FILES.status), JSON.stringify({ status: 'failed', kind, error: reason }, null, 2));
}

/**
 * Runs one training job for real: validates the spec against the task's brief, trains
 * with the chosen algorithm within the budget the engine counts itself, and writes the
 * artifact (spec, policy weights, curve, cost, status) to `options.outDir`.
 * The engine also enforces the brief's wall-clock and memory caps itself (`limits.ts`).
 * Same spec and seed give the same result. Throws on invalid specs and failed training
 * (a NaN, a cap passed: `TimeLimitError`, `MemoryLimitError`), after writing the failure
 * and its kind into `status.json`.
 */
export async function runJob(input: unknown, brief: TaskBrief, options: RunJobOptions): Promise<Artifact> {
  return trainJob(() => validateSpec(input, brief), brief, options);
}

/**
 * Trains `spec` exactly as given, after the brief's checks but with the fields the job type
 * ignores kept (`validateSpecAsWritten`): for the test that shows the engine ignores them
 * (inert.test.ts). Everything else trains through `runJob`, on the canonical spec.
 */
export async function runJobAsWritten(input: unknown, brief: TaskBrief, options: RunJobOptions): Promise<Artifact> {
  return trainJob(() => validateSpecAsWritten(input, brief), brief, options);
}

async function trainJob(check: () => ReturnType<typeof validateSpec>, brief: TaskBrief, options: RunJobOptions): Promise<Artifact> {
  const dir = options.outDir;
  mkdirSync(dir, { recursive: true });
  const wall0 = performance.now();
  const cpu0 = threadCpuSeconds();
  try {
    const checked = check();
    if (!checked.ok) throw checked.error;
    const spec = checked.spec;
    writeFileSync(join(dir, ARTIFACT_FILES.spec), JSON.stringify(spec, null, 2));
    if (brief.trainer?.kind === 'command') return await trainByCommand(spec, brief, options, wall0);
    const curve: CurvePoint[] = [];
    const log = (name: string, step: number, value: number): void => {
      curve.push({ name, step, wallTime: (performance.now() - wall0) / 1000, value });
    };
    // The engine's own wall-clock and memory caps, counted from the job's start.
    const clock0 = options.startedAt === undefined ? wall0 : wall0 - Math.max(0, Date.now() - options.startedAt);
    const limits = jobLimits(brief, clock0);
    const trained = brief.kind === 'control' ? await trainControl(spec, brief, options, log, limits) : await trainModel(spec, brief, options, log, limits);
    const cost: JobCost = {
      envSteps: trained.envSteps,
      examples: trained.examples,
      wallSeconds: (performance.now() - wall0) / 1000,
      cpuSeconds: threadCpuSeconds() - cpu0,
    };
    const backend = spec.algorithm.name === 'ars' ? 'js' : FUSED_BACKEND;
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
    writeFailureStatus(dir, e.message, e instanceof SpecError ? 'invalid' : errorKind(e));
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

/** What `controlContext` needs beyond the spec and the brief. */
export interface ControlContextOptions {
  /** The environment family the job trains on (a simulator built here, or a vector such as the Gymnasium bridge). */
  env: EnvSource;
  /** The env-step cap the engine counts against. */
  maxEnvSteps: number;
  /** The wall-clock and memory caps (checked at every vector step and by the algorithm's gradient loops). */
  limits: { check(): void };
  /** Names of the reward expression's variables, in the order obs…, r, t, done (default: the brief's). */
  rewardVariables?: string[];
  demonstrations?: TrainContext['demonstrations'];
  log?: TrainContext['log'];
  episodes?: TrainContext['episodes'];
  progress?: TrainContext['progress'];
}

/**
 * Builds the context a control algorithm trains in: environments seeded from the spec behind
 * the engine's wrappers (reward shaping, observation normalisation, the env-step budget and the
 * limits), and the step counter the engine reads the job's cost from; `close` ends every
 * outside process the environments hold (the Gymnasium bridge). Exported for tests that train on
 * environments of their own.
 */
export function controlContext(spec: JobSpec, brief: TaskBrief, o: ControlContextOptions): { ctx: TrainContext; counter: StepCounter; close: () => void } {
  const counter = new StepCounter(o.maxEnvSteps);
  let built = 0;
  const open: ClosableVectorEnv[] = [];
  const reward = compileExpression(spec.reward.expression ?? 'r', o.rewardVariables ?? rewardVariableNames(brief));
  const ctx: TrainContext = {
    spec,
    brief,
    info: o.env.info,
    rng: new Rng(mixSeed(spec.seed, 0x7a11)),
    demonstrations: o.demonstrations,
    makeEnv(num, options = {}) {
      if (num > counter.cap) throw new Error(`budget.envSteps (${counter.cap}) is smaller than environment.numEnvs (${num})`);
      // The first vector is seeded with the spec's seed; any later one with a seed of its own.
      const seed = built === 0 ? spec.seed : mixSeed(spec.seed, 0xe2, built);
      built += 1;
      let base: VecEnv | ClosableVectorEnv;
      if (o.env.vector) {
        base = o.env.vector(num, seed, spec.environment.params);
        open.push(base);
      } else if (o.env.make) base = new VecEnv(o.env.make, num, seed, spec.environment.params);
      else throw new Error(`engine: environment ${o.env.info.id} has neither make nor vector`);
      const normalize = options.normalize ?? spec.environment.wrappers.includes('normalize-observation');
      return new TrainingEnv(base, { counter, limits: o.limits, reward, normalize, foldOnCommit: options.foldOnCommit });
    },
    checkLimits: () => o.limits.check(),
    log: o.log ?? (() => {}),
    episodes: o.episodes ?? (() => false),
    progress: o.progress ?? (() => {}),
  };
  const close = (): void => {
    for (const v of open.splice(0)) v.close();
  };
  return { ctx, counter, close };
}

/** Trains a control policy with the spec's RL algorithm. */
async function trainControl(spec: JobSpec, brief: TaskBrief, options: RunJobOptions, log: TrainContext['log'], limits: JobLimits): Promise<Trained> {
  const recent: number[] = [];
  const first: number[] = [];
  let flat = false;
  const maxEnvSteps = Math.min(spec.budget.envSteps ?? 0, brief.budget.maxEnvSteps);
  const every = options.snapshotEvery ?? 0;
  let nextSnapshot = every;
  const demonstrations = spec.dataset.demonstrations !== null ? options.data?.demonstrations : undefined;
  if (spec.dataset.demonstrations !== null && !demonstrations) {
    throw new Error(`dataset.demonstrations: set "${spec.dataset.demonstrations}" was not provided to the job`);
  }
  const { ctx, counter, close } = controlContext(spec, brief, {
    env: environmentFor(brief),
    maxEnvSteps,
    limits,
    demonstrations,
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
  });
  const trainer = ALGORITHMS[spec.algorithm.name];
  if (!trainer) throw new Error(`algorithm.name: "${spec.algorithm.name}" does not train control tasks`);
  let result: AlgoResult;
  try {
    result = await trainer(ctx, spec.algorithm as never);
  } finally {
    close();
  }
  return {
    file: ARTIFACT_FILES.policy,
    weights: result.policy,
    envSteps: counter.used,
    examples: 0,
    updates: result.updates,
    stopReason: flat ? 'flat' : result.stopReason,
    trainReturn: recent.length ? mean(recent) : null,
  };
}

/** Trains a supervised model on the data the harness provided. */
async function trainModel(spec: JobSpec, brief: TaskBrief, options: RunJobOptions, log: TrainContext['log'], limits: JobLimits): Promise<Trained> {
  if (spec.algorithm.name !== 'supervised') throw new Error(`algorithm.name: "${spec.algorithm.name}" does not train supervised tasks (use "supervised")`);
  if (!options.data) throw new Error('a supervised job needs its data sources (the harness provides them)');
  const maxExamples = Math.min(spec.budget.examples ?? 0, brief.budget.maxExamples ?? 0);
  const r = await trainSupervised(
    { spec, brief, data: options.data, maxExamples, log, progress: (n) => options.onProgress?.(n, maxExamples), checkLimits: () => limits.check() },
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
