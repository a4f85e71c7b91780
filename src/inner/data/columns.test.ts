import test from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../util/rng.js';
import { type ColumnDecisions, DEFAULT_COLUMN_DECISIONS, type FitTarget, type RawColumn, applyColumns, fitColumns } from './columns.js';

/** A table of `n` rows: a numeric column with a fifth missing, a categorical with 30 levels and some missing, a binary one; a class target. */
function table(n: number, seed: number): { columns: RawColumn[]; target: FitTarget } {
  const rng = new Rng(seed);
  const y = Array.from({ length: n }, () => rng.int(3));
  const columns: RawColumn[] = [
    { name: 'dose', kind: 'numeric', values: y.map((c) => (rng.next() < 0.2 ? NaN : c + rng.normal())) },
    { name: 'site', kind: 'categorical', values: y.map(() => (rng.next() < 0.1 ? null : `s${rng.int(30)}`)) },
    { name: 'smoker', kind: 'categorical', values: y.map((c) => (rng.next() < 0.5 + 0.1 * c ? 'yes' : 'no')) },
  ];
  return { columns, target: { kind: 'classification', y, classes: 3 } };
}

const EVERY: ColumnDecisions[] = (['one-hot', 'frequency', 'target'] as const).flatMap((categorical) =>
  (['drop-row', 'mean', 'median', 'constant'] as const).flatMap((missing) =>
    [true, false].map((indicator) => ({ categorical, maxLevels: 8, missing, indicator })),
  ),
);

test('every decision gives finite features of one width, named, and the state read back from JSON gives the same features', () => {
  const { columns, target } = table(300, 1);
  const fresh = table(50, 2).columns;
  for (const d of EVERY) {
    const fit = fitColumns(columns, target, d, 7);
    const again = JSON.parse(JSON.stringify(fit.state));
    const x = applyColumns(again, fresh);
    for (const rows of [fit.x, x]) {
      for (const r of rows) {
        assert.equal(r.length, fit.state.features.length, JSON.stringify(d));
        assert.ok(r.every(Number.isFinite), `${JSON.stringify(d)}: ${r.join(', ')}`);
      }
    }
    assert.deepEqual(x, applyColumns(fit.state, fresh), 'the saved state is all the scorer needs');
    assert.equal(fit.x.length, fit.kept.length);
  }
});

test('missing cells: drop-row keeps exactly the complete rows; a fill keeps every row and its indicator says which cells were missing', () => {
  const { columns, target } = table(200, 3);
  const complete = target.y.map((_, i) => i).filter((i) => !columns.some((c) => (c.kind === 'numeric' ? Number.isNaN(c.values[i]) : c.values[i] === null)));
  assert.deepEqual(fitColumns(columns, target, { ...DEFAULT_COLUMN_DECISIONS, missing: 'drop-row' }, 1).kept, complete);
  const fit = fitColumns(columns, target, { ...DEFAULT_COLUMN_DECISIONS, missing: 'median', indicator: true }, 1);
  assert.equal(fit.kept.length, 200);
  const flag = fit.state.features.indexOf('dose:missing');
  assert.ok(flag >= 0);
  fit.x.forEach((r, i) => assert.equal(r[flag], Number.isNaN(columns[0].values[i] as number) ? 1 : 0));
  assert.ok(!fit.state.features.includes('smoker:missing'), 'a column with no missing cell gets no indicator');
});

test('one-hot is capped at maxLevels features per column, the rarest levels and unseen ones going to "other"', () => {
  const { columns, target } = table(300, 4);
  for (const maxLevels of [2, 5, 8, 64]) {
    const fit = fitColumns(columns, target, { ...DEFAULT_COLUMN_DECISIONS, maxLevels, indicator: false }, 1);
    const site = fit.state.features.filter((f) => f.startsWith('site='));
    assert.ok(site.length <= maxLevels, `${maxLevels}: ${site.length}`);
    const x = applyColumns(
      fit.state,
      [columns[0], { name: 'site', kind: 'categorical', values: ['never seen'] }, { name: 'smoker', kind: 'categorical', values: ['yes'] }].map(
        (c) => ({ ...c, values: c.values.slice(0, 1) }) as RawColumn,
      ),
    );
    const other = fit.state.features.indexOf('site=(other)');
    if (other >= 0) assert.equal(x[0][other], 1);
    else
      assert.ok(
        site.every((f) => x[0][fit.state.features.indexOf(f)] === 0),
        'an unseen level sets no level feature',
      );
  }
});

test("target encoding is out of fold: a training row's own target never moves its features", () => {
  const { columns, target } = table(150, 5);
  const d: ColumnDecisions = { ...DEFAULT_COLUMN_DECISIONS, categorical: 'target', missing: 'mean' };
  const base = fitColumns(columns, target, d, 9);
  for (const i of [0, 17, 80, 149]) {
    const y = [...target.y];
    y[i] = (y[i] + 1) % 3;
    const moved = fitColumns(columns, { ...target, y }, d, 9);
    assert.deepEqual(moved.x[i], base.x[i], `row ${i}`);
  }
  // A level per row (an id) under target encoding says nothing: every training row gets its fold's prior.
  const ids: RawColumn = { name: 'id', kind: 'categorical', values: target.y.map((_, i) => `r${i}`) };
  const leak = fitColumns([ids], target, { ...d, indicator: false }, 9);
  const truth = leak.x.map((r, i) => r[target.y[i]]);
  const other = leak.x.map((r, i) => r[(target.y[i] + 1) % 3]);
  const mean = (v: number[]): number => v.reduce((a, b) => a + b, 0) / v.length;
  assert.ok(Math.abs(mean(truth) - mean(other)) < 0.05, `own class ${mean(truth)} vs another ${mean(other)}`);
});

test('columns of unequal length are an error naming the column', () => {
  assert.throws(
    () => fitColumns([{ name: 'a', kind: 'numeric', values: [1, 2] }], { kind: 'regression', y: [1, 2, 3] }, DEFAULT_COLUMN_DECISIONS, 1),
    /column "a" has 2 rows, the target 3/,
  );
});
