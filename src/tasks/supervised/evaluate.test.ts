import test from 'node:test';
import assert from 'node:assert/strict';
import { SUPERVISED_TASKS } from './tasks.js';
import { getSupervisedEvaluation } from '../hidden.js';
import { classCounts } from '../../inner/data/index.js';

const key = (row: number[]): string => row.map((v) => v.toFixed(9)).join(',');

for (const def of SUPERVISED_TASKS) {
  test(`${def.id}: no row of the hidden test set reaches any source a job can receive`, () => {
    const ev = getSupervisedEvaluation(def.id);
    const { pool, test: held } = ev.heldOut();
    assert.ok(held.x.length > 0 && pool.x.length > 0);
    const poolKeys = new Set(pool.x.map(key));
    // Rows whose values also occur in the pool are genuine duplicates of the raw data, not leaks.
    const testOnly = new Set(held.x.map(key).filter((k) => !poolKeys.has(k)));
    assert.ok(testOnly.size > held.x.length * 0.9);
    const data = ev.jobData(def.sources.map((s) => s.id));
    for (const [id, src] of Object.entries(data.sources)) {
      for (const row of src.x) assert.ok(!testOnly.has(key(row)), `${def.id}/${id} contains a test row`);
    }
  });

  test(`${def.id}: each source is what its catalog entry says`, () => {
    const ev = getSupervisedEvaluation(def.id);
    const { pool } = ev.heldOut();
    const poolKeys = new Set(pool.x.map(key));
    const clean = ev.source('clean-small');
    const cleanSize = def.sources.find((s) => s.id === 'clean-small')!.examples;
    assert.equal(clean.x.length, cleanSize);
    for (const r of clean.x) assert.ok(poolKeys.has(key(r)), 'the clean sample is drawn from the pool');

    const noisy = ev.source('noisy-large');
    assert.equal(noisy.x.length, pool.x.length, 'the noisy set holds every pool example');
    const changed = noisy.y.filter((y, i) => y !== pool.y[i]).length;
    if (pool.kind === 'classification') assert.ok(changed > pool.y.length * 0.2, `${changed} of ${pool.y.length} labels changed`);
    else assert.ok(changed > pool.y.length * 0.9, 'regression targets carry noise');

    const shifted = ev.source('shifted');
    assert.match(def.sources.find((s) => s.id === 'shifted')!.description, /lowest 40%/);
    const band = shifted.history?.at(-1)?.match(/covariateShift\(feature=(\w+), band=\[0, 0\.4\] = \[([-\d.e]+), ([-\d.e]+)\]/);
    assert.ok(band, `shifted history: ${shifted.history?.join('; ')}`);
    const j = pool.features.indexOf(band[1]);
    assert.ok(j >= 0);
    for (const r of shifted.x) assert.ok(r[j] >= Number(band[2]) && r[j] <= Number(band[3]), 'every shifted row lies in the band');
    for (const r of shifted.x) assert.ok(poolKeys.has(key(r)));
    assert.ok(shifted.x.length < pool.x.length * 0.5, 'the shifted set covers a band of the pool');

    const dup = ev.source('duplicated');
    assert.ok(new Set(dup.x.map(key)).size < dup.x.length, 'the merged export repeats records');

    const aug = ev.source('augmented');
    assert.equal(aug.x.length, cleanSize * 4, 'the checked sample plus three jittered copies');
    assert.deepEqual(aug.y.slice(0, cleanSize), clean.y, 'augmentation keeps the clean labels');

    const imb = def.sources.find((s) => s.id === 'imbalanced');
    if (imb) {
      const counts = classCounts(ev.source('imbalanced'));
      const full = classCounts(pool);
      const keep = imb.description.match(/(\d+)%/g)!.map((p) => Number(p.slice(0, -1)) / 100);
      counts.forEach((c, k) => assert.equal(c, Math.round(full[k] * keep[k])));
    }
  });
}
