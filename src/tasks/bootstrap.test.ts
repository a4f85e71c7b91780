import test from 'node:test';
import assert from 'node:assert/strict';
import { bootstrapStderr, meanStderr } from './bootstrap.js';
import { metricWithStderr } from './supervised/evaluate.js';

test('the bootstrap standard error of a mean is near sd/sqrt(n) and the same on every call', () => {
  const coin = Array.from({ length: 100 }, (_, i) => i % 2);
  const se = meanStderr(coin)!;
  assert.ok(se > 0.04 && se < 0.06, `bootstrap ${se}, analytic 0.05`);
  assert.equal(meanStderr(coin), se);
  assert.equal(meanStderr([1, 1, 1, 1]), 0);
  assert.equal(meanStderr([3]), null);
});

test('a metric that is not a mean (macro-F1, RMSE) gets its standard error by recomputing it on each resample', () => {
  const truth = Array.from({ length: 60 }, (_, i) => i % 3);
  const pred = truth.map((t, i) => (i % 5 === 0 ? (t + 1) % 3 : t));
  const f1 = metricWithStderr('macro-f1', pred, truth, 3);
  assert.ok(f1.raw > 0.7 && f1.raw < 0.9);
  assert.ok(f1.stderr !== null && f1.stderr > 0.01 && f1.stderr < 0.15, `macro-F1 stderr ${f1.stderr}`);
  const rmse = metricWithStderr(
    'rmse',
    truth.map((t) => t + 0.5),
    truth,
  );
  assert.equal(rmse.raw, -0.5);
  assert.equal(rmse.stderr, 0, 'every row has the same error');
  assert.equal(
    bootstrapStderr(1, () => 1),
    null,
  );
});
