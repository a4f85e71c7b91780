import test from 'node:test';
import assert from 'node:assert/strict';
import { loadCars, loadIris, loadPenguins, loadSeattleWeather, parseCsv } from './real.js';
import { REAL_DATASETS, loadDataset, type RealDatasetName } from './index.js';
import { classCounts } from './stats.js';
import type { Dataset } from './types.js';

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Shape, finiteness, identifiers, descriptions and label range common to every dataset. */
function checkWellFormed(d: Dataset): void {
  assert.equal(d.x.length, d.y.length);
  for (const row of d.x) {
    assert.equal(row.length, d.features.length);
    for (const v of row) assert.ok(typeof v === 'number' && Number.isFinite(v), `${d.name}: non-finite feature ${v}`);
  }
  for (const v of d.y) assert.ok(Number.isFinite(v), `${d.name}: non-finite target ${v}`);
  for (const f of [...d.features, d.target]) {
    assert.match(f, IDENT);
    assert.ok((d.descriptions[f] ?? '').length > 0, `${d.name}: no description for ${f}`);
  }
  assert.equal(new Set(d.features).size, d.features.length, 'feature names are unique');
  if (d.kind === 'classification') {
    assert.ok(d.classes && d.classes.length >= 2);
    for (const c of d.y) assert.ok(Number.isInteger(c) && c >= 0 && c < d.classes.length);
  } else {
    assert.equal(d.classes, undefined);
  }
}

function report(d: Dataset): void {
  const counts = d.kind === 'classification' ? ` classes ${JSON.stringify(Object.fromEntries(d.classes!.map((c, i) => [c, classCounts(d)[i]])))}` : '';
  console.log(`${d.name}: ${d.x.length} rows x ${d.features.length} features [${d.features.join(', ')}]${counts}`);
}

test('penguins: 333 complete rows, 8 features, three species', () => {
  const d = loadPenguins();
  report(d);
  checkWellFormed(d);
  assert.equal(d.x.length, 333);
  assert.deepEqual(d.features, ['beak_length', 'beak_depth', 'flipper_length', 'body_mass', 'island_biscoe', 'island_dream', 'island_torgersen', 'sex_male']);
  assert.deepEqual(d.classes, ['Adelie', 'Chinstrap', 'Gentoo']);
  assert.deepEqual(classCounts(d), [146, 68, 119]);
  assert.equal(d.target, 'species');
  // first row of the file: Adelie, Torgersen, 39.1 / 18.7 / 181 / 3750, male
  assert.deepEqual(d.x[0], [39.1, 18.7, 181, 3750, 0, 0, 1, 1]);
  assert.equal(d.y[0], 0);
  for (const row of d.x) {
    assert.equal(row[4] + row[5] + row[6], 1, 'island one-hot');
    assert.ok(row[7] === 0 || row[7] === 1);
  }
});

test('cars: 392 complete rows, 9 features, mpg regression', () => {
  const d = loadCars();
  report(d);
  checkWellFormed(d);
  assert.equal(d.x.length, 392);
  assert.equal(d.kind, 'regression');
  assert.equal(d.target, 'mpg');
  assert.deepEqual(d.features, ['cylinders', 'displacement', 'horsepower', 'weight', 'acceleration', 'year', 'origin_usa', 'origin_europe', 'origin_japan']);
  // first row: chevrolet chevelle malibu, 18 mpg, 8 cyl, 307, 130 hp, 3504 lbs, 12 s, 1970, USA
  assert.deepEqual(d.x[0], [8, 307, 130, 3504, 12, 1970, 1, 0, 0]);
  assert.equal(d.y[0], 18);
  const years = new Set(d.x.map((r) => r[5]));
  assert.deepEqual([...years].sort(), [1970, 1971, 1972, 1973, 1974, 1975, 1976, 1977, 1978, 1979, 1980, 1982]);
  for (const row of d.x) assert.equal(row[6] + row[7] + row[8], 1, 'origin one-hot');
  console.log(`cars: mpg ${Math.min(...d.y)}..${Math.max(...d.y)}`);
});

test('seattle-weather: 1461 days, 6 features, 5 imbalanced classes', () => {
  const d = loadSeattleWeather();
  report(d);
  checkWellFormed(d);
  assert.equal(d.x.length, 1461);
  assert.deepEqual(d.features, ['precipitation', 'temp_max', 'temp_min', 'wind', 'day_sin', 'day_cos']);
  assert.deepEqual(d.classes, ['drizzle', 'fog', 'rain', 'snow', 'sun']);
  assert.deepEqual(classCounts(d), [53, 101, 641, 26, 640]);
  // 2012-01-01 is day 0: angle 0
  assert.deepEqual(d.x[0], [0, 12.8, 5, 4.7, 0, 1]);
  for (const row of d.x) assert.ok(Math.abs(row[4] ** 2 + row[5] ** 2 - 1) < 1e-12, 'day on the unit circle');
});

test('iris: 150 rows, 4 features, 50 per species', () => {
  const d = loadIris();
  report(d);
  checkWellFormed(d);
  assert.equal(d.x.length, 150);
  assert.deepEqual(d.features, ['sepal_length', 'sepal_width', 'petal_length', 'petal_width']);
  assert.deepEqual(d.classes, ['setosa', 'versicolor', 'virginica']);
  assert.deepEqual(classCounts(d), [50, 50, 50]);
  assert.deepEqual(d.x[0], [5.1, 3.5, 1.4, 0.2]);
});

test('loaders cache but hand out independent copies', () => {
  const a = loadPenguins();
  a.x[0][0] = -1;
  a.y.length = 0;
  a.features.push('oops');
  const b = loadPenguins();
  assert.equal(b.x[0][0], 39.1);
  assert.equal(b.y.length, 333);
  assert.equal(b.features.length, 8);
});

test('loadDataset finds every registered dataset and rejects unknown names', () => {
  for (const name of REAL_DATASETS) {
    const d = loadDataset(name);
    assert.equal(d.name, name);
  }
  assert.throws(() => loadDataset('mnist' as RealDatasetName), /unknown dataset 'mnist'.*penguins/);
  assert.throws(() => loadDataset('toString' as RealDatasetName), /unknown dataset/);
});

test('parseCsv reads a header and rows, tolerating CRLF and a trailing newline', () => {
  assert.deepEqual(parseCsv('a,b\r\n1,x\r\n2,y\r\n'), [
    { a: '1', b: 'x' },
    { a: '2', b: 'y' },
  ]);
  assert.throws(() => parseCsv('a,b\n1\n'), /line 2/);
});
