import test from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../util/rng.js';
import { CategoricalHead, DiagGaussianHead } from './distributions.js';

const close = (a: number, b: number, tol: number, what: string): void => assert.ok(Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);

test('categorical: log-softmax, probabilities and entropy of a row, stable for large logits', () => {
  const head = new CategoricalHead(3);
  const x = [0, 1000, 1001, 999.5, 7];
  head.set(x, 1);
  const z = Math.exp(-1) + 1 + Math.exp(-1.5);
  const p = [Math.exp(-1) / z, 1 / z, Math.exp(-1.5) / z];
  for (let j = 0; j < 3; j++) {
    close(head.p[j], p[j], 1e-12, `p${j}`);
    close(head.logp[j], Math.log(p[j]), 1e-12, `log p${j}`);
  }
  close(head.h, -p.reduce((a, q) => a + q * Math.log(q), 0), 1e-12, 'entropy');
  assert.equal(head.logProb(x, 1, [2], 0), head.logp[2]);
  assert.equal(head.rowEntropy(), head.h);
  assert.equal(head.entropy(3, 2), 1.5);
});

test('categorical: the gradient of a·log π(a) + b·H matches central differences', () => {
  const head = new CategoricalHead(4);
  const x = [0.3, -1.2, 2.0, 0.7];
  const f = (v: number[]): number => {
    const h = new CategoricalHead(4).set(v, 0);
    return 0.7 * h.logp[2] - 0.3 * h.h;
  };
  head.set(x, 0);
  const grad = new Float64Array(4);
  head.gradient(2, 0.7, -0.3, grad, 0);
  for (let j = 0; j < 4; j++) {
    const up = [...x];
    const down = [...x];
    up[j] += 1e-6;
    down[j] -= 1e-6;
    close(grad[j], (f(up) - f(down)) / 2e-6, 1e-7, `∂/∂x${j}`);
  }
});

test('categorical: draws follow the softmax and sample returns the drawn action with its log-prob', () => {
  const head = new CategoricalHead(3);
  const x = [1, 0, -1];
  const rng = new Rng(3);
  const counts = [0, 0, 0];
  const n = 30_000;
  for (let i = 0; i < n; i++) counts[head.draw(x, 0, rng)] += 1;
  head.set(x, 0);
  for (let j = 0; j < 3; j++) close(counts[j] / n, head.p[j], 0.02, `frequency of ${j}`);
  const stored = new Float32Array(1);
  const env = new Float64Array(1);
  const lp = head.sample(x, 0, new Rng(5), { stored, so: 0, env, eo: 0 });
  assert.equal(stored[0], env[0]);
  assert.equal(lp, head.set(x, 0).logp[env[0]]);
});

test('diagonal Gaussian: log-prob, entropy and their gradients (means and log std) match closed forms and differences', () => {
  const head = new DiagGaussianHead(2, -0.5, [-1, -1], [1, 1]);
  head.logStd[1] = 0.2;
  head.begin();
  const mu = [0.1, -0.4];
  const a = [0.5, 0.3];
  const logDensity = (m: number[], ls: number[]): number =>
    m.reduce((s, mj, j) => s - 0.5 * ((a[j] - mj) / Math.exp(ls[j])) ** 2 - ls[j] - 0.5 * Math.log(2 * Math.PI), 0);
  const lp = head.logProb(mu, 0, a, 0);
  close(lp, logDensity(mu, [...head.logStd]), 1e-12, 'log-prob');
  close(head.entropy(), 2 * 0.5 * Math.log(2 * Math.PI * Math.E) - 0.5 + 0.2, 1e-12, 'entropy');
  const grad = new Float64Array(2);
  head.backward(1, 0, grad, 0);
  for (let j = 0; j < 2; j++) {
    const up = [...mu];
    const down = [...mu];
    up[j] += 1e-6;
    down[j] -= 1e-6;
    close(grad[j], (logDensity(up, [...head.logStd]) - logDensity(down, [...head.logStd])) / 2e-6, 1e-7, `∂/∂μ${j}`);
    const lsUp = [...head.logStd];
    const lsDown = [...head.logStd];
    lsUp[j] += 1e-6;
    lsDown[j] -= 1e-6;
    close(head.logStdGrad[j], (logDensity(mu, lsUp) - logDensity(mu, lsDown)) / 2e-6, 1e-7, `∂/∂log σ${j}`);
  }
  const before = [...head.logStdGrad];
  head.backwardEntropy(-0.25);
  assert.deepEqual(
    [...head.logStdGrad],
    before.map((g) => g - 0.25),
  );
  assert.equal(head.gradSumSq(1), 1 + head.logStdGrad[0] ** 2 + head.logStdGrad[1] ** 2);
  head.begin();
  assert.deepEqual([...head.logStdGrad], [0, 0], 'begin zeroes the log-std gradient');
});

test('diagonal Gaussian: samples are mean + σ·z, clipped for the environment only', () => {
  const head = new DiagGaussianHead(1, Math.log(2), [-1], [1]);
  head.begin();
  const stored = new Float32Array(1);
  const env = new Float64Array(1);
  const rng = new Rng(9);
  const z = new Rng(9).normal();
  const lp = head.sample([0.5], 0, rng, { stored, so: 0, env, eo: 0 });
  close(stored[0], 0.5 + 2 * z, 1e-6, 'stored action');
  assert.equal(env[0], Math.min(1, Math.max(-1, 0.5 + 2 * z)));
  close(lp, -0.5 * z * z - Math.log(2) - 0.5 * Math.log(2 * Math.PI), 1e-12, 'log-prob of the draw');
});
