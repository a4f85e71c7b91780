import test from 'node:test';
import assert from 'node:assert/strict';
import { POLICY_FORMAT, PolicyRunner, argmax, mlpForward, type DenseLayer, type PolicyFile } from './policy.js';
import { RunningNorm } from './normalize.js';
import { Rng } from '../util/rng.js';

// A 2-3-2 network, weights row-major [in][out]:
//   W1 = [[0.5, -1, 2], [1.5, 0.25, -0.5]], b1 = [0.1, -0.2, 0.3]
//   W2 = [[1, -1], [0.5, 2], [-1.5, 0.75]], b2 = [0.05, -0.05]
const NET: DenseLayer[] = [
  { in: 2, out: 3, weights: [0.5, -1, 2, 1.5, 0.25, -0.5], bias: [0.1, -0.2, 0.3] },
  { in: 3, out: 2, weights: [1, -1, 0.5, 2, -1.5, 0.75], bias: [0.05, -0.05] },
];
const INPUT = [1, 2, -1, 0.5, 0, 0];
// Hidden pre-activations, by hand:
//   [1, 2]    → [0.5 + 3 + 0.1, -1 + 0.5 - 0.2, 2 - 1 + 0.3]       = [3.6, -0.7, 1.3]
//   [-1, 0.5] → [-0.5 + 0.75 + 0.1, 1 + 0.125 - 0.2, -2 - 0.25 + 0.3] = [0.35, 0.925, -1.95]
//   [0, 0]    → b1                                                   = [0.1, -0.2, 0.3]
const PRE = [
  [3.6, -0.7, 1.3],
  [0.35, 0.925, -1.95],
  [0.1, -0.2, 0.3],
];
/** Output layer by hand: [h0 + 0.5 h1 - 1.5 h2 + 0.05, -h0 + 2 h1 + 0.75 h2 - 0.05]. */
const head = ([h0, h1, h2]: number[]): number[] => [h0 + 0.5 * h1 - 1.5 * h2 + 0.05, -h0 + 2 * h1 + 0.75 * h2 - 0.05];

function assertClose(actual: ArrayLike<number>, expected: readonly number[], tol: number, what = ''): void {
  assert.equal(actual.length, expected.length, what);
  for (let i = 0; i < expected.length; i++) assert.ok(Math.abs(actual[i] - expected[i]) <= tol, `${what}[${i}]: got ${actual[i]}, expected ${expected[i]}`);
}

function file(layers: DenseLayer[], obsNorm: PolicyFile['obsNorm'] = null, activation: 'tanh' | 'relu' = 'relu'): PolicyFile {
  return { format: POLICY_FORMAT, obsDim: layers[0].in, actionSpace: { type: 'discrete', n: layers.at(-1)!.out }, activation, layers, obsNorm };
}

test('mlpForward with relu matches a hand computation (batch of 3)', () => {
  const out = mlpForward(NET, 'relu', INPUT, 3);
  // relu: [3.6, 0, 1.3] → [3.6 - 1.95 + 0.05, -3.6 + 0.975 - 0.05] = [1.7, -2.675]
  //       [0.35, 0.925, 0] → [0.35 + 0.4625 + 0.05, -0.35 + 1.85 - 0.05] = [0.8625, 1.45]
  //       [0.1, 0, 0.3] → [0.1 - 0.45 + 0.05, -0.1 + 0.225 - 0.05] = [-0.3, 0.075]
  assertClose(out, [1.7, -2.675, 0.8625, 1.45, -0.3, 0.075], 1e-12, 'relu');
  assert.ok(out instanceof Float64Array);
});

test('mlpForward with tanh matches a hand computation, no activation on the output layer', () => {
  const out = mlpForward(NET, 'tanh', INPUT, 3);
  const expected = PRE.flatMap((pre) => head(pre.map(Math.tanh)));
  assertClose(out, expected, 1e-12, 'tanh');
  // the output layer is linear: values outside [-1, 1] appear
  assert.ok(Math.abs(out[0]) > 1 || Math.abs(out[1]) > 1);
});

test('mlpForward: a linear policy (one layer) and row independence', () => {
  const lin: DenseLayer[] = [{ in: 2, out: 2, weights: [1, 2, 3, 4], bias: [0.5, -0.5] }];
  assertClose(mlpForward(lin, 'tanh', [1, 1, -2, 0.5], 2), [4.5, 5.5, 0, -2.5], 1e-12, 'linear');
  const one = mlpForward(NET, 'tanh', INPUT.slice(2, 4), 1);
  assertClose(one, Array.from(mlpForward(NET, 'tanh', INPUT, 3).slice(2, 4)), 0, 'row 1 alone');
  // does not mutate the input
  const input = Float64Array.from(INPUT);
  mlpForward(NET, 'relu', input, 3);
  assert.deepEqual(Array.from(input), INPUT);
});

test('argmax returns the first largest index within the window', () => {
  assert.equal(argmax([0.1, 0.9, 0.3], 0, 3), 1);
  assert.equal(argmax([5, 1, 2, 7, 7, 3], 3, 3), 0); // window [7, 7, 3]: first of the tie
  assert.equal(argmax([9, -1, -3], 1, 2), 0);
  assert.equal(argmax([0, -2, -1, 4], 1, 2), 1);
  assert.equal(argmax([3], 0, 1), 0);
  assert.equal(argmax([1, 1, 1], 0, 3), 0);
});

test('PolicyRunner without obsNorm acts greedily on the raw observations', () => {
  const r = new PolicyRunner(file(NET));
  // relu outputs [1.7, -2.675], [0.8625, 1.45], [-0.3, 0.075]
  assert.deepEqual(Array.from(r.act(INPUT, 3)), [0, 1, 1]);
  const t = new PolicyRunner(file(NET, null, 'tanh'));
  const out = mlpForward(NET, 'tanh', INPUT, 3);
  assert.deepEqual(
    Array.from(t.act(INPUT, 3)),
    [0, 1, 2].map((k) => argmax(out, 2 * k, 2)),
  );
  assert.ok(r.act(INPUT, 3) instanceof Float64Array);
});

/** A linear probe with outputs [x1, c] (x1: the second network input): action 0 when x1 >= c, else 1. */
function probe(c: number): DenseLayer[] {
  return [{ in: 2, out: 2, weights: [0, 0, 1, 0], bias: [0, c] }];
}

test('PolicyRunner with obsNorm normalises (x - mean) / std before the network', () => {
  const norm = { mean: [0, 2], std: [1, 0.5], clip: 10 };
  const r = new PolicyRunner(file(probe(1), norm));
  const raw = new PolicyRunner(file(probe(1)));
  // x1 = 2.6 → z = 1.2 ≥ 1 → action 0; x1 = 2.4 → z = 0.8 < 1 → action 1
  assert.deepEqual(Array.from(r.act([0, 2.6, 0, 2.4], 2)), [0, 1]);
  // un-normalised, both exceed 1
  assert.deepEqual(Array.from(raw.act([0, 2.6, 0, 2.4], 2)), [0, 0]);
  // the per-column statistics are used: feature 0 has no weight, so its huge value changes nothing
  assert.deepEqual(Array.from(r.act([1e9, 2.4, -1e9, 2.6], 2)), [1, 0]);
});

test('PolicyRunner with obsNorm clips normalised values at ±clip', () => {
  const norm = { mean: [0, 2], std: [1, 0.5], clip: 3 };
  // c = 3.5: only a z above 3.5 picks action 0, which clipping to 3 forbids
  assert.deepEqual(Array.from(new PolicyRunner(file(probe(3.5), norm)).act([0, 100, 0, 3.6], 2)), [1, 1]);
  assert.deepEqual(Array.from(new PolicyRunner(file(probe(3.5), { ...norm, clip: 1000 })).act([0, 100, 0, 3.6], 2)), [0, 1]);
  // c = -3.5: z = -204 is clipped to -3 ≥ -3.5 → action 0 (unclipped it would be 1)
  assert.deepEqual(Array.from(new PolicyRunner(file(probe(-3.5), norm)).act([0, -100], 1)), [0]);
  assert.deepEqual(Array.from(new PolicyRunner(file(probe(-3.5), { ...norm, clip: 1000 })).act([0, -100], 1)), [1]);
});

test('PolicyRunner rejects malformed files with a message', () => {
  const good = file(NET);
  assert.doesNotThrow(() => new PolicyRunner(good));
  const cases: [string, PolicyFile, RegExp][] = [
    ['format', { ...good, format: 'other/1' as typeof POLICY_FORMAT }, /unsupported policy format "other\/1"/],
    ['obsDim', { ...good, obsDim: 3 }, /layer 0 has inconsistent shape/],
    ['weights length', { ...good, layers: [{ ...NET[0], weights: NET[0].weights.slice(1) }, NET[1]] }, /layer 0 has inconsistent shape/],
    ['bias length', { ...good, layers: [NET[0], { ...NET[1], bias: [0] }] }, /layer 1 has inconsistent shape/],
    ['chain', { ...good, layers: [NET[0], { in: 2, out: 2, weights: [1, 0, 0, 1], bias: [0, 0] }] }, /layer 1 has inconsistent shape/],
    ['actions', { ...good, actionSpace: { type: 'discrete', n: 3 } }, /outputs 2 values for 3 action values/],
  ];
  for (const [what, f, re] of cases) assert.throws(() => new PolicyRunner(f), re, what);
});

test('PolicyRunner rejects an obsNorm whose mean/std length differs from obsDim', () => {
  const f = file(NET, { mean: [0], std: [1], clip: 10 });
  assert.throws(() => new PolicyRunner(f), /obsNorm/);
});

test('PolicyRunner.act rejects an observation buffer shorter than rows × obsDim', () => {
  const r = new PolicyRunner(file(NET));
  assert.throws(() => r.act([1, 2, 3], 2), /obs/);
});

// ------------------------------------------------------------- RunningNorm

/** Population mean and variance of column `i` over every row. */
function columnStats(rows: number[][], i: number): [number, number] {
  const n = rows.length;
  const mean = rows.reduce((s, r) => s + r[i], 0) / n;
  const v = rows.reduce((s, r) => s + (r[i] - mean) ** 2, 0) / n;
  return [mean, v];
}

test('RunningNorm starts at mean 0, var 1, count 1e-4', () => {
  const n = new RunningNorm(3);
  assert.deepEqual(Array.from(n.mean), [0, 0, 0]);
  assert.deepEqual(Array.from(n.var), [1, 1, 1]);
  assert.equal(n.count, 1e-4);
  assert.equal(n.clip, 10);
});

test('RunningNorm after batch updates holds the population mean and variance of all rows', () => {
  const rng = new Rng(3);
  const dim = 3;
  const norm = new RunningNorm(dim);
  const all: number[][] = [];
  // batches of different sizes and distributions, including single rows
  const batches = [50, 1, 200, 7, 1, 1, 120];
  batches.forEach((size, b) => {
    const flat: number[] = [];
    for (let r = 0; r < size; r++) {
      const row = [5 + 2 * rng.normal(), -3 + 0.1 * b + 0.5 * rng.normal(), 100 * rng.next()];
      all.push(row);
      flat.push(...row);
    }
    norm.update(Float64Array.from(flat), size);
  });
  assert.ok(Math.abs(norm.count - (all.length + 1e-4)) < 1e-9);
  for (let i = 0; i < dim; i++) {
    const [m, v] = columnStats(all, i);
    assert.ok(Math.abs(norm.mean[i] - m) < 1e-3, `mean[${i}] ${norm.mean[i]} vs ${m}`);
    assert.ok(Math.abs(norm.var[i] - v) < 1e-3 * Math.max(1, v), `var[${i}] ${norm.var[i]} vs ${v}`);
  }
});

test('RunningNorm gives the same statistics for one big batch or many small ones', () => {
  const rng = new Rng(8);
  const rows = Array.from({ length: 64 }, () => [rng.normal() * 3 + 1, rng.next()]);
  const a = new RunningNorm(2);
  a.update(Float64Array.from(rows.flat()), rows.length);
  const b = new RunningNorm(2);
  for (let k = 0; k < rows.length; k += 8) b.update(Float64Array.from(rows.slice(k, k + 8).flat()), 8);
  for (let i = 0; i < 2; i++) {
    assert.ok(Math.abs(a.mean[i] - b.mean[i]) < 1e-9);
    assert.ok(Math.abs(a.var[i] - b.var[i]) < 1e-9);
  }
});

test('RunningNorm.apply normalises by sqrt(var + 1e-8) and clips at ±10', () => {
  const norm = new RunningNorm(2);
  norm.update(Float64Array.from([1, 10, 3, 30, 5, 50, 7, 70]), 4);
  const out = new Float64Array(8);
  const ret = norm.apply(Float64Array.from([4, 40, 1e6, -1e6, -1e6, 1e6, 5, 45]), 4, out);
  assert.equal(ret, out);
  const z = (x: number, i: number): number => (x - norm.mean[i]) / Math.sqrt(norm.var[i] + 1e-8);
  assertClose(out, [z(4, 0), z(40, 1), 10, -10, -10, 10, z(5, 0), z(45, 1)], 1e-12, 'apply');
  assert.ok(Math.abs(out[0]) < 1e-3 && Math.abs(out[1]) < 1e-3, 'the mean maps to 0');
  // a constant column: var shrinks to ~1.25e-4 (only the 1e-4 prior count remains), values near
  // the mean stay near 0, others hit the clip
  const c = new RunningNorm(1);
  c.update(Float64Array.from([2, 2, 2, 2]), 4);
  assert.ok(c.var[0] < 2e-4, `var ${c.var[0]}`);
  const o = c.apply([2, 2.5, 1.5], 3, new Float64Array(3));
  assert.ok(Math.abs(o[0]) < 0.01, `${o[0]}`);
  assert.deepEqual([o[1], o[2]], [10, -10]);
});

test('RunningNorm.freeze matches apply when used by PolicyRunner', () => {
  const norm = new RunningNorm(2);
  norm.update(Float64Array.from([0, 2, 0, 3, 0, 1]), 3);
  const frozen = norm.freeze();
  assert.equal(frozen.clip, 10);
  assertClose(frozen.mean, Array.from(norm.mean), 0, 'mean');
  assertClose(
    frozen.std,
    Array.from(norm.var, (v) => Math.sqrt(v + 1e-8)),
    0,
    'std',
  );
  // probe(c) picks action 0 iff the normalised x1 >= c
  const obs = [0, 2.9, 0, 1.1, 0, 2.0, 0, 100];
  const z = norm.apply(obs, 4, new Float64Array(8));
  for (const c of [-1, 0, 0.5, 1, 9.9, 10.5]) {
    const acts = Array.from(new PolicyRunner(file(probe(c), frozen)).act(obs, 4));
    assert.deepEqual(
      acts,
      [1, 3, 5, 7].map((k) => (z[k] >= c ? 0 : 1)),
      `c = ${c}`,
    );
  }
});
