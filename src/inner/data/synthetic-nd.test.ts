import test from 'node:test';
import assert from 'node:assert/strict';
import { friedman, friedmanFunction, gaussianBlobs, shells, signParity } from './synthetic-nd.js';
import { classCounts, mean, std } from './stats.js';

test('gaussianBlobs: shape, balanced classes, deterministic per seed, irrelevant columns carry no class signal', () => {
  const o = { classes: 4, informative: 2, noiseFeatures: 3, spread: 0.2 };
  const d = gaussianBlobs(1200, o, 5);
  assert.equal(d.x.length, 1200);
  assert.deepEqual(d.features, ['x1', 'x2', 'x3', 'x4', 'x5']);
  assert.deepEqual(classCounts(d), [300, 300, 300, 300]);
  assert.deepEqual(gaussianBlobs(1200, o, 5), d);
  assert.notDeepEqual(gaussianBlobs(1200, o, 6).x, d.x);
  // Per column, the spread of the class means against the within-class spread: 2 informative columns stand out.
  const separation = d.features.map((_, j) => {
    const means = [0, 1, 2, 3].map((c) => mean(d.x.filter((_, i) => d.y[i] === c).map((r) => r[j])));
    return std(means);
  });
  const strong = separation.filter((s) => s > 0.15).length;
  assert.equal(strong, 2, `class separation per column: ${separation.map((s) => s.toFixed(2)).join(', ')}`);
  assert.throws(() => gaussianBlobs(10, { classes: 1, informative: 2, noiseFeatures: 0, spread: 1 }, 1), /classes must be an integer in \[2, 10\]/);
  assert.throws(() => gaussianBlobs(10, { classes: 2, informative: 2, noiseFeatures: 0, spread: 0 }, 1), /spread must be a finite number > 0/);
});

test('friedman: the textbook functions at known points, noise of the stated share, irrelevant extra inputs', () => {
  // #1 at x = (0.5, 1, 0.5, 0, 0): 10 sin(π/2) = 10.
  assert.equal(friedmanFunction(1, [0.5, 1, 0.5, 0, 0]), 10);
  assert.ok(Math.abs(friedmanFunction(1, [0, 0, 0, 1, 1]) - (5 + 10 + 5)) < 1e-12);
  // #2 and #3 with x2·x3 = 1/(x2·x4): the reactance vanishes, impedance = x1 and phase = 0.
  assert.ok(Math.abs(friedmanFunction(2, [30, 2, 0.25, 1]) - 30) < 1e-12);
  assert.ok(Math.abs(friedmanFunction(3, [30, 2, 0.25, 1])) < 1e-12);
  assert.ok(Math.abs(friedmanFunction(3, [1, 1, 2, 1]) - Math.atan(1)) < 1e-12);
  for (const variant of [1, 2, 3] as const) {
    const clean = friedman(2000, { variant, noise: 0, extraFeatures: 2 }, 3);
    assert.equal(clean.kind, 'regression');
    assert.equal(clean.features.length, (variant === 1 ? 5 : 4) + 2);
    clean.x.forEach((row, i) => assert.equal(clean.y[i], friedmanFunction(variant, row)));
    const noisy = friedman(2000, { variant, noise: 0.2, extraFeatures: 2 }, 3);
    assert.deepEqual(noisy.x, clean.x);
    const resid = noisy.y.map((v, i) => v - clean.y[i]);
    const share = std(resid) / std(clean.y);
    assert.ok(Math.abs(share - 0.2) < 0.02, `#${variant}: noise share ${share}`);
  }
  assert.throws(() => friedman(10, { variant: 4 as 1, noise: 0, extraFeatures: 0 }, 1), /variant must be 1, 2 or 3/);
  assert.throws(() => friedman(10, { variant: 1, noise: 2, extraFeatures: 0 }, 1), /noise must be in \[0, 1\]/);
});

test('shells: class c lies at radius (c + 1)/k in the shell dimensions, distractors uniform on [-1, 1]', () => {
  const d = shells(600, { classes: 3, dims: 4, noise: 0, distractors: 2 }, 9);
  assert.deepEqual(classCounts(d), [200, 200, 200]);
  d.x.forEach((row, i) => {
    assert.ok(Math.abs(Math.hypot(...row.slice(0, 4)) - (d.y[i] + 1) / 3) < 1e-9);
    for (const v of row.slice(4)) assert.ok(v >= -1 && v <= 1);
  });
  assert.throws(() => shells(10, { classes: 3, dims: 1, noise: 0, distractors: 0 }, 1), /dims must be an integer in \[2, 10\]/);
});

test('signParity: without noise the label is the parity of the negative signs of the parity coordinates', () => {
  const d = signParity(400, { bits: 3, noise: 0, distractors: 0 }, 4);
  assert.deepEqual(classCounts(d), [200, 200]);
  d.x.forEach((row, i) => assert.equal(row.filter((v) => v < 0).length % 2, d.y[i]));
  // With distractors, no single column predicts the class.
  const e = signParity(4000, { bits: 2, noise: 0, distractors: 2 }, 4);
  for (let j = 0; j < 4; j++) {
    const agree = e.x.filter((r, i) => (r[j] < 0 ? 1 : 0) === e.y[i]).length / e.x.length;
    assert.ok(Math.abs(agree - 0.5) < 0.05, `column ${j}: ${agree}`);
  }
  assert.throws(() => signParity(10, { bits: 5, noise: 0, distractors: 0 }, 1), /bits must be an integer in \[2, 4\]/);
});
