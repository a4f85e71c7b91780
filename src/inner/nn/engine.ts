/**
 * Which engine trains the networks, in one place. Every gradient-trained algorithm (PPO, DQN,
 * REINFORCE, supervised) uses the fused WebAssembly SIMD engine of `mlp.ts`; TensorFlow.js no
 * longer trains jobs. `npm run bench -- crossover` measures one training step (forward, backward,
 * Adam) of [8, w, w, 2] at batch n on both, alternating in one process; on the development
 * machine (2 shared cores, Node 20, tfjs-backend-wasm 4.22) the fused engine was faster at every
 * point measured, widths 32–512 by batches 32–2048 (at least 4× faster), which covers the schema's range (hidden widths ≤ 512, batches ≤ 4,096), so there is no
 * crossover to switch at: tfjs would only win past the schema's bounds, if at all.
 */

/** The `backend` an artifact records for a job trained on the fused engine. */
export const FUSED_BACKEND = 'fused-wasm-simd';

/** Whether the fused engine trains a net of `sizes` on batches of `batch` rows (the measured rule: always, within the schema). */
export function preferFused(sizes: readonly number[], batch: number): boolean {
  return sizes.length >= 2 && batch >= 1;
}
