import test from 'node:test';
import assert from 'node:assert/strict';
import { loadCars, loadIris } from '../../../inner/data/index.js';
import { retarget, selectFeatures } from './define.js';

test('retarget: a numeric column becomes the regression target; a regression target becomes a feature, a class target is dropped', () => {
  const cars = loadCars();
  const w = retarget(cars, 'weight');
  assert.equal(w.target, 'weight');
  assert.equal(w.kind, 'regression');
  assert.ok(!w.features.includes('weight') && w.features.at(-1) === 'mpg');
  const j = cars.features.indexOf('weight');
  cars.x.forEach((row, i) => {
    assert.equal(w.y[i], row[j]);
    assert.equal(w.x[i].at(-1), cars.y[i]);
    assert.equal(w.x[i].length, w.features.length);
  });
  const iris = loadIris();
  const p = retarget(iris, 'petal_width');
  assert.deepEqual(p.features, ['sepal_length', 'sepal_width', 'petal_length']);
  assert.equal(p.kind, 'regression');
  assert.equal(p.classes, undefined);
  assert.equal(retarget(iris, 'species'), iris);
  assert.throws(() => retarget(iris, 'colour'), /"colour" is not a column of iris/);
});

test('selectFeatures keeps the named columns in the given order', () => {
  const iris = loadIris();
  const s = selectFeatures(iris, ['petal_width', 'sepal_length']);
  assert.deepEqual(s.features, ['petal_width', 'sepal_length']);
  iris.x.forEach((row, i) => assert.deepEqual(s.x[i], [row[3], row[0]]));
  assert.deepEqual(s.y, iris.y);
});
