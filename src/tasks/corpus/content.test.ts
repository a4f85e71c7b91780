import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadIris } from '../../inner/data/index.js';
import { fixtureRandom } from '../../testing/corpus.js';
import { contentPrint, copies, datasetPrint, dedupe } from './content.js';

const r = fixtureRandom(3);
const a = Array.from({ length: 300 }, () => r() * 100);
const b = Array.from({ length: 300 }, () => r() * 5 + 1);
const c = Array.from({ length: 300 }, (_, i) => ['x', 'y', 'z'][i % 3]);
const table = (key: string, rows: number[], extra: { name: string; cells: (number | string)[] }[] = []) =>
  contentPrint(key, [
    { name: 'rownames', cells: rows.map((_, i) => i) },
    { name: 'a', cells: rows.map((i) => a[i]) },
    { name: 'b', cells: rows.map((i) => b[i]) },
    { name: 'c', cells: rows.map((i) => c[i]) },
    ...extra,
  ]);
const all = a.map((_, i) => i);

test('a copy in another row order, with other row names or renamed columns, is the same content', () => {
  const p = table('p::t', all);
  const q = table('q::t', [...all].reverse());
  assert.equal(p.exact, q.exact);
  assert.ok(copies(p, q));
});

test('a near copy — rows dropped, a column added — is a copy; unrelated tables are not', () => {
  const p = table('p::t', all);
  const fewer = table('q::t', all.slice(0, 280), [{ name: 'extra', cells: all.slice(0, 280).map(() => r()) }]);
  assert.notEqual(p.exact, fewer.exact);
  assert.ok(copies(p, fewer));
  const other = contentPrint('o::t', [
    { name: 'a', cells: all.map(() => r() * 100) },
    { name: 'b', cells: all.map(() => r() * 5 + 1) },
  ]);
  assert.ok(!copies(p, other));
  // Runs of integers (years, counts) match by chance and say nothing.
  const years = (k: string) =>
    contentPrint(k, [
      { name: 'year', cells: all.map((i) => 1900 + (i % 100)) },
      { name: 'n', cells: all.map((i) => i % 7) },
    ]);
  assert.ok(!copies(years('y1'), { ...years('y2'), exact: 'different' }));
});

test('dedupe keeps the first of a group, in the order given, and names what each dropped one copies; built-ins first', () => {
  const p = table('p::t', all);
  const q = table('q::t', [...all].reverse());
  const fewer = table('r::t', all.slice(10));
  const iris = loadIris();
  const irisCopy = contentPrint('datasets::iris', [
    ...iris.features.map((f, j) => ({ name: f, cells: iris.x.map((row) => row[j]) })),
    { name: 'Species', cells: iris.y.map((k) => iris.classes![k]) },
  ]);
  const dropped = dedupe([p, q, fewer, irisCopy], [datasetPrint('built-in iris', iris)]);
  assert.deepEqual([...dropped.entries()].sort(), [
    ['datasets::iris', 'built-in iris'],
    ['q::t', 'p::t'],
    ['r::t', 'p::t'],
  ]);
});
