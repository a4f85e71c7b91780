/**
 * A minimal WebAssembly binary writer: just enough of the format (types, one imported memory,
 * functions, exports, structured control flow, i32/f32 scalars and 128-bit SIMD) to write the
 * small-MLP kernels of `kernels.ts` as code rather than as a checked-in binary.
 */

/** Value type i32. */
export const I32 = 0x7f;
/** Value type f32. */
export const F32 = 0x7d;
/** Value type v128 (SIMD). */
export const V128 = 0x7b;

/** Unsigned LEB128. */
function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

/** Signed LEB128 (32-bit). */
function sleb(n: number): number[] {
  const out: number[] = [];
  n |= 0;
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

const utf8 = (s: string): number[] => [...uleb(s.length), ...Buffer.from(s, 'utf8')];
const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];

/** SIMD opcodes used by the kernels (after the 0xfd prefix). */
const SIMD = {
  load: 0x00,
  load32Splat: 0x09,
  store: 0x0b,
  i32x4Splat: 0x11,
  f32x4Splat: 0x13,
  f32x4Extract: 0x1f,
  f32x4Gt: 0x44,
  and: 0x4e,
  or: 0x50,
  f32x4Nearest: 0x6a,
  i32x4Shl: 0xab,
  i32x4Add: 0xae,
  f32x4Abs: 0xe0,
  f32x4Neg: 0xe1,
  f32x4Sqrt: 0xe3,
  f32x4Add: 0xe4,
  f32x4Sub: 0xe5,
  f32x4Mul: 0xe6,
  f32x4Div: 0xe7,
  f32x4Min: 0xe8,
  f32x4Max: 0xe9,
  i32x4TruncSatF32x4S: 0xf8,
} as const;

/** One function body under construction: locals and an instruction stream. */
export class Fn {
  readonly code: number[] = [];
  private readonly locals: number[] = [];

  /** A function with `params` parameter types returning `results`. */
  constructor(
    readonly name: string,
    readonly params: number[],
    readonly results: number[] = [],
  ) {}

  /** Declares a local of type `t`; returns its index. */
  local(t: number): number {
    this.locals.push(t);
    return this.params.length + this.locals.length - 1;
  }

  /** Appends raw bytes. */
  op(...bytes: number[]): this {
    this.code.push(...bytes);
    return this;
  }

  get(i: number): this {
    return this.op(0x20, ...uleb(i));
  }
  set(i: number): this {
    return this.op(0x21, ...uleb(i));
  }
  tee(i: number): this {
    return this.op(0x22, ...uleb(i));
  }
  i32(n: number): this {
    return this.op(0x41, ...sleb(n));
  }
  f32(x: number): this {
    const b = Buffer.alloc(4);
    b.writeFloatLE(x);
    return this.op(0x43, ...b);
  }
  add(): this {
    return this.op(0x6a);
  }
  sub(): this {
    return this.op(0x6b);
  }
  mul(): this {
    return this.op(0x6c);
  }
  /** i32 signed less-than. */
  lt(): this {
    return this.op(0x48);
  }
  /** i32 signed greater-or-equal. */
  ge(): this {
    return this.op(0x4e);
  }
  f32Load(offset = 0): this {
    return this.op(0x2a, 2, ...uleb(offset));
  }
  f32Store(offset = 0): this {
    return this.op(0x38, 2, ...uleb(offset));
  }
  f32Add(): this {
    return this.op(0x92);
  }
  /** A SIMD instruction by name, with a memory offset for loads and stores or a lane for extracts. */
  v(name: keyof typeof SIMD, imm = 0): this {
    this.op(0xfd, ...uleb(SIMD[name]));
    if (name === 'load' || name === 'store') return this.op(4, ...uleb(imm));
    if (name === 'load32Splat') return this.op(2, ...uleb(imm));
    if (name === 'f32x4Extract') return this.op(imm);
    return this;
  }

  /** `block … end` (void). */
  block(body: () => void): this {
    this.op(0x02, 0x40);
    body();
    return this.op(0x0b);
  }
  /** `loop … end` (void). */
  loop(body: () => void): this {
    this.op(0x03, 0x40);
    body();
    return this.op(0x0b);
  }
  /** `if … else … end` (void) on the i32 on the stack. */
  if(then: () => void, otherwise?: () => void): this {
    this.op(0x04, 0x40);
    then();
    if (otherwise) {
      this.op(0x05);
      otherwise();
    }
    return this.op(0x0b);
  }
  br(depth: number): this {
    return this.op(0x0c, ...uleb(depth));
  }
  brIf(depth: number): this {
    return this.op(0x0d, ...uleb(depth));
  }

  /**
   * `for (i = from; i + step <= end; i += step) body()` where `end` is a local and `step` a
   * constant; `from` pushes the start value. Leaves `i` at the first value not run.
   */
  forStep(i: number, from: () => void, end: number, step: number, body: () => void): this {
    from();
    this.set(i);
    return this.block(() =>
      this.loop(() => {
        this.get(i).i32(step).add().get(end).op(0x4a /* i32.gt_s */).brIf(1);
        body();
        this.get(i).i32(step).add().set(i).br(0);
      }),
    );
  }

  /** The encoded body (locals and code). */
  encode(): number[] {
    const groups: number[][] = [];
    for (const t of this.locals) {
      const last = groups[groups.length - 1];
      if (last && last[1] === t) last[0] += 1;
      else groups.push([1, t]);
    }
    const body = [...vec(groups.map(([n, t]) => [...uleb(n), t])), ...this.code, 0x0b];
    return [...uleb(body.length), ...body];
  }
}

/** A module of functions over one imported memory `env.mem`, every function exported by name. */
export function assemble(fns: Fn[]): Uint8Array {
  const section = (id: number, payload: number[]): number[] => [id, ...uleb(payload.length), ...payload];
  const types = fns.map((f) => [0x60, ...vec(f.params.map((t) => [t])), ...vec(f.results.map((t) => [t]))]);
  const bytes = [
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00,
    ...section(1, vec(types)),
    ...section(2, vec([[...utf8('env'), ...utf8('mem'), 0x02, 0x00, 0x01]])),
    ...section(3, vec(fns.map((_, i) => uleb(i)))),
    ...section(7, vec(fns.map((f, i) => [...utf8(f.name), 0x00, ...uleb(i)]))),
    ...section(10, vec(fns.map((f) => f.encode()))),
  ];
  return Uint8Array.from(bytes);
}
