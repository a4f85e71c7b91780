import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../util/rng.js';
import { instantiateKernels } from './kernels.js';

const memory = new WebAssembly.Memory({ initial: 16 });
const k = instantiateKernels(memory);
const f32 = new Float32Array(memory.buffer);
// Byte offsets of four 64 KiB regions: A, B, bias, C.
const [A, B, BIAS, C] = [0, 1, 2, 3].map((i) => i * 65536);

test('gemm: every mode, plain and transposed A, odd row counts, widths of 4 and 8 multiples', () => {
  const rng = new Rng(1);
  for (const [P, Q, M] of [
    [7, 5, 12],
    [128, 64, 64],
    [3, 4, 8],
    [9, 13, 4],
    [1, 1, 4],
  ]) {
    for (const mode of [0, 1, 2]) {
      for (const transposed of [false, true]) {
        for (let i = 0; i < P * Q; i++) f32[A / 4 + i] = rng.normal();
        for (let i = 0; i < Q * M; i++) f32[B / 4 + i] = rng.normal();
        for (let j = 0; j < M; j++) f32[BIAS / 4 + j] = rng.normal();
        for (let i = 0; i < P * M; i++) f32[C / 4 + i] = rng.normal();
        const [sap, saq] = transposed ? [1, P] : [Q, 1];
        const want = new Float64Array(P * M);
        for (let p = 0; p < P; p++) {
          for (let j = 0; j < M; j++) {
            let s = mode === 0 ? 0 : mode === 1 ? f32[BIAS / 4 + j] : f32[C / 4 + p * M + j];
            for (let q = 0; q < Q; q++) s += f32[A / 4 + p * sap + q * saq] * f32[B / 4 + q * M + j];
            want[p * M + j] = s;
          }
        }
        k.gemm(C, A, B, BIAS, P, Q, M, sap, saq, mode);
        let err = 0;
        for (let i = 0; i < P * M; i++) err = Math.max(err, Math.abs(want[i] - f32[C / 4 + i]) / (1 + Math.abs(want[i])));
        assert.ok(err < 1e-5, `P ${P} Q ${Q} M ${M} mode ${mode} transposed ${transposed}: ${err}`);
      }
    }
  }
});

test('tanh is within 3e-7 relative of Math.tanh from 1e-30 to saturation, odd and NaN-preserving', () => {
  const xs: number[] = [0, 1e-30, -1e-30, 1e-8, -3e-5, 0.1, 0.3465, 0.35, -0.7, 1, 2.5, -4, 8.9, 9, 9.1, 20, -50];
  for (let i = 0; i < 4000; i++) xs.push((i - 2000) / 200);
  while (xs.length % 4) xs.push(0);
  f32.set(xs, 0);
  k.tanh(0, xs.length);
  for (let i = 0; i < xs.length; i++) {
    const x = Math.fround(xs[i]);
    const want = Math.tanh(x);
    const rel = want === 0 ? Math.abs(f32[i]) : Math.abs(f32[i] - want) / Math.abs(want);
    assert.ok(rel < 3e-7, `tanh(${x}) = ${f32[i]}, want ${want}`);
  }
  f32.set([NaN, 1, -1, 0], 0);
  k.tanh(0, 4);
  assert.ok(Number.isNaN(f32[0]));
});

test('relu, derivatives, column sums and sums of squares', () => {
  f32.set([-2, -0.5, 0, 0.5, 1, 2, -3, 4], 0);
  k.relu(0, 8);
  assert.deepEqual([...f32.subarray(0, 8)], [0, 0, 0, 0.5, 1, 2, 0, 4]);
  f32.set([1, 1, 1, 1, 1, 1, 1, 1], 64);
  k.reluGrad(256, 0, 8);
  assert.deepEqual([...f32.subarray(64, 72)], [0, 0, 0, 1, 1, 1, 0, 1]);
  f32.set([0.5, -0.5, 0, 0.9], 0);
  f32.set([2, 2, 2, 2], 64);
  k.tanhGrad(256, 0, 4);
  assert.deepEqual([...f32.subarray(64, 68)], [1.5, 1.5, 2, Math.fround(2 * Math.fround(1 - Math.fround(Math.fround(0.9) * Math.fround(0.9))))]);
  // 3 rows × 4 columns
  f32.set([1, 2, 3, 4, 10, 20, 30, 40, 100, 200, 300, 400], 0);
  k.colsum(256, 0, 3, 4);
  assert.deepEqual([...f32.subarray(64, 68)], [111, 222, 333, 444]);
  for (let i = 0; i < 64; i++) f32[i] = i;
  assert.equal(k.sumsq(0, 64), (63 * 64 * 127) / 6);
});

test('transpose copies a [rows × cols] matrix into its transpose bit for bit, at any sizes', () => {
  for (const [rows, cols] of [
    [3, 5],
    [64, 4],
    [1, 7],
    [6, 1],
  ]) {
    const bits = new Uint32Array(f32.buffer, 0, rows * cols);
    for (let i = 0; i < bits.length; i++) bits[i] = (0x7fc00001 + i * 2654435761) >>> 0; // NaN payloads and arbitrary patterns
    k.transpose(4096, 0, rows, cols);
    const out = new Uint32Array(f32.buffer, 4096, rows * cols);
    for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) assert.equal(out[j * rows + i], bits[i * cols + j], `[${i}][${j}] of ${rows}×${cols}`);
  }
});
