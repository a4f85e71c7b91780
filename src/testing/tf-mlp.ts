/**
 * A dense network on TensorFlow.js, the reference the fused engine (`src/inner/nn/mlp.ts`) is
 * checked against (its gradient, Adam and SGD tests) and measured against (`npm run bench --
 * crossover`). No job trains on it. Initialised like the engine's nets: orthogonal weights from a
 * generator, zero biases.
 */
import type { Rng } from '../util/rng.js';
import { tf } from '../util/tf.js';
import { orthogonal } from '../inner/nn/init.js';

/** An MLP as tfjs variables: layer sizes, weights and biases. */
export interface Net {
  sizes: number[];
  w: tf.Variable[];
  b: tf.Variable[];
}

/** An MLP with orthogonal weights (gain √2 on hidden layers, `outGain` on the last) and zero biases. */
export function makeNet(sizes: number[], outGain: number, rng: Rng): Net {
  const w: tf.Variable[] = [];
  const b: tf.Variable[] = [];
  for (let l = 0; l + 1 < sizes.length; l++) {
    const gain = l + 2 === sizes.length ? outGain : Math.SQRT2;
    const init = orthogonal(sizes[l], sizes[l + 1], gain, rng);
    // tf.variable keeps its own copy; tidy disposes the initial tensors.
    w.push(tf.tidy(() => tf.variable(tf.tensor2d(init, [sizes[l], sizes[l + 1]]))));
    b.push(tf.tidy(() => tf.variable(tf.zeros([sizes[l + 1]]))));
  }
  return { sizes, w, b };
}

/** The forward pass (activation on hidden layers only). */
export function forward(net: Net, x: tf.Tensor2D, activation: 'tanh' | 'relu'): tf.Tensor2D {
  let h = x;
  for (let l = 0; l < net.w.length; l++) {
    h = tf.add(tf.matMul(h, net.w[l]), net.b[l]);
    if (l + 1 < net.w.length) h = activation === 'tanh' ? tf.tanh(h) : tf.relu(h);
  }
  return h;
}
