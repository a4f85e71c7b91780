import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Dataset } from '../../spec/data.js';
import { poolCatalog, poolCatalogOptions, poolMetric, shiftFeature } from './pool-catalog.js';

const n = 300;
const base = (y: number[], kind: Dataset['kind'], classes?: string[]): Dataset => ({
  name: 't',
  features: ['code', 'gappy', 'wide', 'kind'],
  target: 'y',
  kind,
  ...(classes ? { classes } : {}),
  columns: [{ kind: 'numeric' }, { kind: 'numeric' }, { kind: 'numeric' }, { kind: 'categorical', levels: ['a', 'b'] }],
  x: y.map((_, i) => [i % 3, i % 3 === 0 ? Number.NaN : i, i % 50, i % 2]),
  y,
  descriptions: {},
});

test('the metric: accuracy for balanced classes, macro-F1 when the smallest class is under 20 %, R² for regression', () => {
  assert.equal(
    poolMetric(
      base(
        Array.from({ length: n }, (_, i) => i % 2),
        'classification',
        ['a', 'b'],
      ),
    ),
    'accuracy',
  );
  assert.equal(
    poolMetric(
      base(
        Array.from({ length: n }, (_, i) => (i % 10 === 0 ? 1 : 0)),
        'classification',
        ['a', 'b'],
      ),
    ),
    'macro-f1',
  );
  assert.equal(
    poolMetric(
      base(
        Array.from({ length: n }, (_, i) => i / 7),
        'regression',
      ),
    ),
    'r2',
  );
});

test('the catalog from the data: the shifted source follows a numeric feature with few missing cells, the imbalanced one keeps the largest class', () => {
  const d = base(
    Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 1 : 0)),
    'classification',
    ['a', 'b'],
  );
  assert.equal(shiftFeature(d), 'wide');
  const o = poolCatalogOptions(d, 210);
  assert.deepEqual(o.imbalance, [1, 0.3]);
  assert.equal(o.cleanSize, 42);
  assert.deepEqual(
    poolCatalog(d, 210).map((s) => s.id),
    ['clean-small', 'noisy-large', 'shifted', 'imbalanced', 'duplicated', 'augmented'],
  );
  // Without a numeric feature to follow there is no shifted source.
  const categorical: Dataset = { ...d, features: ['kind'], columns: [{ kind: 'categorical', levels: ['a', 'b'] }], x: d.x.map((r) => [r[3]]) };
  assert.ok(!poolCatalog(categorical, 210).some((s) => s.id === 'shifted'));
});
