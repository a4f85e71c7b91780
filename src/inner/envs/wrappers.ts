/**
 * Gymnasium-style wrappers around a vector of environments. The engine stacks them on every
 * control job, so that no algorithm counts, shapes or normalises by itself:
 *
 *     VecEnv → StepBudget → ShapeReward → NormalizeObservation → TrainingEnv (what an algorithm holds)
 *
 * - `StepBudget` owns the env-step count against the job's cap and refuses a step that would
 *   pass it (the simulator never moves); on every vector step it also checks the engine's
 *   wall-clock and memory limits.
 * - `ShapeReward` replaces the environment's reward by the spec's compiled reward expression.
 * - `NormalizeObservation` keeps running mean and variance of the observations the policy acts
 *   on (Gymnasium's `NormalizeObservation`: parallel-variance updates, ε 1e-8, clip ±10).
 *
 * Like `gymnasium.Wrapper`, a wrapper forwards everything it does not change to the env inside.
 * `obs` and `nextObs` stay raw at every layer (the reward expression and replay buffers read
 * them); the normalised view is asked for explicitly (`observe`, `currentObs`, `finalObs`).
 */
import { NaNError } from '../errors.js';
import type { CompiledExpression } from '../expr/expression.js';
import { RunningNorm } from '../normalize.js';
import type { EpisodeStat } from './vector.js';

/** A synchronous vector of environments with same-step autoreset (the shape of `VecEnv`). */
export interface VectorEnv {
  readonly num: number;
  readonly obsDim: number;
  /** Current raw observations (num × obsDim), after autoreset. */
  readonly obs: Float64Array;
  /** Raw observations right after the last step, before autoreset (num × obsDim). */
  readonly nextObs: Float64Array;
  /** Rewards of the last step. */
  readonly rewards: Float64Array;
  readonly terminated: Uint8Array;
  readonly truncated: Uint8Array;
  /** Step index within the current episode after the last step (1 on an episode's first step). */
  readonly episodeStep: Int32Array;
  /** Steps every environment with its action (`actionDim` values each). */
  step(actions: ArrayLike<number>, actionDim?: number): void;
  /** Returns and forgets the episodes finished since the last call (canonical returns). */
  drainEpisodes(): EpisodeStat[];
}

/** Forwards everything to the wrapped env; subclasses override what they change. */
export class VectorWrapper implements VectorEnv {
  /** Wraps `env`. */
  constructor(readonly env: VectorEnv) {}
  get num(): number {
    return this.env.num;
  }
  get obsDim(): number {
    return this.env.obsDim;
  }
  get obs(): Float64Array {
    return this.env.obs;
  }
  get nextObs(): Float64Array {
    return this.env.nextObs;
  }
  get rewards(): Float64Array {
    return this.env.rewards;
  }
  get terminated(): Uint8Array {
    return this.env.terminated;
  }
  get truncated(): Uint8Array {
    return this.env.truncated;
  }
  get episodeStep(): Int32Array {
    return this.env.episodeStep;
  }
  /** Steps the wrapped env. */
  step(actions: ArrayLike<number>, actionDim = 1): void {
    this.env.step(actions, actionDim);
  }
  /** The wrapped env's finished episodes. */
  drainEpisodes(): EpisodeStat[] {
    return this.env.drainEpisodes();
  }
}

/** The env-step count of one job, shared by every env the job builds. */
export class StepCounter {
  /** Env steps taken so far. */
  used = 0;
  /** Starts a count against `cap` env steps. */
  constructor(readonly cap: number) {}
}

/** Thrown when something asks for a step the budget cannot pay for (an engine bug, never the spec's). */
export class StepCapError extends Error {
  /** Builds the error. */
  constructor(message: string) {
    super(message);
    this.name = 'StepCapError';
  }
}

/**
 * Counts env steps against the job's cap and refuses any step that would pass it, before the
 * simulator moves; checks the engine's wall-clock and memory limits on every vector step.
 */
export class StepBudget extends VectorWrapper {
  /** Wraps `env`, counting on `counter` and checking `limits` at every step. */
  constructor(
    env: VectorEnv,
    private readonly counter: StepCounter,
    private readonly limits: { check(): void },
  ) {
    super(env);
  }
  /** Env steps taken so far by every env of the job. */
  get used(): number {
    return this.counter.used;
  }
  /** The job's env-step cap. */
  get cap(): number {
    return this.counter.cap;
  }
  /** Whether one more vector step (`num` env steps) fits in the budget. */
  canStep(): boolean {
    return this.counter.used + this.num <= this.counter.cap;
  }
  /** Checks the limits, refuses a step past the cap, then steps and counts. */
  override step(actions: ArrayLike<number>, actionDim = 1): void {
    this.limits.check();
    if (!this.canStep()) {
      throw new StepCapError(`engine: refused a step of ${this.num} env steps with ${this.counter.used} of the job's ${this.counter.cap} already used`);
    }
    super.step(actions, actionDim);
    this.counter.used += this.num;
  }
}

/**
 * Replaces the reward by the spec's compiled expression over the observation that ended the
 * step (raw), the environment's reward `r`, the step index `t` and `done` (termination), in
 * that order. A non-finite value is a `NaNError` naming the expression and the variables.
 */
export class ShapeReward extends VectorWrapper {
  private readonly shaped: Float64Array;
  private readonly scratch: Float64Array;

  /** Wraps `env` with the reward `expression`. */
  constructor(
    env: VectorEnv,
    private readonly expression: CompiledExpression,
  ) {
    super(env);
    this.shaped = new Float64Array(env.num);
    this.scratch = new Float64Array(env.obsDim + 3);
  }
  /** The shaped rewards of the last step. */
  override get rewards(): Float64Array {
    return this.shaped;
  }
  /** Steps, then evaluates the expression for every env. */
  override step(actions: ArrayLike<number>, actionDim = 1): void {
    super.step(actions, actionDim);
    const { env, scratch, expression } = this;
    const d = env.obsDim;
    for (let i = 0; i < env.num; i++) {
      for (let k = 0; k < d; k++) scratch[k] = env.nextObs[i * d + k];
      scratch[d] = env.rewards[i];
      scratch[d + 1] = env.episodeStep[i];
      scratch[d + 2] = env.terminated[i];
      const v = expression.evaluate(scratch);
      if (!Number.isFinite(v)) {
        const vars = expression.variables.map((n, j) => `${n}=${scratch[j].toPrecision(4)}`).join(', ');
        throw new NaNError(`reward.expression "${expression.source}" gave ${v} at ${vars}`);
      }
      this.shaped[i] = v;
    }
  }
}

/**
 * Running observation statistics and the normalised view of the observations. The statistics
 * fold in the observations the policy acts on (`observe`), once per step; with `deferred` they
 * are queued instead and folded as one batch at `commit` (ARS V2 updates once per iteration).
 */
export class NormalizeObservation extends VectorWrapper {
  private readonly stats: RunningNorm;
  private readonly current: Float64Array;
  private readonly final: Float64Array;
  private folded = false;
  private readonly queue: number[] | null;

  /** Wraps `env`; `deferred` queues the observed rows until `commit`. */
  constructor(env: VectorEnv, deferred = false) {
    super(env);
    this.stats = new RunningNorm(env.obsDim);
    this.current = new Float64Array(env.num * env.obsDim);
    this.final = new Float64Array(env.num * env.obsDim);
    this.queue = deferred ? [] : null;
  }
  /** Steps; the new observations have not been folded yet. */
  override step(actions: ArrayLike<number>, actionDim = 1): void {
    super.step(actions, actionDim);
    this.folded = false;
  }
  /** The observations to act on, normalised, after folding them into the statistics (once per step). */
  observe(): Float64Array {
    if (!this.folded) {
      if (this.queue) for (const v of this.env.obs) this.queue.push(v);
      else this.stats.update(this.env.obs, this.num);
      this.folded = true;
    }
    return this.stats.apply(this.env.obs, this.num, this.current);
  }
  /** The current observations normalised with the statistics as they are (nothing folded). */
  currentObs(): Float64Array {
    return this.stats.apply(this.env.obs, this.num, this.current);
  }
  /** The observations that ended the last step (before autoreset), normalised, nothing folded. */
  finalObs(): Float64Array {
    return this.stats.apply(this.env.nextObs, this.num, this.final);
  }
  /** Folds `rows` extra observations (e.g. demonstrations) into the statistics. */
  fold(x: ArrayLike<number>, rows: number): void {
    if (rows > 0) this.stats.update(x, rows);
  }
  /** Normalises `rows` raw observations in place. */
  normalizeInPlace<T extends Float64Array | Float32Array>(x: T, rows: number): T {
    return this.stats.apply(x, rows, x);
  }
  /** Deferred mode: folds every queued row as one batch. */
  commit(): void {
    if (!this.queue || this.queue.length === 0) return;
    this.stats.update(this.queue, this.queue.length / this.obsDim);
    this.queue.length = 0;
  }
  /** The statistics frozen for the policy file. */
  freeze(): { mean: number[]; std: number[]; clip: number } {
    return this.stats.freeze();
  }
}

/** What an algorithm asks of its environments beyond the spec (ARS V2 always normalises, per iteration). */
export interface EnvOptions {
  /** Normalise observations even when the spec does not ask for it. */
  normalize?: boolean;
  /** Fold observation statistics only at `commitObservations()`, as one batch. */
  foldOnCommit?: boolean;
}

/**
 * The environments of one control job as an algorithm sees them: the engine's wrappers
 * stacked on a `VecEnv`. Rewards are shaped; observations come normalised from `observe`
 * when the spec (or the algorithm) asks for it and raw otherwise; every step is counted.
 */
export class TrainingEnv extends VectorWrapper {
  private readonly budget: StepBudget;
  private readonly norm: NormalizeObservation | null;

  /** Stacks the wrappers on `base`. */
  constructor(base: VectorEnv, o: { counter: StepCounter; limits: { check(): void }; reward: CompiledExpression; normalize: boolean; foldOnCommit?: boolean }) {
    const budget = new StepBudget(base, o.counter, o.limits);
    const shaped = new ShapeReward(budget, o.reward);
    const norm = o.normalize ? new NormalizeObservation(shaped, o.foldOnCommit ?? false) : null;
    super(norm ?? shaped);
    this.budget = budget;
    this.norm = norm;
  }
  /** Env steps taken so far by the job. */
  get used(): number {
    return this.budget.used;
  }
  /** The job's env-step cap. */
  get cap(): number {
    return this.budget.cap;
  }
  /** Whether one more vector step fits in the budget. */
  canStep(): boolean {
    return this.budget.canStep();
  }
  /** Observations to act on (normalised and folded into the statistics when normalising). */
  observe(): Float64Array {
    return this.norm ? this.norm.observe() : this.env.obs;
  }
  /** Current observations, normalised with the statistics as they are (for bootstrapping). */
  currentObs(): Float64Array {
    return this.norm ? this.norm.currentObs() : this.env.obs;
  }
  /** Observations that ended the last step, before autoreset, normalised as they are (truncation bootstrap). */
  finalObs(): Float64Array {
    return this.norm ? this.norm.finalObs() : this.env.nextObs;
  }
  /** Folds extra observations (demonstrations) into the statistics; nothing without normalisation. */
  foldObservations(x: ArrayLike<number>, rows: number): void {
    this.norm?.fold(x, rows);
  }
  /** Normalises raw observations (e.g. from a replay buffer) in place; nothing without normalisation. */
  normalizeInPlace<T extends Float64Array | Float32Array>(x: T, rows: number): T {
    return this.norm ? this.norm.normalizeInPlace(x, rows) : x;
  }
  /** With `foldOnCommit`: folds the observations acted on since the last commit. */
  commitObservations(): void {
    this.norm?.commit();
  }
  /** The frozen statistics for the policy file (null without normalisation). */
  obsNorm(): { mean: number[]; std: number[]; clip: number } | null {
    return this.norm ? this.norm.freeze() : null;
  }
}
