import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Rng } from './rng.js';
import { pairedDifference, pairedVerdict } from './paired-difference.js';

test('the interval of a known sample: mean ± t(0.95, 5) · sd / √n', () => {
  // Differences 1..6: mean 3.5, sd √3.5, t(0.95, 5) = 2.015 (any t table).
  const p = pairedDifference([2, 4, 6, 8, 10, 12], [1, 2, 3, 4, 5, 6])!;
  const half = 2.015 * Math.sqrt(3.5 / 6);
  assert.equal(p.n, 6);
  assert.equal(p.mean, 3.5);
  assert.ok(Math.abs(p.lo! - (3.5 - half)) < 1e-3 && Math.abs(p.hi! - (3.5 + half)) < 1e-3);
  assert.equal(pairedVerdict(p), 'above');
});

test('pairs with a missing value are left out; one pair has no interval; none gives null', () => {
  assert.deepEqual(pairedDifference([1, null, 3], [0, 5, null]), { n: 1, mean: 1, lo: null, hi: null });
  assert.equal(pairedVerdict(pairedDifference([1, null], [0, 5])), null);
  assert.equal(pairedDifference([null], [1]), null);
  assert.throws(() => pairedDifference([1, 2], [1]), /lengths 2 and 1/);
  assert.throws(() => pairedDifference([1, 2], [1, 2], 1), /level/);
});

const series = fc.array(fc.tuple(fc.double({ min: -2, max: 2, noNaN: true }), fc.double({ min: -2, max: 2, noNaN: true })), { minLength: 2, maxLength: 30 });

test('property: shifting a shifts the interval, swapping a and b mirrors it, a higher level widens it', () => {
  fc.assert(
    fc.property(series, fc.double({ min: -1, max: 1, noNaN: true }), (pairs, c) => {
      const a = pairs.map((p) => p[0]);
      const b = pairs.map((p) => p[1]);
      const p = pairedDifference(a, b)!;
      const shifted = pairedDifference(
        a.map((x) => x + c),
        b,
      )!;
      const swapped = pairedDifference(b, a)!;
      const wider = pairedDifference(a, b, 0.99)!;
      const close = (x: number, y: number): boolean => Math.abs(x - y) < 1e-9;
      assert.ok(p.lo! <= p.mean + 1e-12 && p.mean <= p.hi! + 1e-12);
      assert.ok(close(shifted.mean, p.mean + c) && close(shifted.lo!, p.lo! + c) && close(shifted.hi!, p.hi! + c));
      assert.ok(close(swapped.mean, -p.mean) && close(swapped.lo!, -p.hi!) && close(swapped.hi!, -p.lo!));
      assert.ok(wider.lo! <= p.lo! + 1e-12 && wider.hi! >= p.hi! - 1e-12);
      const v = pairedVerdict(p);
      const sv = pairedVerdict(swapped);
      assert.equal(sv, v === 'above' ? 'below' : v === 'below' ? 'above' : 'level');
    }),
  );
});

test('the 90% interval covers the true difference in about 90% of samples (6 pairs, normal noise, seeded)', () => {
  const rng = new Rng(7);
  const trials = 4000;
  let covered = 0;
  for (let t = 0; t < trials; t++) {
    const a = Array.from({ length: 6 }, () => 0.3 + 0.1 * rng.normal());
    const b = Array.from({ length: 6 }, () => 0.25 + 0.1 * rng.normal());
    const p = pairedDifference(a, b)!;
    if (p.lo! <= 0.05 && 0.05 <= p.hi!) covered += 1;
  }
  // Binomial sd at 90% over 4000 trials is 0.0047: 0.88–0.92 is more than four of them either side.
  assert.ok(covered / trials > 0.88 && covered / trials < 0.92, `coverage ${covered / trials}`);
});
