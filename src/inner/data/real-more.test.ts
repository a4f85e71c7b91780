import test from 'node:test';
import assert from 'node:assert/strict';
import { loadAirports, loadGapminder, loadMovies, loadTwoCityWeather } from './real-more.js';
import { classCounts } from './stats.js';
import type { Dataset } from './types.js';

const loaders: [string, () => Dataset, number, number[]][] = [
  ['gapminder', loadGapminder, 682, [44, 209, 44, 220, 99, 66]],
  ['movies', loadMovies, 1736, [51, 241, 672, 772]],
  ['weather', loadTwoCityWeather, 2922, [1461, 1461]],
  ['airports', loadAirports, 1173, [263, 209, 205, 102, 100, 100, 97, 97]],
];

for (const [name, load, rows, counts] of loaders) {
  test(`${name}: clean numeric table with identifier feature names and a description of every column`, () => {
    const d = load();
    assert.equal(d.name, name);
    assert.equal(d.x.length, rows);
    assert.deepEqual(classCounts(d), counts);
    for (const row of d.x) {
      assert.equal(row.length, d.features.length);
      assert.ok(row.every(Number.isFinite));
    }
    for (const f of [...d.features, d.target]) {
      assert.match(f, /^[a-z_][a-z0-9_]*$/);
      assert.ok(d.descriptions[f], `${f} described`);
    }
    // A fresh copy every call.
    d.x[0][0] = Number.NaN;
    assert.ok(Number.isFinite(load().x[0][0]));
  });
}

test('real-more values where the files say so', () => {
  const g = loadGapminder();
  // Afghanistan 1955: population 7,971,931, life expectancy 43.88, fertility 7.42, cluster 0.
  assert.deepEqual(
    g.x[0].map((v) => +v.toFixed(4)),
    [1955, +Math.log10(7971931).toFixed(4), 43.88, 7.42],
  );
  assert.equal(g.y[0], 0);
  const w = loadTwoCityWeather();
  // weather.csv opens with Seattle 2012-01-01: 0.0 mm, 12.8 / 5.0 °C, wind 4.7, drizzle.
  assert.deepEqual(w.x[0].slice(0, 4), [0, 12.8, 5, 4.7]);
  assert.equal(w.classes![w.y[0]], 'Seattle');
  assert.equal(w.x[0][w.features.indexOf('weather_drizzle')], 1);
  const a = loadAirports();
  const lat = a.x.map((r) => r[0]);
  assert.ok(Math.min(...lat) > 18 && Math.max(...lat) < 72);
  const m = loadMovies();
  const imdb = m.x.map((r) => r[m.features.indexOf('imdb_rating')]);
  assert.ok(Math.min(...imdb) >= 1 && Math.max(...imdb) <= 10);
  for (const row of m.x)
    assert.equal(
      row.slice(7).reduce((s, v) => s + v, 0),
      1,
      'one genre per film',
    );
});
