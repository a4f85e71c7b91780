import test from 'node:test';
import assert from 'node:assert/strict';
import { concat, covariateShift, duplicate, imbalance, jitterAugment, labelNoise, split, subsample } from './corrupt.js';
import { loadCars, loadIris, loadPenguins, loadSeattleWeather } from './real.js';
import { moons } from './synthetic.js';
import { classCounts, column, mean, quantile, std } from './stats.js';
import type { Dataset } from './types.js';

const key = (row: number[], y: number): string => JSON.stringify([row, y]);

/** Multiset of (row, label) keys. */
function bag(d: Dataset): Map<string, number> {
  const m = new Map<string, number>();
  d.x.forEach((r, i) => m.set(key(r, d.y[i]), (m.get(key(r, d.y[i])) ?? 0) + 1));
  return m;
}

/** Asserts `f` leaves its input untouched (deep equality with a snapshot). */
function pureOn(d: Dataset, f: (d: Dataset) => unknown): void {
  const before = structuredClone(d);
  f(d);
  assert.deepEqual(d, before, 'input was mutated');
}

test('subsample keeps min(n, rows) distinct rows of the original, in order, deterministically', () => {
  const d = loadPenguins();
  const s = subsample(d, 100, 7);
  assert.equal(s.x.length, 100);
  assert.deepEqual(s, subsample(d, 100, 7));
  assert.notDeepEqual(s.x, subsample(d, 100, 8).x);
  // an order-preserving selection: walk the original once
  let j = 0;
  for (let i = 0; i < s.x.length; i++) {
    while (j < d.x.length && key(d.x[j], d.y[j]) !== key(s.x[i], s.y[i])) j++;
    assert.ok(j < d.x.length, `row ${i} not found in order`);
    j++;
  }
  assert.equal(subsample(d, 10_000, 1).x.length, d.x.length);
  assert.equal(subsample(d, 0, 1).x.length, 0);
  assert.deepEqual(s.history, ['subsample(n=100, seed=7)']);
  assert.throws(() => subsample(d, -1, 0), /subsample: n/);
  pureOn(d, (x) => subsample(x, 50, 1));
});

test('labelNoise (classification) changes exactly round(rate·n) labels, each to a different class', () => {
  const d = loadSeattleWeather();
  for (const rate of [0, 0.1, 0.25, 0.333, 1]) {
    const noisy = labelNoise(d, rate, 11);
    assert.deepEqual(noisy.x, d.x, 'features untouched');
    const changed = d.y.filter((c, i) => noisy.y[i] !== c).length;
    assert.equal(changed, Math.round(rate * d.y.length), `rate ${rate}`);
    for (const c of noisy.y) assert.ok(Number.isInteger(c) && c >= 0 && c < d.classes!.length);
  }
  assert.deepEqual(labelNoise(d, 0.2, 3), labelNoise(d, 0.2, 3));
  assert.throws(() => labelNoise(d, 1.5, 0), /rate must be in \[0, 1\]/);
  pureOn(d, (x) => labelNoise(x, 0.3, 1));
});

test('labelNoise picks the replacement class uniformly among the others', () => {
  // three balanced classes, all rows flipped: from class c, each other class ≈ half the time
  const d = loadIris();
  const noisy = labelNoise(d, 1, 5);
  const trans = [0, 1, 2].map(() => [0, 0, 0]);
  d.y.forEach((c, i) => trans[c][noisy.y[i]]++);
  for (let c = 0; c < 3; c++) {
    assert.equal(trans[c][c], 0);
    for (let k = 0; k < 3; k++) if (k !== c) assert.ok(trans[c][k] >= 10 && trans[c][k] <= 40, JSON.stringify(trans));
  }
});

test('labelNoise (regression) adds Gaussian noise of rate·std(y)', () => {
  const d = loadCars();
  const rate = 0.5;
  const noisy = labelNoise(d, rate, 2);
  assert.deepEqual(noisy.x, d.x);
  const delta = noisy.y.map((v, i) => v - d.y[i]);
  const target = rate * std(d.y);
  console.log(`cars labelNoise 0.5: noise std ${std(delta).toFixed(3)} (target ${target.toFixed(3)}), mean ${mean(delta).toFixed(3)}`);
  assert.ok(Math.abs(std(delta) / target - 1) < 0.15);
  assert.ok(Math.abs(mean(delta)) < 0.2 * target);
  assert.deepEqual(labelNoise(d, 0, 2).y, d.y);
});

test('covariateShift keeps exactly the rows inside the quantile band of the feature', () => {
  const d = loadCars();
  const v = column(d, 'weight');
  const lo = quantile(v, 0.25);
  const hi = quantile(v, 0.6);
  const s = covariateShift(d, 'weight', 0.25, 0.6, 0);
  const w = column(s, 'weight');
  console.log(`cars covariateShift weight [0.25, 0.6] = [${lo}, ${hi}]: ${s.x.length} of ${d.x.length} rows`);
  assert.ok(w.every((a) => a >= lo && a <= hi));
  assert.equal(s.x.length, v.filter((a) => a >= lo && a <= hi).length);
  assert.ok(s.x.length >= 0.33 * d.x.length && s.x.length <= 0.37 * d.x.length);
  assert.equal(covariateShift(d, 'weight', 0, 1, 0).x.length, d.x.length);
  assert.throws(() => covariateShift(d, 'colour', 0, 1, 0), /no feature 'colour'/);
  assert.throws(() => covariateShift(d, 'weight', 0.7, 0.2, 0), /quantileLo <= quantileHi/);
  pureOn(d, (x) => covariateShift(x, 'year', 0.5, 1, 0));
});

test('imbalance keeps round(fraction·count) rows of each class', () => {
  const d = loadPenguins();
  const fr = [1, 0.2, 0.5];
  const s = imbalance(d, fr, 4);
  const before = classCounts(d);
  assert.deepEqual(
    classCounts(s),
    before.map((c, i) => Math.round(fr[i] * c)),
  );
  console.log(`penguins imbalance [1, 0.2, 0.5]: ${JSON.stringify(before)} -> ${JSON.stringify(classCounts(s))}`);
  const orig = bag(d);
  for (const [k, n] of bag(s)) assert.ok((orig.get(k) ?? 0) >= n, 'only original rows');
  assert.deepEqual(s, imbalance(d, fr, 4));
  assert.throws(() => imbalance(d, [1, 1], 0), /one fraction per class \(3\)/);
  assert.throws(() => imbalance(loadCars(), [1], 0), /not a classification/);
  pureOn(d, (x) => imbalance(x, fr, 1));
});

test('duplicate repeats round(fraction·n) rows copies extra times', () => {
  const d = loadIris(); // iris already holds one duplicated row: count multiplicities, not rows
  const copies = 3;
  const fraction = 0.2;
  const s = duplicate(d, copies, fraction, 6);
  const k = Math.round(fraction * d.x.length);
  assert.equal(s.x.length, d.x.length + k * copies);
  const orig = bag(d);
  const now = bag(s);
  let repeated = 0;
  for (const [key2, n] of orig) {
    const m = now.get(key2) ?? 0;
    assert.ok(m >= n, 'no row lost');
    assert.equal((m - n) % copies, 0, 'extra copies come in multiples of `copies`');
    repeated += (m - n) / copies;
  }
  for (const key2 of now.keys()) assert.ok(orig.has(key2), 'no new rows');
  assert.equal(repeated, k);
  assert.deepEqual(s, duplicate(d, copies, fraction, 6));
  assert.equal(duplicate(d, 0, 0.5, 1).x.length, d.x.length);
  pureOn(d, (x) => duplicate(x, 2, 0.5, 1));
});

test('jitterAugment appends copies with labels kept and features moved by about scale·std', () => {
  const d = loadPenguins();
  const scale = 0.1;
  const s = jitterAugment(d, 2, scale, 8);
  const n = d.x.length;
  assert.equal(s.x.length, 3 * n);
  assert.deepEqual(s.x.slice(0, n), d.x);
  assert.deepEqual(s.y, [...d.y, ...d.y, ...d.y]);
  d.features.forEach((f, j) => {
    const sd = std(column(d, f));
    const moves = s.x.slice(n).map((r, i) => r[j] - d.x[i % n][j]);
    const ratio = std(moves) / (scale * sd);
    assert.ok(Math.abs(ratio - 1) < 0.15, `${f}: noise/target ${ratio}`);
    assert.ok(Math.abs(mean(moves)) < 0.2 * scale * sd, `${f}: biased`);
  });
  assert.deepEqual(jitterAugment(d, 1, 0, 8).x, [...d.x, ...d.x]);
  assert.deepEqual(s, jitterAugment(d, 2, scale, 8));
  pureOn(d, (x) => jitterAugment(x, 1, 0.5, 1));
});

test('split is disjoint, covers the data, stratified and deterministic', () => {
  const d = loadSeattleWeather();
  const { train, test: held } = split(d, 0.2, 9);
  assert.equal(train.x.length + held.x.length, d.x.length);
  // tag each row with its index as an extra column to follow it through the split
  const t2 = split({ ...d, x: d.x.map((r, i) => [...r, i]), features: [...d.features, 'row'] }, 0.2, 9);
  const ids = (s: Dataset): number[] => s.x.map((r) => r[r.length - 1]);
  const a = ids(t2.train);
  const b = ids(t2.test);
  assert.equal(new Set([...a, ...b]).size, d.x.length, 'covers every row once');
  assert.equal(a.length + b.length, d.x.length);
  assert.ok(
    a.every((i) => !b.includes(i)),
    'disjoint',
  );
  assert.deepEqual(
    t2.test.x.map((r) => r.slice(0, -1)),
    held.x,
    'the extra column does not change the draw',
  );
  const whole = classCounts(d);
  assert.deepEqual(
    classCounts(held),
    whole.map((c) => Math.round(0.2 * c)),
  );
  console.log(`seattle-weather split 0.2: test ${JSON.stringify(classCounts(held))} of ${JSON.stringify(whole)}`);
  assert.deepEqual(split(d, 0.2, 9), { train, test: held });
  assert.notDeepEqual(split(d, 0.2, 10).test.x, held.x);
  // regression: round(f·n) rows, targets (here the row index) all accounted for
  const tagged: Dataset = { ...d, kind: 'regression', classes: undefined, y: d.y.map((_, i) => i) };
  const r = split(tagged, 0.25, 1);
  assert.equal(r.test.x.length, Math.round(0.25 * d.x.length));
  assert.deepEqual(
    [...r.train.y, ...r.test.y].sort((p, q) => p - q),
    tagged.y,
  );
  pureOn(d, (x) => split(x, 0.3, 1));
});

test('concat stacks rows, aligns columns by name and merges classes by name', () => {
  const a = subsample(loadPenguins(), 20, 1);
  const b = subsample(loadPenguins(), 30, 2);
  const c = concat(a, b);
  assert.equal(c.x.length, 50);
  assert.deepEqual(c.x, [...a.x, ...b.x]);
  assert.deepEqual(c.y, [...a.y, ...b.y]);
  // reversed columns and classes in b are realigned
  const rb: Dataset = {
    ...b,
    features: [...b.features].reverse(),
    x: b.x.map((r) => [...r].reverse()),
    classes: [...b.classes!].reverse(),
    y: b.y.map((k) => 2 - k),
  };
  assert.deepEqual(concat(a, rb).x, c.x);
  assert.deepEqual(concat(a, rb).y, c.y);
  // a class only b has is appended
  const m1 = moons(10, 0.1, 1);
  const m2 = { ...moons(10, 0.1, 2), classes: ['upper', 'extra'] };
  const mc = concat(m1, m2);
  assert.deepEqual(mc.classes, ['upper', 'lower', 'extra']);
  assert.deepEqual(
    mc.y.slice(10),
    m2.y.map((k) => (k === 0 ? 0 : 2)),
  );
  assert.throws(() => concat(a, loadIris()), /targets differ|features differ/);
  assert.throws(() => concat(a, loadCars()), /kinds differ/);
  pureOn(a, (x) => concat(x, b));
  pureOn(b, (x) => concat(a, x));
});

test('history records each transformation in order', () => {
  const d = labelNoise(subsample(loadIris(), 60, 1), 0.1, 2);
  assert.deepEqual(d.history, ['subsample(n=60, seed=1)', 'labelNoise(rate=0.1, seed=2)']);
  assert.equal(loadIris().history, undefined);
});
