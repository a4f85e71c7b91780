import test from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { registerTaskDir } from './register.js';
import { getPublicTask } from '../briefs.js';
import { getHiddenEvaluation } from '../hidden.js';
import { metricValue } from '../supervised/evaluate.js';
import { scorePolicy } from '../../outer/scoring/hidden-score.js';
import { MODEL_FORMAT, type ModelFile } from '../../inner/model.js';
import { classificationTask, syntheticRows, taskDir, toCsv, writeTask } from '../../testing/task-files.js';

// Data an exact model exists for: y = 3a - 2b + c, and the class is the sign of a.
const dir = taskDir();
writeFileSync(join(dir, 'exact.csv'), toCsv(syntheticRows(200).map((r) => ({ ...r, y: 3 * r.a - 2 * r.b + r.c, kind: r.a > 0 ? 'up' : 'down' }))));
const regression = (id: string, metric: string): Record<string, unknown> =>
  classificationTask(id, { data: { file: 'exact.csv', target: 'y', type: 'regression', features: ['a', 'b', 'c'] }, metric, variables: {} });
for (const m of ['rmse', 'mae', 'r2']) writeTask(dir, `reg-${m}.json`, regression(`exact-${m}`, m));
for (const m of ['accuracy', 'macro-f1', 'log-loss'])
  writeTask(
    dir,
    `cls-${m}.json`,
    classificationTask(`exact-${m}`, { data: { file: 'exact.csv', target: 'kind', type: 'classification', features: ['a', 'b', 'c'] }, metric: m }),
  );
writeTask(dir, 'given.json', {
  ...regression('given-anchors', 'rmse'),
  anchors: { trivial: 4, reference: 0.5, how: 'trivial: last year’s model; reference: the lab’s best' },
});
test.after(() => rmSync(dir, { recursive: true, force: true }));

const linear: ModelFile = {
  format: MODEL_FORMAT,
  features: ['a', 'b', 'c'],
  kind: 'regression',
  activation: 'relu',
  layers: [{ in: 3, out: 1, weights: [3, -2, 1], bias: [0] }],
  inputNorm: null,
  targetNorm: null,
};
const sign: ModelFile = {
  format: MODEL_FORMAT,
  features: ['a', 'b', 'c'],
  kind: 'classification',
  classes: ['down', 'up'],
  activation: 'relu',
  layers: [{ in: 3, out: 2, weights: [-1e6, 1e6, 0, 0, 0, 0], bias: [0, 0] }],
  inputNorm: null,
  targetNorm: null,
};
const constant = (value: number): ModelFile => ({ ...linear, layers: [{ in: 3, out: 1, weights: [0, 0, 0], bias: [value] }] });

test('the metric values: log-loss, MAE and R² against hand-computed numbers', () => {
  assert.equal(metricValue('mae', [1, 2, 4], [1, 3, 2]), -1);
  assert.equal(metricValue('rmse', [1, 2, 4], [1, 3, 2]), -Math.sqrt(5 / 3));
  assert.equal(metricValue('r2', [1, 2, 3], [1, 2, 3]), 1);
  assert.ok(Math.abs(metricValue('r2', [2, 2, 2], [1, 2, 3])) < 1e-12, 'predicting the mean: R² 0');
  assert.ok(
    Math.abs(
      metricValue('log-loss', [0, 1], [0, 1], 2, [
        [0.8, 0.2],
        [0.5, 0.5],
      ]) -
        (Math.log(0.8) + Math.log(0.5)) / 2,
    ) < 1e-12,
  );
  assert.ok(Number.isFinite(metricValue('log-loss', [1], [0], 2, [[0, 1]])), 'a certain wrong answer costs a finite amount');
});

test('every metric of a task file: an exact model scores 1, the trivial predictor 0 (through the real scorer)', async () => {
  await registerTaskDir(dir);
  for (const m of ['rmse', 'mae', 'r2']) {
    const id = `exact-${m}`;
    assert.match(getPublicTask(id).brief.metric, m === 'r2' ? /R²/ : m === 'mae' ? /mean absolute error/ : /root-mean-square/);
    const exact = scorePolicy(id, linear);
    assert.ok(Math.abs(exact.normalized - 1) < 1e-6, `${id}: exact model ${exact.normalized}`);
    const a = getHiddenEvaluation(id).anchors();
    assert.ok(a.reference > a.random && /trivial: always the (mean|median) of the training pool/.test(a.how), a.how);
  }
  // The mean of the pool as a constant model is the RMSE/R² trivial predictor (each task has its own split).
  for (const id of ['exact-rmse', 'exact-r2']) {
    const ev = getHiddenEvaluation(id) as ReturnType<typeof getHiddenEvaluation> & { heldOut(): { pool: { y: number[] } } };
    const pool = ev.heldOut().pool.y;
    const mean = pool.reduce((s, v) => s + v, 0) / pool.length;
    assert.ok(Math.abs(scorePolicy(id, constant(mean)).normalized) < 1e-9, id);
  }
  for (const m of ['accuracy', 'macro-f1', 'log-loss']) {
    const s = scorePolicy(`exact-${m}`, sign);
    assert.ok(Math.abs(s.normalized - 1) < 1e-6, `exact-${m}: ${s.normalized}`);
    assert.ok(s.stderr !== null && s.stderr >= 0);
  }
  assert.match(getHiddenEvaluation('exact-log-loss').anchors().how, /class frequencies/);
});

test('anchors given in the file replace the computed ones (errors given as positive numbers)', async () => {
  await registerTaskDir(dir);
  const a = getHiddenEvaluation('given-anchors').anchors();
  assert.deepEqual([a.random, a.reference], [-4, -0.5]);
  assert.match(a.how, /last year/);
  assert.ok(Math.abs(scorePolicy('given-anchors', linear).normalized - 4 / 3.5) < 1e-6, 'RMSE 0 lies beyond the given reference');
});
