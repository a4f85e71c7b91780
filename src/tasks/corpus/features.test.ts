import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fixtureRandom } from '../../testing/corpus.js';
import { chooseFeatures } from './features.js';
import { profile } from './profile.js';
import type { RawTable } from './read.js';

const n = 200;
const r = fixtureRandom(7);
const y = Array.from({ length: n }, () => Math.round(r() * 1000) / 10);
const table: RawTable = {
  package: 'p',
  item: 't',
  rows: n,
  columns: [
    { name: 'rownames', kind: 'numeric', cells: y.map((_, i) => i + 1) },
    { name: 'y', kind: 'numeric', cells: y },
    { name: 'house_id', kind: 'numeric', cells: y.map((_, i) => 1000 + i) },
    { name: 'comment', kind: 'text', cells: y.map((_, i) => `remark number ${i}`) },
    { name: 'extra', kind: 'numeric', cells: y.map((_, i) => (i < 5 ? i : null)) },
    { name: 'y_thousands', kind: 'numeric', cells: y.map((v) => v / 1000 + 0.0001 * r()) },
    { name: 'constant', kind: 'categorical', cells: y.map(() => 'same') },
    { name: 'area', kind: 'numeric', cells: y.map((v, i) => (i % 10 === 0 ? null : v * 0.3 + r() * 40)) },
    { name: 'kind', kind: 'categorical', cells: y.map((_, i) => ['a', 'b', null][i % 3]) },
    { name: 'country', kind: 'text', cells: y.map((_, i) => `c${i % 30}`) },
  ],
};

test('row ids, free text, mostly-missing, constant columns and near-copies of the target are left out, each with its reason', () => {
  const { features, excluded } = chooseFeatures(table, table.columns.map(profile), 'y', 'regression');
  assert.deepEqual(Object.fromEntries(excluded.map((e) => [e.column, e.reason])), {
    rownames: 'row id',
    house_id: 'row id',
    comment: 'free text',
    extra: 'mostly missing',
    y_thousands: 'near-copy of the target',
    constant: 'constant',
  });
  // Columns with missing cells stay; a text column of few levels is a factor.
  assert.deepEqual(
    features.map((f) => [f.column.name, f.kind]),
    [
      ['area', 'numeric'],
      ['kind', 'categorical'],
      ['country', 'categorical'],
    ],
  );
});

test('for classification, a column whose values determine the class is a near-copy; a 1-1 recoding for regression', () => {
  const cls: RawTable = {
    ...table,
    columns: [
      { name: 'grade', kind: 'categorical', cells: y.map((v) => (v < 50 ? 'low' : 'high')) },
      { name: 'band', kind: 'numeric', cells: y.map((v) => Math.floor(v / 10)) },
      { name: 'code', kind: 'numeric', cells: y.map((v) => (v < 50 ? 1 : 2)) },
      { name: 'noise', kind: 'numeric', cells: y.map(() => r()) },
    ],
  };
  const { excluded } = chooseFeatures(cls, cls.columns.map(profile), 'grade', 'classification');
  assert.deepEqual(
    excluded.map((e) => [e.column, e.reason]),
    [
      ['band', 'near-copy of the target'],
      ['code', 'near-copy of the target'],
    ],
  );
  // For a regression on band, grade is coarser (not one to one) and stays; code recodes grade one to one.
  const reg = chooseFeatures(cls, cls.columns.map(profile), 'band', 'regression');
  assert.deepEqual(reg.excluded, []);
});
