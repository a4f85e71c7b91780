import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ranks, spearman } from './rank-correlation.js';

test('ties share their mean rank', () => {
  assert.deepEqual(ranks([0.5, 0, 0, 1]), [3, 1.5, 1.5, 4]);
});

test('property: Spearman is 1 under any increasing transform, -1 under a decreasing one, and symmetric', () => {
  const distinct = fc.uniqueArray(fc.integer({ min: -1000, max: 1000 }), { minLength: 2, maxLength: 40 });
  fc.assert(
    fc.property(distinct, fc.array(fc.double({ min: -1e3, max: 1e3, noNaN: true }), { minLength: 40, maxLength: 40 }), (xs, ys) => {
      assert.ok(
        Math.abs(
          (spearman(
            xs,
            xs.map((x) => Math.exp(x / 100) + 3),
          ) as number) - 1,
        ) < 1e-9,
      );
      assert.ok(
        Math.abs(
          (spearman(
            xs,
            xs.map((x) => -x * 2),
          ) as number) + 1,
        ) < 1e-9,
      );
      const other = ys.slice(0, xs.length);
      const r = spearman(xs, other);
      assert.equal(r === null ? null : r.toFixed(12), ((v) => (v === null ? null : v.toFixed(12)))(spearman(other, xs)));
      if (r !== null) assert.ok(r >= -1 - 1e-9 && r <= 1 + 1e-9);
    }),
  );
});

test('a constant series has no rank correlation', () => {
  assert.equal(spearman([1, 1, 1], [1, 2, 3]), null);
  assert.equal(spearman([1], [2]), null);
});
