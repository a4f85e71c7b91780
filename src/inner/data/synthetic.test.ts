import test from 'node:test';
import assert from 'node:assert/strict';
import { checkerboard, moons, twoSpirals } from './synthetic.js';
import { classCounts } from './stats.js';
import type { Dataset } from './types.js';

const generators: [string, (n: number, seed: number) => Dataset][] = [
  ['twoSpirals', (n, seed) => twoSpirals(n, 0.05, seed)],
  ['moons', (n, seed) => moons(n, 0.1, seed)],
  ['checkerboard', (n, seed) => checkerboard(n, 4, seed)],
];

for (const [name, gen] of generators) {
  test(`${name}: right shape, balanced, finite`, () => {
    for (const n of [0, 1, 7, 200]) {
      const d = gen(n, 3);
      assert.equal(d.kind, 'classification');
      assert.deepEqual(d.features, ['x1', 'x2']);
      assert.equal(d.classes?.length, 2);
      assert.equal(d.x.length, n);
      assert.equal(d.y.length, n);
      for (const row of d.x) {
        assert.equal(row.length, 2);
        assert.ok(row.every(Number.isFinite));
      }
      assert.deepEqual(classCounts(d), [Math.ceil(n / 2), Math.floor(n / 2)]);
      for (const f of ['x1', 'x2', d.target]) assert.ok(d.descriptions[f]);
    }
  });

  test(`${name}: deterministic per seed, different across seeds`, () => {
    assert.deepEqual(gen(100, 42), gen(100, 42));
    assert.notDeepEqual(gen(100, 42).x, gen(100, 43).x);
  });
}

test('noise-free moons lie exactly on their half circles', () => {
  const d = moons(200, 0, 1);
  d.x.forEach(([a, b], i) => {
    const [cx, cy] = d.y[i] === 0 ? [0, 0] : [1, 0.5];
    assert.ok(Math.abs(Math.hypot(a - cx, b - cy) - 1) < 1e-12);
    assert.ok(d.y[i] === 0 ? b >= 0 : b <= 0.5);
  });
});

test('noise-free spirals: radius t at angle 3πt, the second arm turned by π', () => {
  const d = twoSpirals(400, 0, 1);
  d.x.forEach(([a, b], i) => {
    const r = Math.hypot(a, b);
    assert.ok(r <= 1 + 1e-12);
    if (r < 1e-9) return;
    const expected = 3 * Math.PI * r + d.y[i] * Math.PI;
    const diff = Math.atan2(b, a) - expected;
    const wrapped = diff - 2 * Math.PI * Math.round(diff / (2 * Math.PI));
    assert.ok(Math.abs(wrapped) < 1e-9, `point ${i} off its arm by ${wrapped}`);
  });
});

test('checkerboard labels follow the cell colour and stay inside [-1, 1]^2', () => {
  for (const cells of [2, 3, 5]) {
    const d = checkerboard(500, cells, 9);
    d.x.forEach(([a, b], i) => {
      assert.ok(a >= -1 && a < 1 && b >= -1 && b < 1);
      const colour = (Math.floor(((a + 1) / 2) * cells) + Math.floor(((b + 1) / 2) * cells)) % 2;
      assert.equal(colour, d.y[i]);
    });
  }
  assert.throws(() => checkerboard(10, 1, 0), /cells/);
});

test('bad sizes and noise are refused with the parameter named', () => {
  assert.throws(() => moons(-1, 0.1, 0), /n must be/);
  assert.throws(() => twoSpirals(10.5, 0.1, 0), /n must be/);
  assert.throws(() => moons(10, -0.1, 0), /noise/);
});
