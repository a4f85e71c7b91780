import test from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { IntList, KdTree } from './kd-tree.js';

/** Points of `d` coordinates from small integers (many ties, like one-hot and count columns) or doubles. */
const points = fc.record({ d: fc.integer({ min: 1, max: 5 }), n: fc.integer({ min: 1, max: 120 }), ties: fc.boolean() }).chain(({ d, n, ties }) =>
  fc.record({
    d: fc.constant(d),
    z: fc.array(ties ? fc.integer({ min: -2, max: 2 }) : fc.double({ min: -10, max: 10, noNaN: true }), { minLength: n * d, maxLength: n * d }),
    q: fc.array(fc.double({ min: -11, max: 11, noNaN: true }), { minLength: d, maxLength: d }),
    t: fc.double({ min: 0, max: 3, noNaN: true }),
    dims: fc.subarray([...Array(d).keys()], { minLength: 1 }),
  }),
);

test('box query: every point within t of the query in each of the tree’s features is returned, once (property)', () => {
  fc.assert(
    fc.property(points, ({ d, z, q, t, dims }) => {
      const zs = Float64Array.from(z);
      const n = zs.length / d;
      const tree = new KdTree(zs, d, n, dims);
      const out = new IntList();
      tree.box(Float64Array.from(q), 0, t, out);
      const got = [...out.data.subarray(0, out.length)];
      assert.equal(new Set(got).size, got.length, 'no point twice');
      for (let u = 0; u < n; u++) {
        const inside = dims.every((j) => Math.abs(zs[u * d + j] - q[j]) <= t);
        if (inside) assert.ok(got.includes(u), `point ${u} missing`);
      }
    }),
    { seed: 2103, numRuns: 400 },
  );
});

test('nearest: the smallest L∞ distance over the tree’s features, itself left out (property)', () => {
  fc.assert(
    fc.property(points, ({ d, z, dims }) => {
      const zs = Float64Array.from(z);
      const n = zs.length / d;
      const tree = new KdTree(zs, d, n, dims);
      const linf = (a: number, b: number): number => Math.max(...dims.map((j) => Math.abs(zs[a * d + j] - zs[b * d + j])));
      for (let s = 0; s < Math.min(n, 10); s++) {
        const brute = Math.min(Infinity, ...Array.from({ length: n }, (_, u) => (u === s ? Infinity : linf(s, u))));
        assert.equal(
          tree.nearest(zs, s * d, s, Infinity, (u) => linf(s, u)),
          brute,
        );
      }
    }),
    { seed: 2104, numRuns: 300 },
  );
});
