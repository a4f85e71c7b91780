/**
 * Dense networks on TensorFlow.js: orthogonal initialisation from a generator, the forward pass,
 * and snapshots of the weights as plain layers. The trainers use the fused engine (`nn/mlp.ts`);
 * these are the reference it is checked against (gradient tests) and measured against
 * (`npm run bench -- crossover`).
 */
import type { Rng } from '../util/rng.js';
import type { DenseLayer } from './policy.js';
import { tf } from './tf.js';
import { orthogonal } from './nn/init.js';

export { orthogonal };

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

/** The weights as plain dense layers. */
export function snapshot(net: Net): DenseLayer[] {
  return net.w.map((w, l) => ({
    in: net.sizes[l],
    out: net.sizes[l + 1],
    weights: Array.from(w.dataSync()),
    bias: Array.from(net.b[l].dataSync()),
  }));
}

