/**
 * TensorFlow.js, started once per thread. The outer loop's learned controller
 * (`src/outer/agents/controller.ts`) keeps its network on tfjs, so the loop and the experiments
 * start it here, as do the tfjs reference of the engine's tests (`src/testing/tf-mlp.ts`) and the
 * worker pool's tfjs fixture. No training job uses tfjs: jobs train on the fused engine
 * (`src/inner/nn/mlp.ts`). It lives in util/ because both the pool (run/) and the loop (outer/) use it.
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
