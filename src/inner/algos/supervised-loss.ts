/**
 * The losses of the supervised trainer (`supervised.ts`), each with its gradient with respect to
 * the network's outputs written out: cross-entropy (soft targets, so label smoothing and mixup
 * need nothing more), focal loss, MSE and Huber, weighted per example.
 */
import type { JobSpec } from '../../spec/schema.js';
import { CategoricalHead } from '../nn/distributions.js';

/** The loss a job trains on: its spec's reward section and the network's output layout. */
export interface SupervisedLoss {
  reward: JobSpec['reward'];
  /** Outputs per row: the classes, or 1 for a regression. */
  k: number;
  /** Floats between two rows of the network's output. */
  outStride: number;
  classes: CategoricalHead;
  /** Scratch of the focal loss's gradient. */
  aux: Float64Array;
}

/** One evaluation of the loss: the last forward pass over `n` rows, its targets and weights. */
export interface LossBatch {
  out: Float32Array;
  /** Soft class rows [n × k] or standardised values [n]. */
  y: Float32Array;
  w: ArrayLike<number>;
  n: number;
  /** Where ∂loss/∂output goes ([n × outStride]); null when only the loss is wanted. */
  grad: Float32Array | null;
}

/** The loss for a spec's reward section over `k` outputs laid out `outStride` apart. */
export function supervisedLoss(reward: JobSpec['reward'], k: number, outStride: number): SupervisedLoss {
  return { reward, k, outStride, classes: new CategoricalHead(k), aux: new Float64Array(k) };
}

/** Focal loss of row `r` against its soft class row, unweighted; its gradient into `b.grad` when given. */
function focalRowLoss(l: SupervisedLoss, b: LossBatch, r: number): number {
  const { k, aux } = l;
  const { y, grad } = b;
  const o = r * l.outStride;
  const scale = b.w[r] / b.n;
  const { logp, p: probs } = l.classes.set(b.out, o);
  let per = 0;
  // per = −Σ y_c (1 − p_c)^γ log p_c; ∂per/∂z_j = −(y_j a_j − p_j Σ_c y_c a_c)
  // with a_c = (1 − p_c)^γ − γ (1 − p_c)^(γ−1) p_c log p_c.
  const gamma = l.reward.focalGamma;
  let ya = 0;
  for (let c = 0; c < k; c++) {
    const q = 1 - probs[c];
    const qg = q ** gamma;
    per -= y[r * k + c] * qg * logp[c];
    const dq = gamma > 0 && q > 0 ? gamma * q ** (gamma - 1) : 0; // q = 0 means log p = 0
    aux[c] = qg - dq * probs[c] * logp[c];
    ya += y[r * k + c] * aux[c];
  }
  if (grad) for (let c = 0; c < k; c++) grad[o + c] = -scale * (y[r * k + c] * aux[c] - probs[c] * ya);
  return per;
}

/** MSE or Huber loss of row `r`, already weighted; its gradient into `b.grad` when given. */
function regressionRowLoss(l: SupervisedLoss, b: LossBatch, r: number): number {
  const { grad } = b;
  const o = r * l.outStride;
  const w = b.w[r];
  const scale = w / b.n;
  const err = b.out[o] - b.y[r];
  if (l.reward.objective === 'mse') {
    if (grad) grad[o] = scale * 2 * err;
    return w * err * err;
  }
  // Huber: quadratic part up to delta, linear beyond.
  const delta = l.reward.huberDelta;
  const a = Math.abs(err);
  const quad = Math.min(a, delta);
  if (grad) grad[o] = scale * Math.max(-delta, Math.min(delta, err));
  return w * (0.5 * quad * quad + delta * (a - quad));
}

/**
 * Cross-entropy over a batch: the loss and gradient `classRowLoss` gives, computed in one pass
 * without the entropy that `CategoricalHead.set` also works out, and the probabilities only when
 * the gradient is wanted. The same double-precision operations in the same order: the same bits.
 */
function crossEntropy(l: SupervisedLoss, b: LossBatch): number {
  const { k, outStride, aux: logp } = l;
  const { out, y, w, n, grad } = b;
  let total = 0;
  for (let r = 0; r < n; r++) {
    const o = r * outStride;
    let max = -Infinity;
    for (let j = 0; j < k; j++) max = Math.max(max, out[o + j]);
    let sum = 0;
    for (let j = 0; j < k; j++) sum += Math.exp(out[o + j] - max);
    const lse = max + Math.log(sum);
    let per = 0;
    let ySum = 0;
    for (let c = 0; c < k; c++) {
      logp[c] = out[o + c] - lse;
      per -= y[r * k + c] * logp[c];
      ySum += y[r * k + c];
    }
    if (grad) {
      const scale = w[r] / n;
      for (let c = 0; c < k; c++) grad[o + c] = scale * (Math.exp(logp[c]) * ySum - y[r * k + c]);
    }
    total += w[r] * per;
  }
  return total / n;
}

/** The weighted mean loss of a batch; when `b.grad` is given, also ∂loss/∂output into it. */
export function lossOf(l: SupervisedLoss, b: LossBatch): number {
  const obj = l.reward.objective;
  if (obj === 'cross-entropy') return crossEntropy(l, b);
  let total = 0;
  for (let r = 0; r < b.n; r++) {
    if (obj === 'focal') total += b.w[r] * focalRowLoss(l, b, r);
    else total += regressionRowLoss(l, b, r);
  }
  return total / b.n;
}
