/**
 * TensorFlow.js for the outer loop: the learned controller (`agents/controller.ts`) keeps its
 * network on tfjs, so the loop, the experiments and the pool's tfjs fixture start it here. No
 * training job uses tfjs (they train on the fused engine, `src/inner/nn/mlp.ts`).
 */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';

let ready: Promise<string> | null = null;

/**
 * Initialises TensorFlow.js once per thread: the wasm backend when it loads, else the
 * pure-JS cpu backend. Set RRL_TF_BACKEND=cpu to force the fallback.
 */
export function initTf(): Promise<string> {
  ready ??= (async () => {
    const wanted = process.env.RRL_TF_BACKEND ?? 'wasm';
    try {
      if (!(await tf.setBackend(wanted))) throw new Error(`backend ${wanted} did not initialise`);
    } catch {
      await tf.setBackend('cpu');
    }
    await tf.ready();
    return tf.getBackend();
  })();
  return ready;
}

export { tf };
