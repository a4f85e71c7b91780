/**
 * Which engine trains a network: the fused WebAssembly SIMD engine (`mlp.ts`) or TensorFlow.js.
 * The one place the rule lives; measured with `npm run bench -- crossover` (a training step of
 * [8, w, w, 2] at batch n, both engines alternating in one process).
 */

/** Multiply-accumulates of one forward pass per row. */
export function macsPerRow(sizes: readonly number[]): number {
  let s = 0;
  for (let l = 0; l + 1 < sizes.length; l++) s += sizes[l] * sizes[l + 1];
  return s;
}

/**
 * Whether the fused engine should train a net of `sizes` on batches of `batch` rows.
 * Set RRL_NN_ENGINE=fused or =tfjs to force one (for measurements).
 */
export function preferFused(sizes: readonly number[], batch: number): boolean {
  const forced = process.env.RRL_NN_ENGINE;
  if (forced === 'fused') return true;
  if (forced === 'tfjs') return false;
  return macsPerRow(sizes) * batch <= FUSED_MAX_MACS;
}

/** Largest forward-pass work (multiply-accumulates per batch) where the fused engine is faster. */
export const FUSED_MAX_MACS = Infinity;
