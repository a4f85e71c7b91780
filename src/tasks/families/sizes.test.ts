import test from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Rng } from '../../util/rng.js';
import { EXAMPLE_CAP_RANGE, drawExampleCap } from './catalog-task.js';
import { generateFamilyTasks } from './index.js';
import { pointsIn } from './types.js';
import type { SupervisedTaskDef } from '../supervised/define.js';

test('pointsIn and drawExampleCap stay in their ranges, rounded, and spread log-uniformly', () => {
  fc.assert(
    fc.property(fc.integer(), fc.integer({ min: 100, max: 5000 }), fc.integer({ min: 2, max: 50 }), (seed, lo, ratio) => {
      const rng = new Rng(seed);
      const hi = lo * ratio;
      const n = pointsIn(rng, [lo, hi]);
      assert.equal(n % 100, 0);
      assert.ok(n >= 100 * Math.round(lo / 100) && n <= 100 * Math.round(hi / 100), `${n} outside [${lo}, ${hi}]`);
      const cap = drawExampleCap(rng);
      assert.equal(cap % 1000, 0);
      assert.ok(cap >= EXAMPLE_CAP_RANGE[0] && cap <= EXAMPLE_CAP_RANGE[1], `${cap}`);
    }),
  );
  // Log-uniform: about half the draws fall below the range's geometric mean (uniform would put a quarter there for 400–12,000).
  const rng = new Rng(5);
  const draws = Array.from({ length: 4000 }, () => pointsIn(rng, [400, 12_000]));
  const below = draws.filter((n) => n < Math.sqrt(400 * 12_000)).length / draws.length;
  assert.ok(below > 0.45 && below < 0.55, `share below the geometric mean: ${below}`);
});

test('generated train families draw sizes over an order of magnitude and a budget cap each; the baseline asks 30% of it', () => {
  for (const family of ['synthetic', 'blobs', 'friedman']) {
    const tasks = generateFamilyTasks(family, 30, 11);
    const caps = new Set<number>();
    const points: number[] = [];
    for (const t of tasks) {
      const def = t.def as SupervisedTaskDef;
      const params = (t.madeFrom as { params: { points: number; maxExamples: number } }).params;
      assert.equal(def.maxExamples, params.maxExamples, def.id);
      assert.equal(def.baseline.budget.examples, 100 * Math.round((params.maxExamples * 0.3) / 100), def.id);
      caps.add(params.maxExamples);
      points.push(params.points);
    }
    assert.ok(caps.size > 10, `${family}: ${caps.size} distinct caps in 30 tasks`);
    assert.ok(Math.max(...points) > 5 * Math.min(...points), `${family}: sizes ${Math.min(...points)}–${Math.max(...points)}`);
  }
  // The held-out generated family keeps its fixed budget.
  for (const t of generateFamilyTasks('rings', 6, 11)) assert.equal((t.def as SupervisedTaskDef).maxExamples, 100_000);
});
