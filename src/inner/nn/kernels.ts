/**
 * The WebAssembly SIMD kernels of the fused small-MLP engine, written with `asm.ts`: a blocked
 * single-precision matrix product (forward pass, input gradients, weight gradients), tanh/relu
 * and their derivatives, column sums (bias gradients), the sum of squares (gradient norm) and
 * Adam, and a transposition (copying bits). All pointers are byte offsets into the instance's memory; every vector length and row
 * width is a multiple of 4 floats (the engine pads layers to that).
 *
 * Why WebAssembly rather than plain typed-array JavaScript: the blocked SIMD product below runs
 * several times faster than the best plain-JS product (Float64Array, 2 × 2 register blocking), and
 * the SIMD tanh several times faster than Math.tanh, to single precision (kernels.test.ts bounds it).
 */
import { F32, Fn, I32, V128, assemble } from './asm.js';

/** The exports of one kernel instance. */
export interface Kernels {
  /**
   * C[P×M] = A·B (mode 0), A·B + bias (mode 1) or C + A·B (mode 2), with A[p][q] at
   * `a + 4·(p·sap + q·saq)`, B row-major [Q×M], C row-major [P×M]; M a multiple of 4.
   */
  gemm(c: number, a: number, b: number, bias: number, P: number, Q: number, M: number, sap: number, saq: number, mode: number): void;
  /** x ← tanh(x) over n floats. */
  tanh(x: number, n: number): void;
  /** x ← max(x, 0) over n floats. */
  relu(x: number, n: number): void;
  /** dz ← dz · (1 − h²) over n floats (h = tanh output). */
  tanhGrad(dz: number, h: number, n: number): void;
  /** dz ← h > 0 ? dz : 0 over n floats (h = relu output). */
  reluGrad(dz: number, h: number, n: number): void;
  /** dst[j] = Σ_r src[r·M + j] for j < M. */
  colsum(dst: number, src: number, rows: number, M: number): void;
  /** Σ x² over n floats. */
  sumsq(x: number, n: number): number;
  /** dst[j·rows + i] = src[i·cols + j]: the transpose of a row-major [rows × cols] matrix, bit for bit (any sizes). */
  transpose(dst: number, src: number, rows: number, cols: number): void;
  /**
   * One Adam step over n floats: g' = scale·g + l2·p; m, v updated with (b1, b2);
   * p ← p·decay − step · m / (√v · isb + eps).
   */
  adam(
    p: number,
    g: number,
    m: number,
    v: number,
    n: number,
    scale: number,
    l2: number,
    decay: number,
    b1: number,
    b2: number,
    step: number,
    isb: number,
    eps: number,
  ): void;
}

/** The locals one register block works in: its accumulators, the B vectors and the A row pointers. */
interface BlockRegisters {
  acc: number[];
  bv: number[];
  aP: number[];
}

/** Emits one register block: R rows × V vectors of C, accumulating over Q. */
function gemmBlock(f: Fn, L: Record<string, number>, regs: BlockRegisters, R: number, V: number): void {
  const { acc, bv, aP } = regs;
  // Row pointers into A and the column pointer into B.
  for (let r = 0; r < R; r++) f.get(L.a).get(L.p).i32(r).add().get(L.sapB).mul().add().set(aP[r]);
  f.get(L.b).get(L.jB).add().set(L.bP);
  const cAddr = (r: number): void => void f.get(L.c).get(L.p).i32(r).add().get(L.MB).mul().add().get(L.jB).add();
  // Initial accumulators: zero, the bias, or C itself.
  f.get(L.mode)
    .op(0x45 /* i32.eqz */)
    .if(
      () => {
        for (let r = 0; r < R; r++)
          for (let v = 0; v < V; v++)
            f.f32(0)
              .v('f32x4Splat')
              .set(acc[r * 2 + v]);
      },
      () =>
        f
          .get(L.mode)
          .i32(1)
          .op(0x46 /* i32.eq */)
          .if(
            () => {
              for (let r = 0; r < R; r++)
                for (let v = 0; v < V; v++)
                  f.get(L.bias)
                    .get(L.jB)
                    .add()
                    .v('load', 16 * v)
                    .set(acc[r * 2 + v]);
            },
            () => {
              for (let r = 0; r < R; r++)
                for (let v = 0; v < V; v++) {
                  cAddr(r);
                  f.v('load', 16 * v).set(acc[r * 2 + v]);
                }
            },
          ),
    );
  f.forStep(
    L.q,
    () => f.i32(0),
    L.Q,
    1,
    () => {
      for (let v = 0; v < V; v++)
        f.get(L.bP)
          .v('load', 16 * v)
          .set(bv[v]);
      for (let r = 0; r < R; r++) {
        f.get(aP[r]).v('load32Splat').set(L.av);
        for (let v = 0; v < V; v++)
          f.get(acc[r * 2 + v])
            .get(L.av)
            .get(bv[v])
            .v('f32x4Mul')
            .v('f32x4Add')
            .set(acc[r * 2 + v]);
        f.get(aP[r]).get(L.saqB).add().set(aP[r]);
      }
      f.get(L.bP).get(L.MB).add().set(L.bP);
    },
  );
  for (let r = 0; r < R; r++)
    for (let v = 0; v < V; v++) {
      cAddr(r);
      f.get(acc[r * 2 + v]).v('store', 16 * v);
    }
}

function gemm(): Fn {
  const f = new Fn('gemm', [I32, I32, I32, I32, I32, I32, I32, I32, I32, I32]);
  const L: Record<string, number> = { c: 0, a: 1, b: 2, bias: 3, P: 4, Q: 5, M: 6, sap: 7, saq: 8, mode: 9 };
  for (const k of ['p', 'q', 'jB', 'MB', 'sapB', 'saqB', 'bP']) L[k] = f.local(I32);
  const aP = [0, 1, 2, 3].map(() => f.local(I32));
  const acc = Array.from({ length: 8 }, () => f.local(V128));
  const bv = [f.local(V128), f.local(V128)];
  L.av = f.local(V128);
  f.get(L.M).i32(2).op(0x74 /* i32.shl */).set(L.MB);
  f.get(L.sap).i32(2).op(0x74).set(L.sapB);
  f.get(L.saq).i32(2).op(0x74).set(L.saqB);
  const columns = (R: number): void => {
    f.forStep(
      L.jB,
      () => f.i32(0),
      L.MB,
      32,
      () => gemmBlock(f, L, { acc, bv, aP }, R, 2),
    );
    f.forStep(
      L.jB,
      () => f.get(L.jB),
      L.MB,
      16,
      () => gemmBlock(f, L, { acc, bv, aP }, R, 1),
    );
  };
  f.forStep(
    L.p,
    () => f.i32(0),
    L.P,
    4,
    () => columns(4),
  );
  f.forStep(
    L.p,
    () => f.get(L.p),
    L.P,
    1,
    () => columns(1),
  );
  return f;
}

/** A loop over n floats, 4 at a time, with `i` the byte offset; `setup` runs once before. */
function elementwise(name: string, extra: number[], setup: (f: Fn) => void, body: (f: Fn, i: number) => void): Fn {
  const f = new Fn(name, [I32, ...extra, I32]);
  const n = extra.length + 1;
  const i = f.local(I32);
  const nB = f.local(I32);
  f.get(n).i32(2).op(0x74).set(nB);
  setup(f);
  f.forStep(
    i,
    () => f.i32(0),
    nB,
    16,
    () => body(f, i),
  );
  return f;
}

function tanh(): Fn {
  let x = 0;
  let a = 0;
  let r = 0;
  let nn = 0;
  let q = 0;
  let pw = 0;
  let c: Record<string, number> = {};
  const consts: Record<string, number> = {
    nine: 9,
    m2: -2,
    log2e: Math.LOG2E,
    ln2hi: 0.693359375,
    ln2lo: -2.1219444e-4,
    one: 1,
    two: 2,
    c2: 1 / 2,
    c3: 1 / 6,
    c4: 1 / 24,
    c5: 1 / 120,
    c6: 1 / 720,
    c7: 1 / 5040,
  };
  return elementwise(
    'tanh',
    [],
    (f) => {
      [x, a, r, nn, q, pw] = [0, 0, 0, 0, 0, 0].map(() => f.local(V128));
      c = {};
      for (const [k, val] of Object.entries(consts)) {
        c[k] = f.local(V128);
        f.f32(val).v('f32x4Splat').set(c[k]);
      }
      c.sign = f.local(V128);
      f.i32(-0x80000000).v('i32x4Splat').set(c.sign);
      c.bias = f.local(V128);
      f.i32(127).v('i32x4Splat').set(c.bias);
    },
    (f, i) => {
      // tanh|x| = −expm1(−2|x|) / (2 + expm1(−2|x|)), with expm1 = 2ⁿ·q(r) + (2ⁿ − 1).
      f.get(0).get(i).add().v('load').tee(x).v('f32x4Abs').get(c.nine).v('f32x4Min').get(c.m2).v('f32x4Mul').set(a);
      f.get(a).get(c.log2e).v('f32x4Mul').v('f32x4Nearest').set(nn);
      f.get(a).get(nn).get(c.ln2hi).v('f32x4Mul').v('f32x4Sub').get(nn).get(c.ln2lo).v('f32x4Mul').v('f32x4Sub').set(r);
      f.get(r).get(c.c7).v('f32x4Mul');
      for (const k of ['c6', 'c5', 'c4', 'c3', 'c2', 'one']) f.get(c[k]).v('f32x4Add').get(r).v('f32x4Mul');
      f.set(q);
      f.get(nn).v('i32x4TruncSatF32x4S').get(c.bias).v('i32x4Add').i32(23).v('i32x4Shl').set(pw);
      f.get(pw).get(q).v('f32x4Mul').get(pw).get(c.one).v('f32x4Sub').v('f32x4Add').set(q); // q ← expm1
      f.get(0).get(i).add();
      f.get(q).v('f32x4Neg').get(q).get(c.two).v('f32x4Add').v('f32x4Div');
      f.get(x).get(c.sign).v('and').v('or');
      f.v('store');
    },
  );
}

function relu(): Fn {
  let zero = 0;
  return elementwise(
    'relu',
    [],
    (f) => {
      zero = f.local(V128);
      f.f32(0).v('f32x4Splat').set(zero);
    },
    (f, i) => {
      f.get(0).get(i).add().get(0).get(i).add().v('load').get(zero).v('f32x4Max').v('store');
    },
  );
}

function tanhGrad(): Fn {
  let one = 0;
  let h = 0;
  return elementwise(
    'tanhGrad',
    [I32],
    (f) => {
      one = f.local(V128);
      h = f.local(V128);
      f.f32(1).v('f32x4Splat').set(one);
    },
    (f, i) => {
      f.get(0).get(i).add();
      f.get(0).get(i).add().v('load');
      f.get(one).get(1).get(i).add().v('load').tee(h).get(h).v('f32x4Mul').v('f32x4Sub');
      f.v('f32x4Mul').v('store');
    },
  );
}

function reluGrad(): Fn {
  let zero = 0;
  return elementwise(
    'reluGrad',
    [I32],
    (f) => {
      zero = f.local(V128);
      f.f32(0).v('f32x4Splat').set(zero);
    },
    (f, i) => {
      f.get(0).get(i).add();
      f.get(0).get(i).add().v('load').get(1).get(i).add().v('load').get(zero).v('f32x4Gt').v('and');
      f.v('store');
    },
  );
}

function colsum(): Fn {
  const f = new Fn('colsum', [I32, I32, I32, I32]);
  const [jB, MB, r, ptr] = [f.local(I32), f.local(I32), f.local(I32), f.local(I32)];
  const acc = f.local(V128);
  f.get(3).i32(2).op(0x74).set(MB);
  f.forStep(
    jB,
    () => f.i32(0),
    MB,
    16,
    () => {
      f.f32(0).v('f32x4Splat').set(acc);
      f.get(1).get(jB).add().set(ptr);
      f.forStep(
        r,
        () => f.i32(0),
        2,
        1,
        () => {
          f.get(acc).get(ptr).v('load').v('f32x4Add').set(acc);
          f.get(ptr).get(MB).add().set(ptr);
        },
      );
      f.get(0).get(jB).add().get(acc).v('store');
    },
  );
  return f;
}

function sumsq(): Fn {
  const f = new Fn('sumsq', [I32, I32], [F32]);
  const [i, nB] = [f.local(I32), f.local(I32)];
  const acc = f.local(V128);
  const x = f.local(V128);
  f.get(1).i32(2).op(0x74).set(nB);
  f.f32(0).v('f32x4Splat').set(acc);
  f.forStep(
    i,
    () => f.i32(0),
    nB,
    16,
    () => {
      f.get(0).get(i).add().v('load').tee(x).get(x).v('f32x4Mul').get(acc).v('f32x4Add').set(acc);
    },
  );
  f.get(acc).v('f32x4Extract', 0).get(acc).v('f32x4Extract', 1).f32Add().get(acc).v('f32x4Extract', 2).f32Add().get(acc).v('f32x4Extract', 3).f32Add();
  return f;
}

function adam(): Fn {
  // p, g, m, v, n, scale, l2, decay, b1, b2, step, isb, eps
  const f = new Fn('adam', [I32, I32, I32, I32, I32, F32, F32, F32, F32, F32, F32, F32, F32]);
  const [i, nB] = [f.local(I32), f.local(I32)];
  const names = ['scale', 'l2', 'decay', 'b1', 'b2', 'step', 'isb', 'eps'];
  const c: Record<string, number> = {};
  names.forEach((k, j) => {
    c[k] = f.local(V128);
    f.get(5 + j)
      .v('f32x4Splat')
      .set(c[k]);
  });
  c.b1c = f.local(V128);
  c.b2c = f.local(V128);
  f.f32(1).get(8).op(0x93 /* f32.sub */).v('f32x4Splat').set(c.b1c);
  f.f32(1).get(9).op(0x93).v('f32x4Splat').set(c.b2c);
  const [g, m, v, p] = [f.local(V128), f.local(V128), f.local(V128), f.local(V128)];
  f.get(4).i32(2).op(0x74).set(nB);
  f.forStep(
    i,
    () => f.i32(0),
    nB,
    16,
    () => {
      f.get(0).get(i).add().v('load').set(p);
      f.get(1).get(i).add().v('load').get(c.scale).v('f32x4Mul').get(p).get(c.l2).v('f32x4Mul').v('f32x4Add').set(g);
      f.get(2).get(i).add().v('load').get(c.b1).v('f32x4Mul').get(g).get(c.b1c).v('f32x4Mul').v('f32x4Add').set(m);
      f.get(3).get(i).add().v('load').get(c.b2).v('f32x4Mul').get(g).get(g).v('f32x4Mul').get(c.b2c).v('f32x4Mul').v('f32x4Add').set(v);
      f.get(2).get(i).add().get(m).v('store');
      f.get(3).get(i).add().get(v).v('store');
      f.get(0).get(i).add();
      f.get(p).get(c.decay).v('f32x4Mul');
      f.get(c.step).get(m).v('f32x4Mul').get(v).v('f32x4Sqrt').get(c.isb).v('f32x4Mul').get(c.eps).v('f32x4Add').v('f32x4Div');
      f.v('f32x4Sub').v('store');
    },
  );
  return f;
}

function transpose(): Fn {
  const f = new Fn('transpose', [I32, I32, I32, I32]);
  const [i, j, rowsB, colsB, sp, dp] = [0, 0, 0, 0, 0, 0].map(() => f.local(I32));
  f.get(2).i32(2).op(0x74).set(rowsB);
  f.get(3).i32(2).op(0x74).set(colsB);
  f.forStep(
    i,
    () => f.i32(0),
    rowsB,
    4,
    () => {
      f.get(0).get(i).add().set(dp);
      f.get(1).get(i).get(3).mul().add().set(sp);
      f.forStep(
        j,
        () => f.i32(0),
        colsB,
        4,
        () => {
          f.get(dp).get(sp).op(0x28 /* i32.load */, 2, 0).op(0x36 /* i32.store */, 2, 0);
          f.get(sp).i32(4).add().set(sp);
          f.get(dp).get(rowsB).add().set(dp);
        },
      );
    },
  );
  return f;
}

let compiled: WebAssembly.Module | null = null;

/** The compiled kernel module (built once per thread). */
export function kernelModule(): WebAssembly.Module {
  compiled ??= new WebAssembly.Module(assemble([gemm(), tanh(), relu(), tanhGrad(), reluGrad(), colsum(), sumsq(), adam(), transpose()]));
  return compiled;
}

/** Instantiates the kernels over `memory`. */
export function instantiateKernels(memory: WebAssembly.Memory): Kernels {
  const inst = new WebAssembly.Instance(kernelModule(), { env: { mem: memory } });
  return inst.exports as unknown as Kernels;
}
