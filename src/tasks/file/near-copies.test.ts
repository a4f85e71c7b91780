import test from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DistinctRows, NearCopyIndex, featureSets } from './near-copies.js';

/** A small seeded generator (mulberry32) for tables inside a property. */
function generator(seed: number): { uniform: () => number; normal: () => number } {
  let s = seed | 0;
  const uniform = (): number => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const normal = (): number => Math.sqrt(-2 * Math.log(uniform() + 1e-12)) * Math.cos(2 * Math.PI * uniform());
  return { uniform, normal };
}

/** The shape of a random table: continuous features (correlated through a shared factor, each with its own mean and scale), a one-hot group, a small-integer column. */
interface Shape {
  rows: number;
  continuous: number;
  oneHot: number;
  integer: boolean;
  seed: number;
}

const shapes = fc.record({
  rows: fc.integer({ min: 40, max: 300 }),
  continuous: fc.integer({ min: 2, max: 6 }),
  oneHot: fc.constantFrom(0, 0, 3, 4),
  integer: fc.boolean(),
  seed: fc.integer(),
});

/** Rows of a table of the shape; `draw` picks another sample of the same distribution. */
function table(shape: Shape, draw = 0): number[][] {
  const g = generator(shape.seed);
  const means = Array.from({ length: shape.continuous }, () => (g.uniform() - 0.5) * 2000);
  const scales = Array.from({ length: shape.continuous }, () => 10 ** (3 * g.uniform())); // std 1 to 1000
  const rows = generator(shape.seed ^ (0x5bd1e995 * (draw + 1)));
  return Array.from({ length: shape.rows }, () => {
    const factor = rows.normal();
    const r = means.map((m, j) => m + scales[j] * (0.6 * factor + 0.8 * rows.normal()));
    const level = Math.floor(rows.uniform() * shape.oneHot);
    for (let l = 0; l < shape.oneHot; l++) r.push(l === level ? 1 : 0);
    if (shape.integer) r.push(Math.floor(rows.uniform() * 6));
    return r;
  });
}

const perturbations = fc.oneof(
  fc.record({ kind: fc.constant('round' as const), decimals: fc.integer({ min: 2, max: 6 }) }),
  fc.record({ kind: fc.constant('noise' as const), size: fc.double({ min: 0, max: 1e-2, noNaN: true }) }), // up to a hundredth of a std per feature
  fc.record({
    kind: fc.constant('scale' as const),
    factor: fc.oneof(fc.double({ min: 2, max: 100, noNaN: true }), fc.double({ min: -100, max: -0.01, noNaN: true })),
  }),
);
type Perturbation = typeof perturbations extends fc.Arbitrary<infer T> ? T : never;

/** An adversary's copy of `main`: perturbed, rows shuffled and some duplicated; `from[i]` is the main row that copy row i came from. */
function copyOf(main: number[][], p: Perturbation, std: Float64Array, seed: number): { rows: number[][]; from: number[] } {
  const g = generator(seed);
  const from = main.map((_, i) => i);
  for (let k = 0; k < main.length / 5; k++) from.push(Math.floor(g.uniform() * main.length));
  for (let i = from.length - 1; i > 0; i--) {
    const j = Math.floor(g.uniform() * (i + 1));
    [from[i], from[j]] = [from[j], from[i]];
  }
  const column = Math.floor(g.uniform() * main[0].length);
  const rows = from.map((i) =>
    main[i].map((v, j) => {
      if (p.kind === 'round') return Number(v.toFixed(p.decimals));
      if (p.kind === 'noise') return v + (2 * g.uniform() - 1) * p.size * std[j];
      return j === column ? v * p.factor : v;
    }),
  );
  return { rows, from };
}

test('every row of a perturbed copy of the main file is found as a near-copy of its own row (property, 150 tables)', () => {
  let scaled = 0;
  fc.assert(
    fc.property(shapes, perturbations, fc.integer(), (shape, p, seed) => {
      const main = table(shape);
      const distinct = new DistinctRows(main);
      const index = new NearCopyIndex(distinct);
      // A rescaled column is caught by the rule that leaves features out, where the table has one.
      if (p.kind === 'scale' && !index.rule.trimmed) return;
      if (p.kind === 'scale') scaled++;
      const copy = copyOf(main, p, index.rule.std, seed);
      const near = index.find(copy.rows);
      copy.from.forEach((i, k) => {
        const m = near.matches[k];
        assert.ok(
          m === null || m.includes(distinct.of[i]),
          `copy row ${k} (${p.kind}) of main row ${i} not found: ${JSON.stringify(index.rule.trimmed)}, tolerance ${index.rule.tolerance}`,
        );
      });
    }),
    { seed: 2101, numRuns: 150 },
  );
  assert.ok(scaled >= 20, `${scaled} tables with a rescaled column were checked`);
});

test('an honest source (other rows of the same distribution) is rarely near a main row (property, 100 tables)', () => {
  let near = 0;
  let rows = 0;
  fc.assert(
    fc.property(shapes, (shape) => {
      const main = table(shape);
      const index = new NearCopyIndex(new DistinctRows(main));
      const other = table(shape, 1);
      const copies = index.find(other).copies;
      near += copies;
      rows += other.length;
      // Against every main row; the loader drops only those near a held-out row (30 % by default).
      assert.ok(
        copies <= 0.2 * other.length,
        `${copies} of ${other.length} honest rows near a main row (${JSON.stringify(shape)}, ${JSON.stringify(index.rule)})`,
      );
    }),
    { seed: 2102, numRuns: 100 },
  );
  assert.ok(near / rows < 0.06, `${near} of ${rows} honest rows near a main row`);
});

test('one-hot and duplicated rows: exact duplicates do not shrink the tolerance; jitter on one-hot columns is caught; no trimmed rule on them', () => {
  // 6 levels one-hot, each row repeated: 6 distinct rows.
  const main = Array.from({ length: 120 }, (_, i) => Array.from({ length: 6 }, (_, l) => (l === i % 6 ? 1 : 0)));
  const index = new NearCopyIndex(new DistinctRows(main));
  assert.ok(index.rule.tolerance > 0.3, `tolerance ${index.rule.tolerance}`);
  const jittered = main.map((r) => r.map((v) => v + 1e-3));
  assert.equal(index.find(jittered).copies, 120);
  // Three binary columns and two continuous ones: leaving one out makes twins of distinct rows.
  const g = generator(5);
  const mixed = Array.from({ length: 200 }, () => [g.normal(), g.normal(), g.uniform() < 0.5 ? 1 : 0, g.uniform() < 0.5 ? 1 : 0, g.uniform() < 0.5 ? 1 : 0]);
  assert.equal(new NearCopyIndex(new DistinctRows(mixed)).rule.trimmed, null);
});

test('feature sets leave out any `ignore` features: for every choice of them, some set avoids them all', () => {
  for (const d of [3, 4, 5, 8, 10, 17]) {
    for (const ignore of [1, 2, 3, Math.floor(d / 4)].filter((k) => k >= 1 && k < d)) {
      const sets = featureSets([...Array(d).keys()], ignore);
      const choose = (from: number[], k: number): number[][] =>
        k === 0 ? [[]] : from.flatMap((f, i) => choose(from.slice(i + 1), k - 1).map((c) => [f, ...c]));
      for (const out of choose([...Array(d).keys()], ignore)) {
        assert.ok(
          sets.some((s) => s.length > 0 && s.every((f) => !out.includes(f))),
          `d=${d} ignore=${ignore}: no set avoids ${out}`,
        );
      }
    }
  }
});

test('distinct rows: duplicates share one entry with their count, -0 equals 0', () => {
  const d = new DistinctRows([
    [1, 2],
    [0, 3],
    [1, 2],
    [-0, 3],
  ]);
  assert.deepEqual(d.rows, [
    [1, 2],
    [0, 3],
  ]);
  assert.deepEqual([...d.of], [0, 1, 0, 1]);
  assert.deepEqual(d.count, [2, 2]);
  assert.equal(d.find([1, 2]), 0);
  assert.equal(d.find([1, 2.5]), -1);
});

test('a wide table (40 features, past the scan threshold): jittered copies are found, other rows are not', () => {
  const g = generator(40);
  const draw = (n: number): number[][] => Array.from({ length: n }, () => Array.from({ length: 40 }, (_, j) => 10 * j + g.normal()));
  const main = draw(400);
  const distinct = new DistinctRows(main);
  const index = new NearCopyIndex(distinct);
  const near = index.find(main.map((r) => r.map((v) => v + 1e-3 * Math.sin(v))));
  near.matches.forEach((m, i) => assert.ok(m === null || m.includes(i), `row ${i}`));
  assert.equal(near.copies, 400);
  assert.ok(index.find(draw(400)).copies <= 8);
});

test('the trees find exactly what a scan of every main row finds (property, 100 tables and copies)', () => {
  fc.assert(
    fc.property(shapes, perturbations, fc.integer(), (shape, p, seed) => {
      const main = table(shape);
      const index = new NearCopyIndex(new DistinctRows(main));
      const rows = [...copyOf(main, p, index.rule.std, seed).rows, ...table(shape, 1)];
      const sorted = (n: ReturnType<NearCopyIndex['find']>): (number[] | null)[] => n.matches.map((m) => (m ? [...m].sort((a, b) => a - b) : null));
      assert.deepEqual(sorted(index.find(rows)), sorted(index.find(rows, true)));
    }),
    { seed: 2105, numRuns: 100 },
  );
});
