/**
 * What the expression language computes (see `expression.ts` for its semantics): the whitelisted
 * functions and constants, the binary operators, and the closure builders the compiler
 * (`compiler.ts`) turns a checked tree into. Parts without variables fold to constants.
 */

/** Limits on an expression: source length, tree depth, |exponent| of `^`, |number literal|. */
export const EXPRESSION_LIMITS: Readonly<{ maxLength: number; maxDepth: number; maxExponent: number; maxLiteral: number }> = Object.freeze({
  maxLength: 500,
  maxDepth: 32,
  maxExponent: 8,
  maxLiteral: 1e6,
});

/** A compiled piece: the variables' values in, a number out. */
export type Fn = (v: ArrayLike<number>) => number;
/** A compiled node: a folded constant, or a closure over the variables' values. */
export type Code = { readonly kind: 'const'; readonly value: number } | { readonly kind: 'fn'; readonly fn: Fn };

/** A whitelisted function: its arity, how it is written, and how its closure is built from its arguments. */
export interface FunctionSpec {
  readonly minArgs: number;
  readonly maxArgs: number;
  readonly usage: string;
  readonly build: (args: readonly Code[]) => Fn;
}

/** The values a constant part is folded with (it reads none). */
export const EMPTY: ArrayLike<number> = new Float64Array(0);

/** `code` as a closure (a constant returns its value). */
export function fnOf(code: Code): Fn {
  if (code.kind === 'fn') return code.fn;
  const c = code.value;
  return () => c;
}

/** Rounds half away from zero, as mathjs does (Math.round rounds -2.5 to -2). */
function roundHalfAway(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

/** Floored modulo, as mathjs's `mod` for numbers. */
function floorMod(x: number, y: number): number {
  return y === 0 ? x : x - y * Math.floor(x / y);
}

function unary(f: (x: number) => number, usage: string): FunctionSpec {
  return {
    minArgs: 1,
    maxArgs: 1,
    usage,
    build: ([a]) => {
      const g = fnOf(a);
      return (v) => f(g(v));
    },
  };
}

// Each function gets its own closure literal (not a shared wrapper) so that V8 can inline the math.
/** The whitelisted functions by name. */
export const FUNCTION_SPECS = new Map<string, FunctionSpec>([
  [
    'abs',
    {
      minArgs: 1,
      maxArgs: 1,
      usage: 'abs(x)',
      build: ([a]) => {
        const f = fnOf(a);
        return (v) => Math.abs(f(v));
      },
    },
  ],
  [
    'sqrt',
    {
      minArgs: 1,
      maxArgs: 1,
      usage: 'sqrt(x)',
      build: ([a]) => {
        const f = fnOf(a);
        return (v) => Math.sqrt(f(v));
      },
    },
  ],
  [
    'exp',
    {
      minArgs: 1,
      maxArgs: 1,
      usage: 'exp(x)',
      build: ([a]) => {
        const f = fnOf(a);
        return (v) => Math.exp(f(v));
      },
    },
  ],
  [
    'log',
    {
      minArgs: 1,
      maxArgs: 2,
      usage: 'log(x) or log(x, base)',
      build: ([a, b]) => {
        const f = fnOf(a);
        if (b === undefined) return (v) => Math.log(f(v));
        if (b.kind === 'const') {
          const lb = Math.log(b.value);
          return (v) => Math.log(f(v)) / lb;
        }
        const g = b.fn;
        return (v) => Math.log(f(v)) / Math.log(g(v));
      },
    },
  ],
  [
    'sin',
    {
      minArgs: 1,
      maxArgs: 1,
      usage: 'sin(x)',
      build: ([a]) => {
        const f = fnOf(a);
        return (v) => Math.sin(f(v));
      },
    },
  ],
  [
    'cos',
    {
      minArgs: 1,
      maxArgs: 1,
      usage: 'cos(x)',
      build: ([a]) => {
        const f = fnOf(a);
        return (v) => Math.cos(f(v));
      },
    },
  ],
  [
    'tan',
    {
      minArgs: 1,
      maxArgs: 1,
      usage: 'tan(x)',
      build: ([a]) => {
        const f = fnOf(a);
        return (v) => Math.tan(f(v));
      },
    },
  ],
  [
    'tanh',
    {
      minArgs: 1,
      maxArgs: 1,
      usage: 'tanh(x)',
      build: ([a]) => {
        const f = fnOf(a);
        return (v) => Math.tanh(f(v));
      },
    },
  ],
  [
    'min',
    {
      minArgs: 2,
      maxArgs: Infinity,
      usage: 'min(a, b, ...)',
      build: (args) => {
        const fs = args.map(fnOf);
        if (fs.length === 2) {
          const [a, b] = fs;
          return (v) => Math.min(a(v), b(v));
        }
        return (v) => {
          let m = fs[0](v);
          for (let i = 1; i < fs.length; i++) m = Math.min(m, fs[i](v));
          return m;
        };
      },
    },
  ],
  [
    'max',
    {
      minArgs: 2,
      maxArgs: Infinity,
      usage: 'max(a, b, ...)',
      build: (args) => {
        const fs = args.map(fnOf);
        if (fs.length === 2) {
          const [a, b] = fs;
          return (v) => Math.max(a(v), b(v));
        }
        return (v) => {
          let m = fs[0](v);
          for (let i = 1; i < fs.length; i++) m = Math.max(m, fs[i](v));
          return m;
        };
      },
    },
  ],
  [
    'sign',
    {
      minArgs: 1,
      maxArgs: 1,
      usage: 'sign(x)',
      build: ([a]) => {
        const f = fnOf(a);
        return (v) => Math.sign(f(v));
      },
    },
  ],
  [
    'clip',
    {
      minArgs: 3,
      maxArgs: 3,
      usage: 'clip(v, lo, hi)',
      build: ([a, lo, hi]) => {
        const f = fnOf(a);
        if (lo.kind === 'const' && hi.kind === 'const') {
          const l = lo.value;
          const h = hi.value;
          return (v) => Math.min(Math.max(f(v), l), h);
        }
        const g = fnOf(lo);
        const k = fnOf(hi);
        return (v) => Math.min(Math.max(f(v), g(v)), k(v));
      },
    },
  ],
  [
    'floor',
    {
      minArgs: 1,
      maxArgs: 1,
      usage: 'floor(x)',
      build: ([a]) => {
        const f = fnOf(a);
        return (v) => Math.floor(f(v));
      },
    },
  ],
  [
    'ceil',
    {
      minArgs: 1,
      maxArgs: 1,
      usage: 'ceil(x)',
      build: ([a]) => {
        const f = fnOf(a);
        return (v) => Math.ceil(f(v));
      },
    },
  ],
  ['round', unary(roundHalfAway, 'round(x)')],
  [
    'square',
    {
      minArgs: 1,
      maxArgs: 1,
      usage: 'square(x)',
      build: ([a]) => {
        const f = fnOf(a);
        return (v) => {
          const x = f(v);
          return x * x;
        };
      },
    },
  ],
]);

/** Names of the whitelisted functions. */
export const ALLOWED_FUNCTIONS: readonly string[] = Object.freeze([...FUNCTION_SPECS.keys()]);

/** The named constants (a variable of the same name takes precedence). */
export const CONSTANTS = new Map<string, number>([
  ['pi', Math.PI],
  ['e', Math.E],
]);

/** Closure builders for a binary operator: both operands computed, or one of them a constant. */
export interface BinaryBuilders {
  readonly ff: (a: Fn, b: Fn) => Fn;
  readonly fc: (a: Fn, c: number) => Fn;
  readonly cf: (c: number, b: Fn) => Fn;
}

/** The binary operators, keyed by mathjs's operator function name; one closure literal per operator and shape. */
export const BINARY = new Map<string, BinaryBuilders>([
  ['add', { ff: (a, b) => (v) => a(v) + b(v), fc: (a, c) => (v) => a(v) + c, cf: (c, b) => (v) => c + b(v) }],
  ['subtract', { ff: (a, b) => (v) => a(v) - b(v), fc: (a, c) => (v) => a(v) - c, cf: (c, b) => (v) => c - b(v) }],
  ['multiply', { ff: (a, b) => (v) => a(v) * b(v), fc: (a, c) => (v) => a(v) * c, cf: (c, b) => (v) => c * b(v) }],
  ['divide', { ff: (a, b) => (v) => a(v) / b(v), fc: (a, c) => (v) => a(v) / c, cf: (c, b) => (v) => c / b(v) }],
  [
    'mod',
    {
      ff: (a, b) => (v) => floorMod(a(v), b(v)),
      fc: (a, c) => (v) => floorMod(a(v), c),
      cf: (c, b) => (v) => floorMod(c, b(v)),
    },
  ],
  ['smaller', { ff: (a, b) => (v) => (a(v) < b(v) ? 1 : 0), fc: (a, c) => (v) => (a(v) < c ? 1 : 0), cf: (c, b) => (v) => (c < b(v) ? 1 : 0) }],
  ['smallerEq', { ff: (a, b) => (v) => (a(v) <= b(v) ? 1 : 0), fc: (a, c) => (v) => (a(v) <= c ? 1 : 0), cf: (c, b) => (v) => (c <= b(v) ? 1 : 0) }],
  ['larger', { ff: (a, b) => (v) => (a(v) > b(v) ? 1 : 0), fc: (a, c) => (v) => (a(v) > c ? 1 : 0), cf: (c, b) => (v) => (c > b(v) ? 1 : 0) }],
  ['largerEq', { ff: (a, b) => (v) => (a(v) >= b(v) ? 1 : 0), fc: (a, c) => (v) => (a(v) >= c ? 1 : 0), cf: (c, b) => (v) => (c >= b(v) ? 1 : 0) }],
  ['equal', { ff: (a, b) => (v) => (a(v) === b(v) ? 1 : 0), fc: (a, c) => (v) => (a(v) === c ? 1 : 0), cf: (c, b) => (v) => (c === b(v) ? 1 : 0) }],
  ['unequal', { ff: (a, b) => (v) => (a(v) !== b(v) ? 1 : 0), fc: (a, c) => (v) => (a(v) !== c ? 1 : 0), cf: (c, b) => (v) => (c !== b(v) ? 1 : 0) }],
  ['and', { ff: (a, b) => (v) => (a(v) && b(v) ? 1 : 0), fc: (a, c) => (v) => (a(v) && c ? 1 : 0), cf: (c, b) => (v) => (c && b(v) ? 1 : 0) }],
  ['or', { ff: (a, b) => (v) => (a(v) || b(v) ? 1 : 0), fc: (a, c) => (v) => (a(v) || c ? 1 : 0), cf: (c, b) => (v) => (c || b(v) ? 1 : 0) }],
]);

/** Operators chained left-associatively at one precedence level; a chain counts as one level of depth. */
export const CHAIN_CLASS = new Map<string, string>([
  ['add', '+'],
  ['subtract', '+'],
  ['multiply', '*'],
  ['divide', '*'],
  ['mod', '*'],
  ['and', 'and'],
  ['or', 'or'],
]);

/** Why an operator mathjs parses is refused, for the message. */
export const OPERATOR_HINTS = new Map<string, string>([
  ['factorial', 'factorial "!" is not allowed (use "not x" for negation)'],
  ['ctranspose', 'transpose "\'" is not allowed'],
  ['dotMultiply', 'element-wise ".*" is not allowed; use "*"'],
  ['dotDivide', 'element-wise "./" is not allowed; use "/"'],
  ['dotPow', 'element-wise ".^" is not allowed; use "^"'],
  ['to', 'unit conversion is not allowed'],
]);

/** The binary operator `fnName` over two compiled operands, folded when both are constant. */
export function binaryCode(fnName: string, a: Code, b: Code): Code {
  const builders = BINARY.get(fnName);
  if (builders === undefined) throw new Error(`internal: no builder for ${fnName}`);
  if (a.kind === 'const' && b.kind === 'const') return { kind: 'const', value: builders.ff(fnOf(a), fnOf(b))(EMPTY) };
  if (b.kind === 'const') return { kind: 'fn', fn: builders.fc(fnOf(a), b.value) };
  if (a.kind === 'const') return { kind: 'fn', fn: builders.cf(a.value, b.fn) };
  return { kind: 'fn', fn: builders.ff(a.fn, b.fn) };
}

/** `base ^ exponent` for a constant exponent (x·x for 2), folded when the base is constant. */
export function powCode(base: Code, exponent: number): Code {
  const f = fnOf(base);
  const fn: Fn =
    exponent === 2
      ? (v) => {
          const x = f(v);
          return x * x;
        }
      : (v) => f(v) ** exponent;
  return base.kind === 'const' ? { kind: 'const', value: fn(EMPTY) } : { kind: 'fn', fn };
}
