import test from 'node:test';
import assert from 'node:assert/strict';
import { classCounts, column, featureInfo, mean, quantile, std } from './stats.js';
import { moons } from './synthetic.js';

test('mean, population std and numpy-style quantiles', () => {
  const v = [4, 1, 3, 2];
  assert.equal(mean(v), 2.5);
  assert.equal(std(v), Math.sqrt(1.25));
  // numpy.quantile([1,2,3,4], q): 0 → 1, 0.25 → 1.75, 0.5 → 2.5, 1 → 4
  assert.deepEqual(
    [0, 0.25, 0.5, 1].map((q) => quantile(v, q)),
    [1, 1.75, 2.5, 4],
  );
  assert.throws(() => quantile([], 0.5), /empty/);
});

test('column, classCounts and featureInfo describe a dataset', () => {
  const d = moons(11, 0.1, 3);
  assert.deepEqual(
    column(d, 'x2'),
    d.x.map((r) => r[1]),
  );
  assert.throws(() => column(d, 'x3'), /no feature 'x3'/);
  assert.deepEqual(classCounts(d), [6, 5]);
  const info = featureInfo(d);
  assert.deepEqual(
    info.map((f) => f.name),
    ['x1', 'x2'],
  );
  assert.equal(info[0].min, Math.min(...column(d, 'x1')));
  assert.equal(info[1].max, Math.max(...column(d, 'x2')));
  assert.ok(info[0].description.length > 0);
});
