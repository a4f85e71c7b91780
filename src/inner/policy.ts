/**
 * The trained model as a plain, library-independent file: an MLP's weights plus the
 * observation normaliser frozen at the end of training. The hidden evaluation reads
 * this file and runs it with `PolicyRunner`, so scoring does not depend on how the
 * job trained the network.
 */
import { NaNError } from './errors.js';
import type { Space } from './envs/types.js';

/** The format tag of `policy.json`. */
export const POLICY_FORMAT = 'rrl-mlp-policy/1';

/** One dense layer, weights row-major as [in][out]. */
export interface DenseLayer {
  in: number;
  out: number;
  weights: number[];
  bias: number[];
}

/** The artifact's `policy.json`. */
export interface PolicyFile {
  format: typeof POLICY_FORMAT;
  obsDim: number;
  /** Discrete: the output is one logit per action (greedy = argmax). Box: the output is the action mean (greedy = mean clipped to [low, high]). */
  actionSpace: { type: 'discrete'; n: number } | { type: 'box'; low: number[]; high: number[] };
  activation: 'tanh' | 'relu';
  layers: DenseLayer[];
  obsNorm: { mean: number[]; std: number[]; clip: number } | null;
}

/** The policy file of an MLP that acts on `obsDim` observations in `space`, with its observation normaliser. */
export function policyFile(
  space: Space,
  obsDim: number,
  activation: PolicyFile['activation'],
  layers: DenseLayer[],
  obsNorm: PolicyFile['obsNorm'],
): PolicyFile {
  return {
    format: POLICY_FORMAT,
    obsDim,
    actionSpace: space.type === 'discrete' ? { type: 'discrete', n: space.n } : { type: 'box', low: [...space.low], high: [...space.high] },
    activation,
    layers,
    obsNorm,
  };
}

/** Throws a `NaNError` ("`who` produced non-finite weights") when a weight or bias of `policy` is not finite. */
export function assertFinitePolicy(policy: PolicyFile, who: string): void {
  for (const l of policy.layers) {
    if (!l.weights.every(Number.isFinite) || !l.bias.every(Number.isFinite)) throw new NaNError(`${who} produced non-finite weights`);
  }
}

/** Forward pass of a dense MLP over a batch (rows × in) with `activation` on hidden layers. */
export function mlpForward(
  layers: ReadonlyArray<{ in: number; out: number; weights: ArrayLike<number>; bias: ArrayLike<number> }>,
  activation: 'tanh' | 'relu',
  input: ArrayLike<number>,
  rows: number,
): Float64Array {
  let x: ArrayLike<number> = input;
  for (let l = 0; l < layers.length; l++) {
    const { in: n, out: m, weights: w, bias: b } = layers[l];
    const y = new Float64Array(rows * m);
    const last = l === layers.length - 1;
    for (let r = 0; r < rows; r++) {
      const xo = r * n;
      const yo = r * m;
      for (let j = 0; j < m; j++) y[yo + j] = b[j];
      for (let i = 0; i < n; i++) {
        const xi = x[xo + i];
        if (xi === 0) continue;
        const wo = i * m;
        for (let j = 0; j < m; j++) y[yo + j] += xi * w[wo + j];
      }
      if (!last) {
        for (let j = 0; j < m; j++) {
          const v = y[yo + j];
          y[yo + j] = activation === 'tanh' ? Math.tanh(v) : Math.max(v, 0);
        }
      }
    }
    x = y;
  }
  return x as Float64Array;
}

/** Index of the largest value in `v[offset .. offset+n)`. */
export function argmax(v: ArrayLike<number>, offset: number, n: number): number {
  let best = 0;
  for (let j = 1; j < n; j++) if (v[offset + j] > v[offset + best]) best = j;
  return best;
}

/** Runs a saved policy greedily (argmax action) on batches of raw observations. */
export class PolicyRunner {
  private readonly file: PolicyFile;

  /** Checks the file's shape and wraps it. */
  constructor(file: PolicyFile) {
    if (file.format !== POLICY_FORMAT) throw new Error(`unsupported policy format "${String(file.format)}"`);
    let width = file.obsDim;
    for (const [i, l] of file.layers.entries()) {
      if (l.in !== width || l.weights.length !== l.in * l.out || l.bias.length !== l.out) {
        throw new Error(`policy layer ${i} has inconsistent shape`);
      }
      width = l.out;
    }
    const outputs = file.actionSpace.type === 'discrete' ? file.actionSpace.n : file.actionSpace.low.length;
    if (width !== outputs) throw new Error(`policy outputs ${width} values for ${outputs} action values`);
    const n = file.obsNorm;
    if (n && (n.mean.length !== file.obsDim || n.std.length !== file.obsDim || !n.std.every((s) => Number.isFinite(s) && s > 0) || !(n.clip > 0))) {
      throw new Error(`policy obsNorm must have ${file.obsDim} means, ${file.obsDim} positive stds and a positive clip`);
    }
    this.file = file;
  }

  /** Values per action: 1 for discrete spaces, the vector length for boxes. */
  get actionDim(): number {
    return this.file.actionSpace.type === 'discrete' ? 1 : this.file.actionSpace.low.length;
  }

  /** Greedy actions for `rows` raw observations laid out row by row (rows × actionDim values). */
  act(obs: ArrayLike<number>, rows: number): Float64Array {
    const { obsDim, obsNorm, layers, activation, actionSpace } = this.file;
    if (obs.length < rows * obsDim) throw new RangeError(`act() needs ${rows * obsDim} observation values for ${rows} rows, got ${obs.length}`);
    const x = new Float64Array(rows * obsDim);
    for (let k = 0; k < rows * obsDim; k++) {
      const v = obs[k];
      if (obsNorm) {
        const i = k % obsDim;
        const z = (v - obsNorm.mean[i]) / obsNorm.std[i];
        x[k] = Math.max(-obsNorm.clip, Math.min(obsNorm.clip, z));
      } else x[k] = v;
    }
    const out = mlpForward(layers, activation, x, rows);
    if (actionSpace.type === 'box') {
      const m = actionSpace.low.length;
      for (let k = 0; k < rows * m; k++) out[k] = Math.min(actionSpace.high[k % m], Math.max(actionSpace.low[k % m], out[k]));
      return out;
    }
    const actions = new Float64Array(rows);
    for (let r = 0; r < rows; r++) actions[r] = argmax(out, r * actionSpace.n, actionSpace.n);
    return actions;
  }
}
