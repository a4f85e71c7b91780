import test from 'node:test';
import assert from 'node:assert/strict';
import { loadJobs, loadPopulation, loadUnemployment } from './real-counts.js';
import type { Dataset } from './types.js';

const loaders: [string, () => Dataset, number, number][] = [
  ['population', loadPopulation, 570, 3],
  ['unemployment', loadUnemployment, 1708, 18],
  ['jobs', loadJobs, 7650, 3],
];

for (const [name, load, rows, columns] of loaders) {
  test(`${name}: clean numeric table with a count target, identifier feature names and a description of every column`, () => {
    const d = load();
    assert.equal(d.name, name);
    assert.equal(d.kind, 'regression');
    assert.equal(d.x.length, rows);
    assert.equal(d.features.length, columns);
    assert.ok(
      d.y.every((v) => Number.isInteger(v) && v >= 0),
      'non-negative integers',
    );
    for (const row of d.x) {
      assert.equal(row.length, d.features.length);
      assert.ok(row.every(Number.isFinite));
    }
    for (const f of [...d.features, d.target]) {
      assert.match(f, /^[a-z_][a-z0-9_]*$/);
      assert.ok(d.descriptions[f], `${f} described`);
    }
    d.x[0][0] = Number.NaN;
    assert.ok(Number.isFinite(load().x[0][0]), 'a fresh copy every call');
  });
}

test('real-counts values where the files say so', () => {
  // population.json opens with 1850, age 0, men: 1,483,789.
  const p = loadPopulation();
  assert.deepEqual(p.x[0], [1850, 0, 0]);
  assert.equal(p.y[0], 1483789);
  // unemployment-across-industries.json opens with Government, January 2000: 430 thousand, rate 2.1.
  const u = loadUnemployment();
  assert.deepEqual(u.x[0].slice(0, 4), [2000, 0, 1, 2.1]);
  assert.equal(u.x[0][u.features.indexOf('industry_government')], 1);
  assert.equal(u.y[0], 430);
  for (const row of u.x)
    assert.equal(
      row.slice(4).reduce((s, v) => s + v, 0),
      1,
      'one industry per row',
    );
  // jobs.json opens with Accountant / Auditor, men, 1850: 708 workers, share 0.0131%.
  const j = loadJobs();
  assert.deepEqual(
    j.x[0].map((v) => +v.toPrecision(4)),
    [1850, 0, 0.0131],
  );
  assert.equal(j.y[0], 708);
  assert.ok(j.y.filter((v) => v === 0).length > 2000, 'many zero counts');
});
