import test from 'node:test';
import assert from 'node:assert/strict';
import { Rng, hashString, mixSeed } from './rng.js';

const draw = (r: Rng, n: number, f: (r: Rng) => number): number[] => Array.from({ length: n }, () => f(r));

test('same seed gives the same stream; different seeds differ', () => {
  for (const f of [(r: Rng) => r.uint32(), (r: Rng) => r.next(), (r: Rng) => r.normal(), (r: Rng) => r.int(10)]) {
    assert.deepEqual(draw(new Rng(123), 100, f), draw(new Rng(123), 100, f));
  }
  assert.notDeepEqual(
    draw(new Rng(1), 20, (r) => r.uint32()),
    draw(new Rng(2), 20, (r) => r.uint32()),
  );
  assert.notDeepEqual(
    draw(new Rng(0), 20, (r) => r.uint32()),
    draw(new Rng(0x80000000), 20, (r) => r.uint32()),
  );
  // seeds are taken modulo 2^32
  assert.deepEqual(
    draw(new Rng(-1), 10, (r) => r.uint32()),
    draw(new Rng(0xffffffff), 10, (r) => r.uint32()),
  );
});

test('first outputs of nearby seeds look unrelated', () => {
  const firsts = Array.from({ length: 1000 }, (_, s) => new Rng(s).uint32());
  assert.equal(new Set(firsts).size, 1000);
  const mean = firsts.reduce((a, b) => a + b, 0) / 1000 / 2 ** 32;
  assert.ok(Math.abs(mean - 0.5) < 0.05, `mean ${mean}`);
});

test('uint32 is an unsigned 32-bit integer', () => {
  const r = new Rng(5);
  for (let i = 0; i < 10_000; i++) {
    const v = r.uint32();
    assert.ok(Number.isInteger(v) && v >= 0 && v < 2 ** 32, String(v));
  }
});

test('next is uniform in [0, 1)', () => {
  const r = new Rng(7);
  const n = 20_000;
  const bins = new Array(10).fill(0);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const v = r.next();
    assert.ok(v >= 0 && v < 1, String(v));
    sum += v;
    bins[Math.floor(v * 10)]++;
  }
  assert.ok(Math.abs(sum / n - 0.5) < 0.01, `mean ${sum / n}`);
  for (const b of bins) assert.ok(Math.abs(b - n / 10) < 300, `bins ${bins}`); // ~ 7 sd
});

test('uniform(lo, hi) stays in [lo, hi)', () => {
  const r = new Rng(9);
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < 5000; i++) {
    const v = r.uniform(-0.05, 0.05);
    assert.ok(v >= -0.05 && v < 0.05);
    min = Math.min(min, v);
    max = Math.max(max, v);
  }
  assert.ok(min < -0.049 && max > 0.049);
});

test('normal has mean ≈ 0 and sd ≈ 1 over 20k samples', () => {
  const r = new Rng(11);
  const xs = draw(r, 20_000, (g) => g.normal());
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length);
  assert.ok(Math.abs(mean) < 0.05, `mean ${mean}`);
  assert.ok(Math.abs(sd - 1) < 0.05, `sd ${sd}`);
  assert.ok(xs.every(Number.isFinite));
  const within1 = xs.filter((x) => Math.abs(x) < 1).length / xs.length;
  assert.ok(Math.abs(within1 - 0.6827) < 0.02, `P(|x|<1) ${within1}`);
  // consecutive values (the Box–Muller pair) are uncorrelated
  let c = 0;
  for (let i = 0; i + 1 < xs.length; i += 2) c += xs[i] * xs[i + 1];
  assert.ok(Math.abs(c / (xs.length / 2)) < 0.05, `pair correlation ${c / (xs.length / 2)}`);
});

test('categorical frequencies follow the weights', () => {
  const r = new Rng(13);
  const weights = [1, 0, 3, 6];
  const n = 20_000;
  const counts = [0, 0, 0, 0];
  for (let i = 0; i < n; i++) counts[r.categorical(weights)]++;
  assert.equal(counts[1], 0, 'zero weight is never drawn');
  for (const i of [0, 2, 3]) assert.ok(Math.abs(counts[i] / n - weights[i] / 10) < 0.02, `counts ${counts}`);
  // unnormalised weights, typed arrays, and a single choice
  const f = new Rng(1);
  const c2 = [0, 0];
  for (let i = 0; i < 5000; i++) c2[f.categorical(Float64Array.from([0.002, 0.006]))]++;
  assert.ok(Math.abs(c2[1] / 5000 - 0.75) < 0.03, `counts ${c2}`);
  assert.equal(new Rng(2).categorical([5]), 0);
});

test('int(n) is an integer in [0, n) and covers the range', () => {
  const r = new Rng(17);
  for (const n of [1, 2, 7, 100]) {
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) {
      const v = r.int(n);
      assert.ok(Number.isInteger(v) && v >= 0 && v < n, `${v} for n=${n}`);
      seen.add(v);
    }
    assert.equal(seen.size, n, `n=${n}`);
  }
});

test('fork gives a deterministic generator with a different stream', () => {
  const a = new Rng(21);
  const b = new Rng(21);
  const fa = a.fork();
  const fb = b.fork();
  assert.deepEqual(
    draw(fa, 10, (r) => r.uint32()),
    draw(fb, 10, (r) => r.uint32()),
  );
  assert.deepEqual(
    draw(a, 10, (r) => r.uint32()),
    draw(b, 10, (r) => r.uint32()),
  );
  const p = new Rng(21);
  const child = p.fork();
  assert.notDeepEqual(
    draw(p, 10, (r) => r.uint32()),
    draw(child, 10, (r) => r.uint32()),
  );
});

test('mixSeed is deterministic, a 32-bit unsigned integer, and differs for different inputs', () => {
  assert.equal(mixSeed(1, 2, 3), mixSeed(1, 2, 3));
  const seen = new Set<number>();
  for (let a = 0; a < 32; a++) {
    for (let b = 0; b < 32; b++) {
      const h = mixSeed(a, b);
      assert.ok(Number.isInteger(h) && h >= 0 && h < 2 ** 32);
      seen.add(h);
    }
  }
  assert.equal(seen.size, 32 * 32, 'no collisions on a 32 × 32 grid');
  assert.notEqual(mixSeed(1, 2), mixSeed(2, 1), 'order matters');
  assert.notEqual(mixSeed(0), mixSeed(0, 0), 'length matters');
  assert.notEqual(mixSeed(5), mixSeed(5, 0x5eed));
  assert.notEqual(mixSeed(7, 0, 0x5eed), mixSeed(7, 0));
  assert.notEqual(mixSeed(), mixSeed(0));
});

test('shuffle permutes in place as permutation orders 0..n-1, for arrays and typed arrays', () => {
  const order = new Rng(11).permutation(50);
  assert.deepEqual(
    [...order].sort((a, b) => a - b),
    Array.from({ length: 50 }, (_, i) => i),
  );
  const letters = Array.from({ length: 50 }, (_, i) => `x${i}`);
  const shuffled = new Rng(11).shuffle([...letters]);
  assert.deepEqual(
    shuffled,
    order.map((i) => letters[i]),
  );
  const typed = new Rng(11).shuffle(Int32Array.from({ length: 50 }, (_, i) => i));
  assert.deepEqual([...typed], order);
});

test('hashString is 32-bit FNV-1a: the published test values, so a draw or a feature bucket is the same everywhere', () => {
  assert.equal(hashString(''), 0x811c9dc5);
  assert.equal(hashString('a'), 0xe40c292c);
  assert.equal(hashString('foobar'), 0xbf9cf968);
});
