/**
 * A fused small MLP: forward, backward and Adam in single precision on WebAssembly SIMD kernels,
 * over one preallocated memory per network (parameters, gradients, Adam moments, activations and
 * scratch), so that a training step allocates nothing. Layers wider than the input are padded to
 * a multiple of 4 units whose weights stay exactly zero (their gradients are zero), so results do
 * not depend on the padding. Deterministic: the same weights and inputs give the same bits.
 *
 * Every gradient-trained algorithm (PPO, DQN, REINFORCE, supervised) trains on this engine, for
 * speed at the small widths and batches the schema allows: `npm run bench -- crossover` times one
 * training step (forward, backward, Adam) of [8, w, w, 2] at batch n here and on tfjs-wasm,
 * alternating in one process, across that range.
 */
import type { DenseLayer } from '../policy.js';
import { type Kernels, instantiateKernels } from './kernels.js';

/** The `backend` an artifact records for a job trained on the fused engine. */
export const FUSED_BACKEND = 'fused-wasm-simd';

/** TensorFlow.js's default Adam epsilon, which DQN, REINFORCE, supervised training and PPO's warm start use: their seeded results depend on it. */
export const TFJS_ADAM_EPS = 1e-7;

/** Adam's settings for one step (PyTorch's formulation; `l2` adds λ·p to the gradient, `decoupledDecay` is AdamW's λ). */
export interface AdamStep {
  lr: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  /** Multiplies the gradients first (global-norm clipping). */
  gradScale?: number;
  l2?: number;
  decoupledDecay?: number;
}

const pad4 = (n: number): number => (n + 3) & ~3;
const PAGE = 65536;

let allocated = 0;

/**
 * Bytes of WebAssembly memory the fused engine has allocated in this thread so far (it only
 * grows): the job limits charge a job what this rises by while it runs.
 */
export function fusedMemoryBytes(): number {
  return allocated;
}

/** A dense network with `activation` on hidden layers and a linear output. */
export class FusedMlp {
  /** Row stride of the output and of `gradOutput` (the output width rounded up to 4). */
  readonly outStride: number;
  /** Adam steps taken. */
  steps = 0;
  private readonly widths: number[];
  private readonly wOff: number[] = [];
  private readonly bOff: number[] = [];
  private readonly paramFloats: number;
  private readonly maxWidth: number;
  private readonly wtFloats: number;
  private capacity = 0;
  private k!: Kernels;
  private f32!: Float32Array;
  private hOff: number[] = [];
  private dA = 0;
  private dB = 0;
  private wt = 0;
  private gradOut = 0;
  private maskOff: number[] = [];
  private masked = false;

  /** Layer sizes [inputs, hidden…, outputs]; room for `capacity` rows (grown on demand). */
  constructor(
    readonly sizes: readonly number[],
    readonly activation: 'tanh' | 'relu',
    capacity = 64,
  ) {
    if (sizes.length < 2 || !sizes.every((s) => Number.isInteger(s) && s >= 1)) throw new RangeError(`invalid layer sizes [${sizes.join(', ')}]`);
    this.widths = sizes.map((s, l) => (l === 0 ? s : pad4(s)));
    this.outStride = this.widths[this.widths.length - 1];
    let off = 0;
    let wt = 0;
    for (let l = 0; l + 1 < sizes.length; l++) {
      this.wOff.push(off);
      off += this.widths[l] * this.widths[l + 1];
      this.bOff.push(off);
      off += this.widths[l + 1];
      if (l > 0) wt = Math.max(wt, this.widths[l] * this.widths[l + 1]);
    }
    this.paramFloats = pad4(off);
    this.wtFloats = pad4(wt);
    this.maxWidth = Math.max(...this.widths.slice(1));
    this.ensure(Math.max(1, capacity));
  }

  /** Number of layers (weight matrices). */
  get depth(): number {
    return this.sizes.length - 1;
  }

  /** Grows the activation buffers to hold `rows` rows (keeping parameters and Adam state). */
  private ensure(rows: number): void {
    if (rows <= this.capacity) return;
    const cap = Math.max(rows, this.capacity * 2);
    const P = this.paramFloats;
    let off = 4 * P; // floats: params, grads, m, v
    const wt = off;
    off += this.wtFloats;
    const hOff: number[] = [];
    for (const w of this.widths) {
      hOff.push(off);
      off += pad4(cap * w);
    }
    const dA = off;
    off += cap * this.maxWidth;
    const dB = off;
    off += cap * this.maxWidth;
    const maskOff: number[] = [];
    for (let l = 1; l + 1 < this.widths.length; l++) {
      maskOff[l] = off;
      off += pad4(cap * this.widths[l]);
    }
    const pages = Math.ceil((off * 4) / PAGE) + 1;
    const memory = new WebAssembly.Memory({ initial: pages });
    allocated += pages * PAGE;
    const f32 = new Float32Array(memory.buffer);
    if (this.capacity) f32.set(this.f32.subarray(0, 4 * P));
    this.f32 = f32;
    this.k = instantiateKernels(memory);
    this.capacity = cap;
    this.hOff = hOff;
    this.wt = wt;
    this.dA = dA;
    this.dB = dB;
    this.maskOff = maskOff;
  }

  /** All parameters (padded layout) as a live view. */
  get params(): Float32Array {
    return this.f32.subarray(0, this.paramFloats);
  }

  /** All gradients (padded layout, same order as `params`) as a live view. */
  get grads(): Float32Array {
    return this.f32.subarray(this.paramFloats, 2 * this.paramFloats);
  }

  /** The input rows [n × inputs] to fill before `forward(n)` (a live view, valid until the next call that grows the net). */
  input(n: number): Float32Array {
    this.ensure(n);
    return this.f32.subarray(this.hOff[0], this.hOff[0] + n * this.sizes[0]);
  }

  /** Row stride of hidden layer `l`'s activations and dropout mask (l = 1 … depth − 1). */
  width(l: number): number {
    return this.widths[l];
  }

  /**
   * The dropout mask of hidden layer `l` (1 … depth − 1) for `n` rows [n × width(l)], to fill
   * (0 or 1/(1 − rate)) before `forward(n, true)` (a live view).
   */
  mask(l: number, n: number): Float32Array {
    if (!(l >= 1 && l < this.depth)) throw new RangeError(`layer ${l} has no dropout mask`);
    this.ensure(n);
    return this.f32.subarray(this.maskOff[l], this.maskOff[l] + n * this.widths[l]);
  }

  /**
   * Runs the net on the first `n` rows of `input` (hidden activations times the `mask`s when
   * `dropout`); returns the output rows [n × outStride] (a live view).
   */
  forward(n: number, dropout = false): Float32Array {
    this.ensure(n);
    const { k, widths, f32 } = this;
    const L = this.depth;
    this.masked = dropout;
    for (let l = 0; l < L; l++) {
      const inW = widths[l];
      const outW = widths[l + 1];
      k.gemm(4 * this.hOff[l + 1], 4 * this.hOff[l], 4 * this.wOff[l], 4 * this.bOff[l], n, inW, outW, inW, 1, 1);
      if (l + 1 < L) {
        if (this.activation === 'tanh') k.tanh(4 * this.hOff[l + 1], n * outW);
        else k.relu(4 * this.hOff[l + 1], n * outW);
        if (dropout) {
          const h = this.hOff[l + 1];
          const m = this.maskOff[l + 1];
          for (let i = 0; i < n * outW; i++) f32[h + i] *= f32[m + i];
        }
      }
    }
    return this.output(n);
  }

  /** The output rows of the last `forward` [n × outStride] (a live view). */
  output(n: number): Float32Array {
    const o = this.hOff[this.depth];
    return this.f32.subarray(o, o + n * this.outStride);
  }

  /** Zeroed rows [n × outStride] to fill with ∂loss/∂output before `backward(n)` (a live view). */
  gradOutput(n: number): Float32Array {
    this.ensure(n);
    this.gradOut = this.dA;
    const g = this.f32.subarray(this.dA, this.dA + n * this.outStride);
    g.fill(0);
    return g;
  }

  /**
   * Gradients of the loss with respect to every parameter (overwriting `grads`), from the
   * last `forward(n)` and the `gradOutput(n)` rows.
   */
  backward(n: number): void {
    const { k, widths, f32 } = this;
    let cur = this.gradOut;
    let other = cur === this.dA ? this.dB : this.dA;
    const P = this.paramFloats;
    for (let l = this.depth - 1; l >= 0; l--) {
      const inW = widths[l];
      const outW = widths[l + 1];
      // ∂W = Hᵀ·∂Z, ∂b = Σ rows ∂Z
      k.gemm(4 * (P + this.wOff[l]), 4 * this.hOff[l], 4 * cur, 0, inW, n, outW, 1, inW, 0);
      k.colsum(4 * (P + this.bOff[l]), 4 * cur, n, outW);
      if (l === 0) break;
      // ∂H = ∂Z·Wᵀ, then through the activation.
      const w = this.wOff[l];
      const t = this.wt;
      k.transpose(4 * t, 4 * w, inW, outW);
      k.gemm(4 * other, 4 * cur, 4 * t, 0, n, outW, inW, outW, 1, 0);
      if (this.masked) {
        // The stored activation is a·mask: ∂z = ∂h·mask·a′, with a = h/mask where mask ≠ 0.
        const h = this.hOff[l];
        const m = this.maskOff[l];
        const tanh = this.activation === 'tanh';
        for (let i = 0; i < n * inW; i++) {
          const mk = f32[m + i];
          const hv = f32[h + i];
          f32[other + i] = mk === 0 ? 0 : f32[other + i] * mk * (tanh ? 1 - (hv / mk) ** 2 : hv > 0 ? 1 : 0);
        }
      } else if (this.activation === 'tanh') k.tanhGrad(4 * other, 4 * this.hOff[l], n * inW);
      else k.reluGrad(4 * other, 4 * this.hOff[l], n * inW);
      [cur, other] = [other, cur];
    }
  }

  /** Σ gradient² over all parameters. */
  gradSumSq(): number {
    return this.k.sumsq(4 * this.paramFloats, this.paramFloats);
  }

  /** One Adam step on the current gradients. */
  adam(o: AdamStep): void {
    const b1 = o.beta1 ?? 0.9;
    const b2 = o.beta2 ?? 0.999;
    this.steps += 1;
    const bc1 = 1 - b1 ** this.steps;
    const bc2 = 1 - b2 ** this.steps;
    const P = this.paramFloats;
    const decay = 1 - o.lr * (o.decoupledDecay ?? 0);
    this.k.adam(0, 4 * P, 8 * P, 12 * P, P, o.gradScale ?? 1, o.l2 ?? 0, decay, b1, b2, o.lr / bc1, 1 / Math.sqrt(bc2), o.eps ?? 1e-8);
  }

  /** Adds λ·W to the gradients of the weight matrices (L2 on weights, not biases). */
  addL2(lambda: number): void {
    const f = this.f32;
    const P = this.paramFloats;
    for (let l = 0; l < this.depth; l++) for (let i = this.wOff[l]; i < this.bOff[l]; i++) f[P + i] += lambda * f[i];
  }

  /** ½·λ·Σ W² over the weight matrices. */
  l2Penalty(lambda: number): number {
    const f = this.f32;
    let s = 0;
    for (let l = 0; l < this.depth; l++) for (let i = this.wOff[l]; i < this.bOff[l]; i++) s += f[i] * f[i];
    return 0.5 * lambda * s;
  }

  /** Multiplies the weight matrices (not biases) by `factor` (AdamW's decoupled decay). */
  scaleWeights(factor: number): void {
    const f = this.f32;
    for (let l = 0; l < this.depth; l++) for (let i = this.wOff[l]; i < this.bOff[l]; i++) f[i] *= factor;
  }

  /** One SGD step with (heavy-ball) momentum: u ← μ·u + g, p ← p − lr·u (TensorFlow.js's momentum optimiser). */
  sgd(lr: number, momentum: number): void {
    const f = this.f32;
    const P = this.paramFloats;
    for (let i = 0; i < P; i++) {
      const u = momentum * f[2 * P + i] + f[P + i];
      f[2 * P + i] = u;
      f[i] -= lr * u;
    }
  }

  /** Resets the Adam moments and step count. */
  resetAdam(): void {
    this.f32.fill(0, 2 * this.paramFloats, 4 * this.paramFloats);
    this.steps = 0;
  }

  /** Sets the weights of layer `l` from a row-major [in × out] array and its bias. */
  setLayer(l: number, weights: ArrayLike<number>, bias: ArrayLike<number>): void {
    const n = this.sizes[l];
    const m = this.sizes[l + 1];
    const inW = this.widths[l];
    const outW = this.widths[l + 1];
    if (weights.length !== n * m || bias.length !== m) throw new RangeError(`layer ${l} needs ${n * m} weights and ${m} biases`);
    const f = this.f32;
    f.fill(0, this.wOff[l], this.wOff[l] + inW * outW);
    f.fill(0, this.bOff[l], this.bOff[l] + outW);
    for (let i = 0; i < n; i++) for (let j = 0; j < m; j++) f[this.wOff[l] + i * outW + j] = weights[i * m + j];
    for (let j = 0; j < m; j++) f[this.bOff[l] + j] = bias[j];
  }

  /** The weights as plain dense layers (unpadded), for artifacts and plain-JS acting. */
  layers(): DenseLayer[] {
    const out: DenseLayer[] = [];
    const f = this.f32;
    for (let l = 0; l < this.depth; l++) {
      const n = this.sizes[l];
      const m = this.sizes[l + 1];
      const outW = this.widths[l + 1];
      const weights = new Array<number>(n * m);
      for (let i = 0; i < n; i++) for (let j = 0; j < m; j++) weights[i * m + j] = f[this.wOff[l] + i * outW + j];
      out.push({ in: n, out: m, weights, bias: Array.from(f.subarray(this.bOff[l], this.bOff[l] + m)) });
    }
    return out;
  }

  /** Copies the parameters of a net of the same shape (a DQN target update when `tau` is 1, else Polyak averaging). */
  copyFrom(src: FusedMlp, tau = 1): void {
    if (src.paramFloats !== this.paramFloats || src.sizes.join() !== this.sizes.join()) throw new RangeError('copyFrom needs a net of the same shape');
    const a = this.params;
    const b = src.params;
    if (tau >= 1) a.set(b);
    else for (let i = 0; i < a.length; i++) a[i] = tau * b[i] + (1 - tau) * a[i];
  }
}
