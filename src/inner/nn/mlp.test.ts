import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../util/rng.js';
import { initTf, tf } from '../../util/tf.js';
import { makeNet } from '../../testing/tf-mlp.js';
import { orthogonal } from './init.js';
import { mlpForward } from '../policy.js';
import { FusedMlp } from './mlp.js';

/** ‖a − b‖ / ‖b‖. */
function relErr(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < b.length; i++) {
    num += (a[i] - b[i]) ** 2;
    den += b[i] ** 2;
  }
  return Math.sqrt(num / Math.max(den, 1e-30));
}

/** A fused net and a tfjs net with the same orthogonal weights (random biases). */
function pair(sizes: number[], activation: 'tanh' | 'relu', seed: number) {
  const rng = new Rng(seed);
  const fused = new FusedMlp(sizes, activation, 8);
  const ref = makeNet(sizes, 1, new Rng(0));
  for (let l = 0; l + 1 < sizes.length; l++) {
    const w = orthogonal(sizes[l], sizes[l + 1], 1.3, rng);
    const b = Float32Array.from({ length: sizes[l + 1] }, () => rng.uniform(-0.5, 0.5));
    fused.setLayer(l, w, b);
    ref.w[l].assign(tf.tensor2d(w, [sizes[l], sizes[l + 1]]));
    ref.b[l].assign(tf.tensor1d(b));
  }
  return { fused, ref, rng };
}

const CASES: [number[], 'tanh' | 'relu', number][] = [
  [[4, 64, 64, 2], 'tanh', 128],
  [[4, 64, 64, 1], 'tanh', 7],
  [[3, 5, 2], 'relu', 33],
  [[17, 30, 11, 6], 'relu', 64],
  [[6, 3], 'tanh', 5],
];

test('forward and gradients match TensorFlow.js to 1e-5 relative', async () => {
  await initTf();
  for (const [sizes, act, n] of CASES) {
    const { fused, ref, rng } = pair(sizes, act, sizes.length * 100 + n);
    const d = sizes[0];
    const m = sizes[sizes.length - 1];
    const x = Float32Array.from({ length: n * d }, () => rng.normal());
    const r = Float32Array.from({ length: n * m }, () => rng.normal());
    fused.input(n).set(x);
    const out = fused.forward(n);
    const dOut = fused.gradOutput(n);
    const got = new Float32Array(n * m);
    for (let i = 0; i < n; i++)
      for (let j = 0; j < m; j++) {
        got[i * m + j] = out[i * fused.outStride + j];
        dOut[i * fused.outStride + j] = r[i * m + j];
      }
    fused.backward(n);
    const vars = [...ref.w, ...ref.b];
    const { grads } = tf.variableGrads(() => {
      let h: tf.Tensor2D = tf.tensor2d(x, [n, d]);
      for (let l = 0; l < ref.w.length; l++) {
        h = tf.add(tf.matMul(h, ref.w[l]), ref.b[l]);
        if (l + 1 < ref.w.length) h = act === 'tanh' ? tf.tanh(h) : tf.relu(h);
      }
      return tf.sum(tf.mul(h, tf.tensor2d(r, [n, m]))) as tf.Scalar;
    }, vars);
    // The fused gradients, unpadded, in the layers() layout.
    const g = new FusedMlp(sizes, act, 1);
    g.params.set(fused.grads);
    const gl = g.layers();
    const label = `${sizes.join('-')} ${act} n=${n}`;
    const wantOut = mlpForward(fused.layers(), act, x, n);
    assert.ok(relErr(got, wantOut) < 1e-5, `${label}: forward ${relErr(got, wantOut)}`);
    for (let l = 0; l < ref.w.length; l++) {
      const ew = relErr(gl[l].weights, grads[ref.w[l].name].dataSync());
      const eb = relErr(gl[l].bias, grads[ref.b[l].name].dataSync());
      assert.ok(ew < 1e-5, `${label}: layer ${l} weight gradient ${ew}`);
      assert.ok(eb < 1e-5, `${label}: layer ${l} bias gradient ${eb}`);
    }
    for (const t of Object.values(grads)) t.dispose();
    for (const v of vars) v.dispose();
  }
});

test('gradients match central finite differences of a double-precision forward pass', () => {
  const sizes = [5, 12, 9, 3];
  const rng = new Rng(3);
  const net = new FusedMlp(sizes, 'tanh', 4);
  for (let l = 0; l + 1 < sizes.length; l++) {
    net.setLayer(
      l,
      orthogonal(sizes[l], sizes[l + 1], 1, rng),
      Float32Array.from({ length: sizes[l + 1] }, () => rng.uniform(-0.3, 0.3)),
    );
  }
  const n = 6;
  const x = Float64Array.from({ length: n * 5 }, () => rng.normal());
  const r = Float64Array.from({ length: n * 3 }, () => rng.normal());
  const lossOf = (layers: ReturnType<FusedMlp['layers']>): number => {
    const out = mlpForward(layers, 'tanh', x, n);
    let s = 0;
    for (let i = 0; i < out.length; i++) s += out[i] * r[i];
    return s;
  };
  net.input(n).set(x);
  net.forward(n);
  const dOut = net.gradOutput(n);
  for (let i = 0; i < n; i++) for (let j = 0; j < 3; j++) dOut[i * net.outStride + j] = r[i * 3 + j];
  net.backward(n);
  const g = new FusedMlp(sizes, 'tanh', 1);
  g.params.set(net.grads);
  const analytic = g.layers();
  const base = net.layers();
  const numeric = base.map((ly) => ({ weights: ly.weights.map(() => 0), bias: ly.bias.map(() => 0) }));
  const h = 1e-6;
  for (let l = 0; l < base.length; l++) {
    for (const key of ['weights', 'bias'] as const) {
      for (let i = 0; i < base[l][key].length; i++) {
        const v = base[l][key][i];
        base[l][key][i] = v + h;
        const up = lossOf(base);
        base[l][key][i] = v - h;
        const down = lossOf(base);
        base[l][key][i] = v;
        numeric[l][key][i] = (up - down) / (2 * h);
      }
    }
  }
  for (let l = 0; l < base.length; l++) {
    assert.ok(relErr(analytic[l].weights, numeric[l].weights) < 1e-5, `layer ${l} weights ${relErr(analytic[l].weights, numeric[l].weights)}`);
    assert.ok(relErr(analytic[l].bias, numeric[l].bias) < 1e-5, `layer ${l} bias ${relErr(analytic[l].bias, numeric[l].bias)}`);
  }
});

test('Adam steps match TensorFlow.js Adam, and padded weights stay zero', async () => {
  await initTf();
  const sizes = [4, 10, 3];
  const { fused, ref, rng } = pair(sizes, 'tanh', 11);
  const n = 16;
  const opt = tf.train.adam(0.01, 0.9, 0.999, 1e-5);
  const vars = [...ref.w, ...ref.b];
  for (let step = 0; step < 5; step++) {
    const x = Float32Array.from({ length: n * 4 }, () => rng.normal());
    const r = Float32Array.from({ length: n * 3 }, () => rng.normal());
    fused.input(n).set(x);
    fused.forward(n);
    const dOut = fused.gradOutput(n);
    for (let i = 0; i < n; i++) for (let j = 0; j < 3; j++) dOut[i * fused.outStride + j] = r[i * 3 + j];
    fused.backward(n);
    fused.adam({ lr: 0.01, eps: 1e-5 });
    opt.minimize(
      () => {
        const h = tf.tanh(tf.add(tf.matMul(tf.tensor2d(x, [n, 4]), ref.w[0]), ref.b[0]));
        const out = tf.add(tf.matMul(h, ref.w[1]), ref.b[1]);
        return tf.sum(tf.mul(out, tf.tensor2d(r, [n, 3]))) as tf.Scalar;
      },
      false,
      vars,
    );
  }
  const got = fused.layers();
  for (let l = 0; l < 2; l++) {
    assert.ok(relErr(got[l].weights, ref.w[l].dataSync()) < 1e-5, `layer ${l} weights after Adam`);
    assert.ok(relErr(got[l].bias, ref.b[l].dataSync()) < 1e-5, `layer ${l} bias after Adam`);
  }
  // Hidden width 10 pads to 12, the output 3 to 4: every padded parameter is still exactly 0.
  let padded = 0;
  for (const v of fused.params) if (v !== 0) padded += 1;
  const real = got.reduce((s, ly) => s + ly.weights.filter((v) => v !== 0).length + ly.bias.filter((v) => v !== 0).length, 0);
  assert.equal(padded, real);
  opt.dispose();
  for (const v of vars) v.dispose();
});

test('growing the row capacity keeps weights and Adam state; runs are bit-identical', () => {
  const run = (): Float32Array => {
    const net = new FusedMlp([3, 8, 2], 'relu', 2);
    const rng = new Rng(5);
    net.setLayer(0, orthogonal(3, 8, 1, rng), new Float32Array(8));
    net.setLayer(1, orthogonal(8, 2, 1, rng), new Float32Array(2));
    for (const n of [2, 40, 7, 300]) {
      const x = net.input(n);
      for (let i = 0; i < x.length; i++) x[i] = rng.normal();
      net.forward(n);
      const g = net.gradOutput(n);
      for (let i = 0; i < n; i++) g[i * net.outStride] = 1;
      net.backward(n);
      net.adam({ lr: 0.01 });
    }
    return Float32Array.from(net.params);
  };
  assert.deepEqual(run(), run());
});

test('dropout masks: forward and gradients match TensorFlow.js; SGD with momentum matches tfjs', async () => {
  await initTf();
  for (const act of ['tanh', 'relu'] as const) {
    const sizes = [5, 9, 6, 3];
    const { fused, ref, rng } = pair(sizes, act, 21);
    const n = 10;
    const x = Float32Array.from({ length: n * 5 }, () => rng.normal());
    const r = Float32Array.from({ length: n * 3 }, () => rng.normal());
    const masks = [9, 6].map((h) => Float32Array.from({ length: n * h }, () => (rng.next() < 0.3 ? 0 : 1 / 0.7)));
    fused.input(n).set(x);
    masks.forEach((mk, i) => {
      const view = fused.mask(i + 1, n);
      const w = fused.width(i + 1);
      for (let row = 0; row < n; row++) for (let j = 0; j < mk.length / n; j++) view[row * w + j] = mk[row * (mk.length / n) + j];
    });
    const out = fused.forward(n, true);
    const dOut = fused.gradOutput(n);
    const got = new Float32Array(n * 3);
    for (let i = 0; i < n; i++)
      for (let j = 0; j < 3; j++) {
        got[i * 3 + j] = out[i * fused.outStride + j];
        dOut[i * fused.outStride + j] = r[i * 3 + j];
      }
    fused.backward(n);
    const vars = [...ref.w, ...ref.b];
    const f = (): tf.Scalar => {
      let h: tf.Tensor2D = tf.tensor2d(x, [n, 5]);
      for (let l = 0; l < 3; l++) {
        h = tf.add(tf.matMul(h, ref.w[l]), ref.b[l]);
        if (l < 2) h = tf.mul(act === 'tanh' ? tf.tanh(h) : tf.relu(h), tf.tensor2d(masks[l], [n, sizes[l + 1]]));
      }
      return tf.sum(tf.mul(h, tf.tensor2d(r, [n, 3])));
    };
    const { grads } = tf.variableGrads(f, vars);
    const g = new FusedMlp(sizes, act, 1);
    g.params.set(fused.grads);
    const gl = g.layers();
    for (let l = 0; l < 3; l++) {
      assert.ok(relErr(gl[l].weights, grads[ref.w[l].name].dataSync()) < 1e-5, `${act} layer ${l} weights`);
      assert.ok(relErr(gl[l].bias, grads[ref.b[l].name].dataSync()) < 1e-5, `${act} layer ${l} bias`);
    }
    // Three momentum steps on the same gradients (tfjs: u ← μu + g, p ← p − lr·u).
    const opt = tf.train.momentum(0.05, 0.9);
    for (let s = 0; s < 3; s++) {
      fused.sgd(0.05, 0.9);
      opt.applyGradients(vars.map((v) => ({ name: v.name, tensor: grads[v.name] })));
    }
    const after = fused.layers();
    for (let l = 0; l < 3; l++) assert.ok(relErr(after[l].weights, ref.w[l].dataSync()) < 1e-5, `${act} layer ${l} after SGD`);
    opt.dispose();
    for (const t of Object.values(grads)) t.dispose();
    for (const v of vars) v.dispose();
  }
});
