/**
 * Initialisation: orthogonal matrices (Saxe et al.) from the job's generator, and a fused MLP
 * initialised the way CleanRL initialises its layers.
 */
import type { Rng } from '../../util/rng.js';
import { FusedMlp } from './mlp.js';

/** An orthogonal matrix [rows × cols] times `gain` (Saxe et al.), from the job's generator. */
export function orthogonal(rows: number, cols: number, gain: number, rng: Rng): Float32Array {
  const tall = rows >= cols;
  const n = tall ? rows : cols; // vector length
  const k = tall ? cols : rows; // number of orthonormal vectors
  const vecs: Float64Array[] = [];
  for (let v = 0; v < k; v++) {
    const a = new Float64Array(n);
    for (let i = 0; i < n; i++) a[i] = rng.normal();
    for (const q of vecs) {
      let dot = 0;
      for (let i = 0; i < n; i++) dot += a[i] * q[i];
      for (let i = 0; i < n; i++) a[i] -= dot * q[i];
    }
    let norm = 0;
    for (let i = 0; i < n; i++) norm += a[i] * a[i];
    norm = Math.sqrt(norm) || 1;
    for (let i = 0; i < n; i++) a[i] /= norm;
    vecs.push(a);
  }
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) out[r * cols + c] = gain * (tall ? vecs[c][r] : vecs[r][c]);
  }
  return out;
}

/**
 * A fused MLP with orthogonal weights (gain √2 on hidden layers, `outGain` on the last) and zero
 * biases, drawing from `rng` layer by layer (as the tfjs reference `src/testing/tf-mlp.ts` does).
 */
export function initMlp(sizes: number[], activation: 'tanh' | 'relu', outGain: number, rng: Rng, capacity = 64): FusedMlp {
  const net = new FusedMlp(sizes, activation, capacity);
  for (let l = 0; l + 1 < sizes.length; l++) {
    const gain = l + 2 === sizes.length ? outGain : Math.SQRT2;
    net.setLayer(l, orthogonal(sizes[l], sizes[l + 1], gain, rng), new Float32Array(sizes[l + 1]));
  }
  return net;
}
