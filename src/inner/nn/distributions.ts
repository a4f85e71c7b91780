/**
 * Action distributions whose parameters a network outputs row by row, with their gradients
 * written out (the fused engine back-propagates them from the network's outputs):
 *
 * - `CategoricalHead`: logits → log-softmax, probabilities, entropy, log π(a), sampling, and the
 *   gradient of a·log π(a) + b·H with respect to the logits.
 * - `DiagGaussianHead`: means from the network and a learned, state-independent log standard
 *   deviation (CleanRL's `actor_logstd`), with its own gradient and Adam moments.
 *
 * Both implement `PolicyHead`, the interface PPO acts and learns through, so that the discrete and
 * the continuous case differ only in which head is built. All arithmetic is in double precision.
 */
import type { Rng } from '../../util/rng.js';
import { VecAdam } from './adam.js';
import type { AdamStep } from './mlp.js';

/** ½·log(2π): the normal density's normalising term, per dimension. */
const HALF_LOG_2PI = 0.5 * Math.log(2 * Math.PI);
/** ½·log(2πe): the entropy of a standard normal, per dimension. */
const HALF_LOG_2PI_E = 0.5 * Math.log(2 * Math.PI * Math.E);

/** A flat array of numbers that can be written (typed arrays and number[]). */
type Writable = { [index: number]: number };

/** Where a drawn action goes: `stored[so…]` the action learnt from, `env[eo…]` what the environment is given. */
export interface ActionSlots {
  stored: Writable;
  so: number;
  env: Writable;
  eo: number;
}

/**
 * An action distribution over rows of network outputs, as a policy-gradient learner uses it: sample
 * while acting, then per minibatch row `logProb`, `rowEntropy` and `backward`, and once per
 * minibatch `entropy`, `backwardEntropy`, `gradSumSq` and `step` (for parameters of its own).
 */
export interface PolicyHead {
  /** Network outputs per row (logits, or Gaussian means). */
  readonly outputs: number;
  /** Numbers per stored action (1: an index; else one value per action dimension). */
  readonly actionSize: number;
  /** Call before acting or evaluating with parameters that may have moved; zeroes the head's own gradients. */
  begin(): void;
  /** Draws an action from the distribution of the outputs at `out[o…]` into `into`; returns log π of the drawn action. */
  sample(out: ArrayLike<number>, o: number, rng: Rng, into: ActionSlots): number;
  /** log π(a) of the stored action `stored[so…]` under the outputs at `out[o…]`; that row stays set for `rowEntropy` and `backward`. */
  logProb(out: ArrayLike<number>, o: number, stored: ArrayLike<number>, so: number): number;
  /** The entropy of the row last set (what `entropy` sums over a minibatch). */
  rowEntropy(): number;
  /**
   * Writes ∂loss/∂outputs of the row last set into `grad[go…]`, for a loss whose derivatives are
   * `gLogp` by its log π(a) and `gEnt` by its entropy; gradients of the head's own parameters accumulate.
   */
  backward(gLogp: number, gEnt: number, grad: Writable, go: number): void;
  /** The minibatch's mean entropy, from the sum of `rowEntropy` over its `rows` rows. */
  entropy(rowSum: number, rows: number): number;
  /** Adds the gradient of `gEnt`·(minibatch entropy) for the parameters `backward` does not reach. */
  backwardEntropy(gEnt: number): void;
  /** `acc` plus the squares of the head's own gradients (for a global gradient norm). */
  gradSumSq(acc: number): number;
  /** One Adam step on the head's own parameters. */
  step(o: AdamStep): void;
}

/**
 * A categorical distribution over `n` choices set from one row of logits at a time: its log-softmax
 * (log p_j = x_j − logsumexp(x), with the maximum subtracted first), probabilities p_j = exp(log p_j)
 * and entropy H = −Σ p_j log p_j. Its scratch arrays are reused from row to row.
 */
export class CategoricalHead implements PolicyHead {
  /** Log-probabilities of the row last set. */
  readonly logp: Float64Array;
  /** Probabilities of the row last set. */
  readonly p: Float64Array;
  /** Entropy of the row last set. */
  h = 0;
  readonly actionSize = 1;
  private readonly weights: Float64Array;
  private action = 0;

  /** A distribution over `n` choices (n logits a row). */
  constructor(readonly n: number) {
    this.logp = new Float64Array(n);
    this.p = new Float64Array(n);
    this.weights = new Float64Array(n);
  }

  /** The number of logits a row. */
  get outputs(): number {
    return this.n;
  }

  /** Sets the distribution from the logits `x[o … o + n)`: log-softmax, probabilities and entropy. */
  set(x: ArrayLike<number>, o: number): this {
    const n = this.n;
    let max = -Infinity;
    for (let j = 0; j < n; j++) max = Math.max(max, x[o + j]);
    let sum = 0;
    for (let j = 0; j < n; j++) sum += Math.exp(x[o + j] - max);
    const lse = max + Math.log(sum);
    let h = 0;
    for (let j = 0; j < n; j++) {
      this.logp[j] = x[o + j] - lse;
      this.p[j] = Math.exp(this.logp[j]);
      h -= this.p[j] * this.logp[j];
    }
    this.h = h;
    return this;
  }

  /**
   * Writes into `grad[go + j]` the gradient with respect to logit j of gLogp·log p_a + gEnt·H for
   * the row last set: gLogp·([j = a] − p_j) + gEnt·(−p_j·(log p_j + H)).
   */
  gradient(a: number, gLogp: number, gEnt: number, grad: Writable, go: number): void {
    const { p, logp, h } = this;
    for (let j = 0; j < this.n; j++) grad[go + j] = gLogp * ((j === a ? 1 : 0) - p[j]) + -gEnt * p[j] * (logp[j] + h);
  }

  /** Draws a choice from the logits `x[o … o + n)` (weights exp(x_j − max x), one uniform draw); the row is not set. */
  draw(x: ArrayLike<number>, o: number, rng: Rng): number {
    const n = this.n;
    let max = -Infinity;
    for (let j = 0; j < n; j++) max = Math.max(max, x[o + j]);
    for (let j = 0; j < n; j++) this.weights[j] = Math.exp(x[o + j] - max);
    return rng.categorical(this.weights);
  }

  begin(): void {}

  sample(out: ArrayLike<number>, o: number, rng: Rng, into: ActionSlots): number {
    const a = this.draw(out, o, rng);
    into.stored[into.so] = a;
    into.env[into.eo] = a;
    return this.set(out, o).logp[a];
  }

  logProb(out: ArrayLike<number>, o: number, stored: ArrayLike<number>, so: number): number {
    this.action = stored[so];
    return this.set(out, o).logp[this.action];
  }

  rowEntropy(): number {
    return this.h;
  }

  backward(gLogp: number, gEnt: number, grad: Writable, go: number): void {
    this.gradient(this.action, gLogp, gEnt, grad, go);
  }

  entropy(rowSum: number, rows: number): number {
    return rowSum / rows;
  }

  backwardEntropy(): void {}

  gradSumSq(acc: number): number {
    return acc;
  }

  step(): void {}
}

/**
 * A diagonal Gaussian over `n` action dimensions: means from the network, a learned log standard
 * deviation per dimension that does not depend on the state (starting at `initLogStd`), trained with
 * Adam of its own. Sampled actions are clipped to [low, high] for the environment only.
 */
export class DiagGaussianHead implements PolicyHead {
  /** The learned log standard deviations. */
  readonly logStd: Float64Array;
  /** Their gradients, accumulated since `begin`. */
  readonly logStdGrad: Float64Array;
  readonly actionSize: number;
  private readonly std: Float64Array;
  private readonly z: Float64Array;
  private readonly adam: VecAdam;

  /** `n` dimensions with bounds `low`/`high` for the environment's actions. */
  constructor(
    readonly n: number,
    initLogStd: number,
    private readonly low: readonly number[],
    private readonly high: readonly number[],
  ) {
    this.logStd = new Float64Array(n).fill(initLogStd);
    this.logStdGrad = new Float64Array(n);
    this.std = new Float64Array(n);
    this.z = new Float64Array(n);
    this.adam = new VecAdam(n);
    this.actionSize = n;
  }

  /** The number of means a row. */
  get outputs(): number {
    return this.n;
  }

  begin(): void {
    for (let j = 0; j < this.n; j++) this.std[j] = Math.exp(this.logStd[j]);
    this.logStdGrad.fill(0);
  }

  sample(out: ArrayLike<number>, o: number, rng: Rng, into: ActionSlots): number {
    const { stored, so, env, eo } = into;
    let lp = 0;
    for (let j = 0; j < this.n; j++) {
      const z = rng.normal();
      const a = out[o + j] + this.std[j] * z;
      stored[so + j] = a;
      env[eo + j] = Math.min(this.high[j], Math.max(this.low[j], a));
      lp += -0.5 * z * z - this.logStd[j] - HALF_LOG_2PI;
    }
    return lp;
  }

  logProb(out: ArrayLike<number>, o: number, stored: ArrayLike<number>, so: number): number {
    let lp = 0;
    for (let j = 0; j < this.n; j++) {
      const z = (stored[so + j] - out[o + j]) / this.std[j];
      this.z[j] = z;
      lp += -0.5 * z * z - this.logStd[j] - HALF_LOG_2PI;
    }
    return lp;
  }

  /** 0: the entropy does not depend on the row (see `entropy`). */
  rowEntropy(): number {
    return 0;
  }

  /** ∂log π/∂μ_j = z_j/σ_j and ∂log π/∂log σ_j = z_j² − 1, with z_j = (a_j − μ_j)/σ_j; the entropy does not depend on μ. */
  backward(gLogp: number, _gEnt: number, grad: Writable, go: number): void {
    for (let j = 0; j < this.n; j++) {
      const z = this.z[j];
      grad[go + j] = (gLogp * z) / this.std[j];
      this.logStdGrad[j] += gLogp * (z * z - 1);
    }
  }

  /** Σ_j (log σ_j + ½·log(2πe)), the same for every row. */
  entropy(): number {
    let h = 0;
    for (let j = 0; j < this.n; j++) h += this.logStd[j] + HALF_LOG_2PI_E;
    return h;
  }

  /** ∂H/∂log σ_j = 1. */
  backwardEntropy(gEnt: number): void {
    for (let j = 0; j < this.n; j++) this.logStdGrad[j] += gEnt;
  }

  gradSumSq(acc: number): number {
    for (let j = 0; j < this.n; j++) acc += this.logStdGrad[j] ** 2;
    return acc;
  }

  step(o: AdamStep): void {
    this.adam.step(this.logStd, this.logStdGrad, o);
  }
}
