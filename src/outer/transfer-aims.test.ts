import test from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../util/rng.js';
import { AIM_SEARCHES, LEVEL_MARGIN, aimsByFamily, aimsOf } from './transfer-aims.js';
import type { HeldOutRow } from './transfer-summary.js';

/** A row where every method scores `v` unless `patch` says otherwise. */
function row(task: string, v: number, patch: Partial<HeldOutRow> = {}): HeldOutRow {
  return {
    task,
    zeroShot: v,
    controllerBest4: v,
    controllerBest16: v,
    controllerAdaptBest16: null,
    priorZeroShot: v,
    randomBest4: v,
    randomBest16: v,
    searchBest4: null,
    searchBest16: null,
    optunaTpeBest4: null,
    optunaTpeBest16: null,
    optunaCmaesBest4: null,
    optunaCmaesBest16: null,
    optunaTpeSeededBest4: v,
    optunaTpeSeededBest16: v,
    optunaCmaesSeededBest4: v,
    optunaCmaesSeededBest16: v,
    baseline: v,
    ...patch,
  };
}

test('each aim follows its paired interval: level allows the margin, above needs the interval over 0 (property over random task sets)', () => {
  const rng = new Rng(11);
  for (let trial = 0; trial < 200; trial++) {
    const n = 2 + rng.int(30);
    const shift = rng.uniform(-0.1, 0.1);
    const noise = rng.uniform(0, 0.1);
    const rows = Array.from({ length: n }, (_, i) => {
      const v = rng.uniform(0, 1);
      const zs = v + shift + rng.normal() * noise;
      return row(`t${i}`, v, { zeroShot: zs, controllerBest4: zs + 0.02 });
    });
    const a = aimsOf('all', rows);
    for (const k of AIM_SEARCHES) {
      const d = a.zeroShot[k]!;
      assert.equal(d.n, n);
      assert.ok(Math.abs(d.mean - rows.reduce((s, r) => s + (r.zeroShot! - r[k]!), 0) / n) < 1e-12);
    }
    const lo = a.zeroShot.randomBest16!.lo!;
    assert.equal(
      a.zeroShotLevelWithBest16,
      AIM_SEARCHES.every((k) => a.zeroShot[k]!.lo! >= LEVEL_MARGIN),
    );
    assert.equal(a.zeroShotAboveBaseline, a.zeroShot.baseline!.lo! > 0);
    assert.equal(a.zeroShotAbovePrior, a.zeroShot.priorZeroShot!.lo! > 0);
    // Every search scores the same here, so one interval decides the level aims; the best of 4 is 0.02 higher.
    assert.equal(a.zeroShotLevelWithBest16, lo >= LEVEL_MARGIN);
    assert.equal(a.best4LevelWithBest16, lo + 0.02 >= LEVEL_MARGIN - 1e-12);
  }
});

test('an aim whose rows did not run, or with one task, is not judged; a row that ran on some tasks is judged on those', () => {
  const one = aimsOf('p', [row('a', 0.5, { zeroShot: 0.9 })]);
  assert.equal(one.zeroShotAboveBaseline, null, 'one task: no interval');
  const noPrior = aimsOf('p', [row('a', 0.5, { priorZeroShot: null }), row('b', 0.4, { priorZeroShot: null })]);
  assert.equal(noPrior.zeroShotAbovePrior, null);
  assert.equal(noPrior.zeroShot.priorZeroShot, null);
  // Optuna's seeded rows missing: the level aim is judged on random search alone.
  const randomOnly = [0.2, 0.5, 0.7].map((v, i) =>
    row(`r${i}`, v, { optunaTpeSeededBest16: null, optunaCmaesSeededBest16: null, zeroShot: v + 0.1 + i * 0.01 }),
  );
  const a = aimsOf('p', randomOnly);
  assert.equal(a.zeroShot.optunaTpeSeededBest16, null);
  assert.equal(a.zeroShotLevelWithBest16, true);
  assert.equal(a.zeroShotAboveBaseline, true);
  // A zero-shot job clearly below random search's best of 16 on every task fails the level aim.
  const below = [0.2, 0.5, 0.7].map((v, i) => row(`b${i}`, v, { zeroShot: v - 0.1 - i * 0.01 }));
  assert.equal(aimsOf('p', below).zeroShotLevelWithBest16, false);
});

test('aims per family and on all tasks, last', () => {
  const rows = [row('x-fam-1-0', 0.5), row('y', 0.5)];
  const aims = aimsByFamily(rows);
  assert.deepEqual(
    aims.map((a) => [a.family, a.tasks]),
    [
      ['x-fam-1-0', 1],
      ['y', 1],
      ['all', 2],
    ],
  );
});
