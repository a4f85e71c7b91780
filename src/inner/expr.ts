/**
 * The reward / per-example-weight expression compiler.
 *
 * An expression such as `r + 0.1 * (1 - abs(x) / 2.4)` is written by an
 * untrusted agent. It is parsed to a tree by mathjs's parser (parsing only:
 * nothing of mathjs's evaluator is used), every node is checked against a
 * whitelist, and the tree is compiled once into nested JS closures over an
 * array of variable values. No agent text ever reaches `eval`, `Function`,
 * the vm module, or mathjs's evaluate/compile.
 *
 * Semantics (all arithmetic is plain IEEE double arithmetic):
 * - `+ - * /`, unary `-` and `+`; implicit multiplication (`2x`) as in mathjs.
 * - `a % b` and `a mod b`: floored modulo `a - b*floor(a/b)` (sign of `b`),
 *   and `a % 0 = a`, as in mathjs. Beware: mathjs reads a `%` that is not
 *   followed by an operand as "percent": `50%` is 0.5.
 * - `a ^ b`: power, right-associative, `-x^2 = -(x^2)`. The exponent must be
 *   constant (no variables) with |exponent| <= `EXPRESSION_LIMITS.maxExponent`.
 *   A negative base with a fractional exponent gives NaN (not a complex number).
 * - `< <= > >= == !=`: exact comparisons (no tolerance, unlike mathjs), 1 or 0.
 *   Chains `1 < x <= 3` mean `1 < x and x <= 3`.
 * - `and`, `or`, `not`: 1 or 0. A value is true when it is nonzero; NaN counts
 *   as false (as in mathjs).
 * - `c ? a : b`: `a` when `c` is true (same truth rule), else `b`.
 * - the functions in `ALLOWED_FUNCTIONS`; the constants `pi` and `e` (a
 *   variable of the same name takes precedence).
 * - A part without variables is computed once at compile time; one that comes out
 *   Infinity or NaN (`1/0`, `log(0)`, `(1e6^8)^8`) is rejected then. With variables,
 *   Infinity and NaN may still arise at run time (`1/x` at x = 0); callers check.
 */
import { create, parseDependencies } from 'mathjs';

const { parse } = create({ parseDependencies });

/** Thrown when an expression is rejected. */
export class ExpressionError extends Error {
  /** The source text of the rejected expression. */
  readonly expression: string;
  /** The offending token or sub-expression as written, e.g. `"="`, `"x.constructor"`, `"2^400"`. */
  readonly token: string;
  /** Why it was rejected, in words. */
  readonly reason: string;
  /** Character index (0-based) of `token` in `expression`, when known. */
  readonly position?: number;

  /** Builds the error and its readable message. `label` names the expression ("reward expression"). */
  constructor(expression: string, token: string, reason: string, position?: number, label = 'reward expression') {
    super(formatMessage(label, token, reason, position));
    this.name = 'ExpressionError';
    this.expression = expression;
    this.token = token;
    this.reason = reason;
    if (position !== undefined) this.position = position;
  }
}

/** A compiled expression: call `evaluate` as often as needed. */
export interface CompiledExpression {
  /** The source text. */
  readonly source: string;
  /** The allowed variable names in index order (as given). */
  readonly variables: readonly string[];
  /** The variables the expression actually references, in `variables` order. */
  readonly used: readonly string[];
  /**
   * values[i] is the value of variables[i]. Returns a number (may be NaN/Infinity at run time;
   * callers check). Throws RangeError when `values` has fewer entries than `variables`.
   */
  evaluate(values: ArrayLike<number>): number;
}

/** Options of `compileExpression` / `checkExpression`. */
export interface ExpressionOptions {
  /** What the expression is, for messages; default "reward expression". */
  readonly label?: string;
}

/** Limits on an expression: source length, tree depth, |exponent| of `^`, |number literal|. */
export const EXPRESSION_LIMITS: Readonly<{ maxLength: number; maxDepth: number; maxExponent: number; maxLiteral: number }> =
  Object.freeze({ maxLength: 500, maxDepth: 32, maxExponent: 8, maxLiteral: 1e6 });

type Fn = (v: ArrayLike<number>) => number;
type Code = { readonly kind: 'const'; readonly value: number } | { readonly kind: 'fn'; readonly fn: Fn };

interface FunctionSpec {
  readonly minArgs: number;
  readonly maxArgs: number;
  readonly usage: string;
  readonly build: (args: readonly Code[]) => Fn;
}

const EMPTY: ArrayLike<number> = new Float64Array(0);

function fnOf(code: Code): Fn {
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
  return { minArgs: 1, maxArgs: 1, usage, build: ([a]) => { const g = fnOf(a); return (v) => f(g(v)); } };
}

// Each function gets its own closure literal (not a shared wrapper) so that V8 can inline the math.
const FUNCTION_SPECS = new Map<string, FunctionSpec>([
  ['abs', { minArgs: 1, maxArgs: 1, usage: 'abs(x)', build: ([a]) => { const f = fnOf(a); return (v) => Math.abs(f(v)); } }],
  ['sqrt', { minArgs: 1, maxArgs: 1, usage: 'sqrt(x)', build: ([a]) => { const f = fnOf(a); return (v) => Math.sqrt(f(v)); } }],
  ['exp', { minArgs: 1, maxArgs: 1, usage: 'exp(x)', build: ([a]) => { const f = fnOf(a); return (v) => Math.exp(f(v)); } }],
  ['log', {
    minArgs: 1, maxArgs: 2, usage: 'log(x) or log(x, base)',
    build: ([a, b]) => {
      const f = fnOf(a);
      if (b === undefined) return (v) => Math.log(f(v));
      if (b.kind === 'const') { const lb = Math.log(b.value); return (v) => Math.log(f(v)) / lb; }
      const g = b.fn;
      return (v) => Math.log(f(v)) / Math.log(g(v));
    },
  }],
  ['sin', { minArgs: 1, maxArgs: 1, usage: 'sin(x)', build: ([a]) => { const f = fnOf(a); return (v) => Math.sin(f(v)); } }],
  ['cos', { minArgs: 1, maxArgs: 1, usage: 'cos(x)', build: ([a]) => { const f = fnOf(a); return (v) => Math.cos(f(v)); } }],
  ['tan', { minArgs: 1, maxArgs: 1, usage: 'tan(x)', build: ([a]) => { const f = fnOf(a); return (v) => Math.tan(f(v)); } }],
  ['tanh', { minArgs: 1, maxArgs: 1, usage: 'tanh(x)', build: ([a]) => { const f = fnOf(a); return (v) => Math.tanh(f(v)); } }],
  ['min', {
    minArgs: 2, maxArgs: Infinity, usage: 'min(a, b, ...)',
    build: (args) => {
      const fs = args.map(fnOf);
      if (fs.length === 2) { const [a, b] = fs; return (v) => Math.min(a(v), b(v)); }
      return (v) => { let m = fs[0](v); for (let i = 1; i < fs.length; i++) m = Math.min(m, fs[i](v)); return m; };
    },
  }],
  ['max', {
    minArgs: 2, maxArgs: Infinity, usage: 'max(a, b, ...)',
    build: (args) => {
      const fs = args.map(fnOf);
      if (fs.length === 2) { const [a, b] = fs; return (v) => Math.max(a(v), b(v)); }
      return (v) => { let m = fs[0](v); for (let i = 1; i < fs.length; i++) m = Math.max(m, fs[i](v)); return m; };
    },
  }],
  ['sign', { minArgs: 1, maxArgs: 1, usage: 'sign(x)', build: ([a]) => { const f = fnOf(a); return (v) => Math.sign(f(v)); } }],
  ['clip', {
    minArgs: 3, maxArgs: 3, usage: 'clip(v, lo, hi)',
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
  }],
  ['floor', { minArgs: 1, maxArgs: 1, usage: 'floor(x)', build: ([a]) => { const f = fnOf(a); return (v) => Math.floor(f(v)); } }],
  ['ceil', { minArgs: 1, maxArgs: 1, usage: 'ceil(x)', build: ([a]) => { const f = fnOf(a); return (v) => Math.ceil(f(v)); } }],
  ['round', unary(roundHalfAway, 'round(x)')],
  ['square', { minArgs: 1, maxArgs: 1, usage: 'square(x)', build: ([a]) => { const f = fnOf(a); return (v) => { const x = f(v); return x * x; }; } }],
]);

/** Names of the whitelisted functions. */
export const ALLOWED_FUNCTIONS: readonly string[] = Object.freeze([...FUNCTION_SPECS.keys()]);

const CONSTANTS = new Map<string, number>([
  ['pi', Math.PI],
  ['e', Math.E],
]);

/** Closure builders for a binary operator: both operands computed, or one of them a constant. */
interface BinaryBuilders {
  readonly ff: (a: Fn, b: Fn) => Fn;
  readonly fc: (a: Fn, c: number) => Fn;
  readonly cf: (c: number, b: Fn) => Fn;
}

// Keyed by mathjs's operator function name; one closure literal per operator and shape.
const BINARY = new Map<string, BinaryBuilders>([
  ['add', { ff: (a, b) => (v) => a(v) + b(v), fc: (a, c) => (v) => a(v) + c, cf: (c, b) => (v) => c + b(v) }],
  ['subtract', { ff: (a, b) => (v) => a(v) - b(v), fc: (a, c) => (v) => a(v) - c, cf: (c, b) => (v) => c - b(v) }],
  ['multiply', { ff: (a, b) => (v) => a(v) * b(v), fc: (a, c) => (v) => a(v) * c, cf: (c, b) => (v) => c * b(v) }],
  ['divide', { ff: (a, b) => (v) => a(v) / b(v), fc: (a, c) => (v) => a(v) / c, cf: (c, b) => (v) => c / b(v) }],
  ['mod', {
    ff: (a, b) => (v) => floorMod(a(v), b(v)),
    fc: (a, c) => (v) => floorMod(a(v), c),
    cf: (c, b) => (v) => floorMod(c, b(v)),
  }],
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
const CHAIN_CLASS = new Map<string, string>([
  ['add', '+'], ['subtract', '+'], ['multiply', '*'], ['divide', '*'], ['mod', '*'], ['and', 'and'], ['or', 'or'],
]);

const OPERATOR_HINTS = new Map<string, string>([
  ['factorial', 'factorial "!" is not allowed (use "not x" for negation)'],
  ['ctranspose', 'transpose "\'" is not allowed'],
  ['dotMultiply', 'element-wise ".*" is not allowed; use "*"'],
  ['dotDivide', 'element-wise "./" is not allowed; use "/"'],
  ['dotPow', 'element-wise ".^" is not allowed; use "^"'],
  ['to', 'unit conversion is not allowed'],
]);

function binaryCode(fnName: string, a: Code, b: Code): Code {
  const builders = BINARY.get(fnName);
  if (builders === undefined) throw new Error(`internal: no builder for ${fnName}`);
  if (a.kind === 'const' && b.kind === 'const') return { kind: 'const', value: builders.ff(fnOf(a), fnOf(b))(EMPTY) };
  if (b.kind === 'const') return { kind: 'fn', fn: builders.fc(fnOf(a), b.value) };
  if (a.kind === 'const') return { kind: 'fn', fn: builders.cf(a.value, b.fn) };
  return { kind: 'fn', fn: builders.ff(a.fn, b.fn) };
}

function powCode(base: Code, exponent: number): Code {
  const f = fnOf(base);
  const fn: Fn = exponent === 2 ? (v) => { const x = f(v); return x * x; } : (v) => Math.pow(f(v), exponent);
  return base.kind === 'const' ? { kind: 'const', value: fn(EMPTY) } : { kind: 'fn', fn };
}

// ---------------------------------------------------------------------------------------------
// Locating a node's text in the source (mathjs nodes carry no positions), for error messages.

interface Tok {
  readonly kind: 'num' | 'id' | 'str' | 'op';
  readonly text: string;
  readonly value: number | string;
  readonly start: number;
  readonly end: number;
}

const SKIP_RE = /(?:\s+|#[^\n]*)+/y;
const NUM_RE = /0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y;
const ID_RE = /[\p{L}_$][\p{L}\p{N}_$]*/uy;
const STR_RE = /"(?:[^"\\]|\\[\s\S])*"|'(?:[^'\\]|\\[\s\S])*'/y;
const OP_RE = /==|!=|<=|>=|\.\*|\.\/|\.\^|<<|>>>|>>|\?\?|\^\||[\s\S]/uy;

function matchAt(re: RegExp, text: string, at: number): string | null {
  re.lastIndex = at;
  const m = re.exec(text);
  return m === null ? null : m[0];
}

/** A small lexer close enough to mathjs's to find tokens again in the source. */
function lex(text: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < text.length) {
    const skip = matchAt(SKIP_RE, text, i);
    if (skip !== null && skip.length > 0) { i += skip.length; continue; }
    let m: string | null;
    if ((m = matchAt(NUM_RE, text, i)) !== null) {
      out.push({ kind: 'num', text: m, value: Number(m), start: i, end: i + m.length });
    } else if ((m = matchAt(ID_RE, text, i)) !== null) {
      if (m === 'Infinity' || m === 'NaN') out.push({ kind: 'num', text: m, value: Number(m), start: i, end: i + m.length });
      else out.push({ kind: 'id', text: m, value: m, start: i, end: i + m.length });
    } else if ((m = matchAt(STR_RE, text, i)) !== null) {
      out.push({ kind: 'str', text: m, value: m.slice(1, -1), start: i, end: i + m.length });
    } else {
      m = matchAt(OP_RE, text, i) ?? text[i];
      out.push({ kind: 'op', text: m, value: m, start: i, end: i + m.length });
    }
    i += m.length;
  }
  return out;
}

function sameToken(a: Tok, b: Tok): boolean {
  if (a.kind === 'num' || b.kind === 'num') return a.kind === b.kind && Object.is(a.value, b.value);
  if (a.kind === 'op' || b.kind === 'op') return a.kind === b.kind && a.text === b.text;
  return a.value === b.value; // id or string: `{a: 1}` prints as `{"a": 1}`
}

const isParen = (t: Tok): boolean => t.kind === 'op' && (t.text === '(' || t.text === ')');

/**
 * Finds `needle` (a node's printed form) in `source`, comparing token by token; a parenthesis
 * on either side may be missing on the other (mathjs's printer adds some and drops none), and
 * the match starts at a real token. Returns the source text and its index, or null.
 */
function locate(source: string, needle: string): { text: string; start: number } | null {
  const all = lex(source);
  const printed = lex(needle);
  const enclosing = outerParens(printed); // matched last, as whole pairs around the core
  const want = printed.slice(enclosing, printed.length - enclosing);
  const k0 = want.findIndex((t) => !isParen(t));
  if (k0 < 0) return null;
  outer: for (let s = 0; s < all.length; s++) {
    if (!sameToken(all[s], want[k0])) continue;
    let first = s;
    let last = s;
    for (let i = s + 1, k = k0 + 1; k < want.length; ) {
      if (i < all.length && sameToken(all[i], want[k])) {
        last = i++;
        k++;
      } else if (isParen(want[k])) k++;
      else if (i < all.length && isParen(all[i])) i++;
      else continue outer;
    }
    let depth = 0;
    for (let i = first; i <= last; i++) if (isParen(all[i])) depth += all[i].text === '(' ? 1 : -1;
    while (depth > 0 && last + 1 < all.length && all[last + 1].text === ')') { last++; depth--; }
    while (depth < 0 && first > 0 && all[first - 1].text === '(') { first--; depth++; }
    // A parenthesised node: take as many enclosing pairs as the printed form has.
    for (let k = enclosing; k > 0 && first > 0 && last + 1 < all.length; k--) {
      if (all[first - 1].text !== '(' || all[last + 1].text !== ')') break;
      first--;
      last++;
    }
    return { text: source.slice(all[first].start, all[last].end), start: all[first].start };
  }
  return null;
}

/** How many pairs of parentheses enclose all of `toks`, e.g. 2 for "((x))", 0 for "(a) + (b)". */
function outerParens(toks: readonly Tok[]): number {
  let k = 0;
  while (k < toks.length / 2 && toks[k].text === '(' && toks[toks.length - 1 - k].text === ')') {
    let depth = 0;
    let closesAtEnd = true;
    for (let i = k; i < toks.length - k; i++) {
      if (toks[i].text === '(') depth++;
      else if (toks[i].text === ')') depth--;
      if (depth === 0 && i < toks.length - k - 1) { closesAtEnd = false; break; }
    }
    if (!closesAtEnd) break;
    k++;
  }
  return k;
}

/** `text` on one line (control characters escaped), at most `max` characters. */
function printable(text: string, max: number): string {
  const s = text.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, (c) => (c === '\n' ? '\\n' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
  return s.length > max ? `${s.slice(0, max - 3)}...` : s;
}

function formatMessage(label: string, token: string, reason: string, position: number | undefined): string {
  reason = printable(reason, 240); // mathjs's syntax errors quote the source, line breaks included
  const shown = token.length > 60 ? `${token.slice(0, 57)}...` : token;
  const at = position === undefined ? '' : ` (character ${position})`;
  const where = token !== '' ? ` at ${JSON.stringify(shown)}${at}` : position !== undefined ? ` at the end${at}` : '';
  return `${label} rejected${where}: ${reason}`;
}

// ---------------------------------------------------------------------------------------------
// Checking and compiling.

/** The fields of mathjs nodes that the checker reads; everything is verified before use. */
interface RawNode {
  readonly type: string;
  readonly name?: string;
  readonly value?: unknown;
  readonly op?: string;
  readonly fn?: unknown;
  readonly args?: readonly RawNode[];
  readonly content?: RawNode;
  readonly condition?: RawNode;
  readonly trueExpr?: RawNode;
  readonly falseExpr?: RawNode;
  readonly params?: readonly RawNode[];
  readonly conditionals?: readonly string[];
  readonly blocks?: readonly { node: RawNode }[];
  toString(): string;
}

class Compiler {
  readonly used = new Set<number>();

  constructor(
    private readonly source: string,
    private readonly variables: readonly string[],
    private readonly index: ReadonlyMap<string, number>,
    private readonly label: string,
  ) {}

  /** Throws an ExpressionError at `node` (or at `token`, a piece of it, when given). */
  reject(node: RawNode | null, reason: string, token?: string): never {
    let text = token ?? (node === null ? '' : safeToString(node));
    const found = locate(this.source, text);
    let position: number | undefined;
    if (found !== null) {
      text = found.text;
      position = found.start;
    }
    throw new ExpressionError(this.source, text, reason, position, this.label);
  }

  /**
   * Compiles `node`; a part without variables is folded to its value here, and a fold that
   * gives Infinity or NaN (`1/0`, `log(0)`, `(1e6^8)^8`) is refused now rather than at run time.
   */
  compile(node: RawNode, depth: number): Code {
    const code = this.compileNode(node, depth);
    if (code.kind === 'const' && !Number.isFinite(code.value)) {
      this.reject(node, `this constant part evaluates to ${code.value}; every constant must be a finite number`);
    }
    return code;
  }

  private compileNode(node: RawNode, depth: number): Code {
    if (depth > EXPRESSION_LIMITS.maxDepth) {
      this.reject(node, `expression is nested too deeply (more than ${EXPRESSION_LIMITS.maxDepth} levels)`);
    }
    switch (node.type) {
      case 'ConstantNode':
        return this.constant(node);
      case 'SymbolNode':
        return this.symbol(node);
      case 'ParenthesisNode':
        return this.compile(node.content as RawNode, depth + 1);
      case 'OperatorNode':
        return this.operator(node, depth);
      case 'RelationalNode':
        return this.relational(node, depth);
      case 'ConditionalNode': {
        const c = this.compile(node.condition as RawNode, depth + 1);
        const a = this.compile(node.trueExpr as RawNode, depth + 1);
        const b = this.compile(node.falseExpr as RawNode, depth + 1);
        if (c.kind === 'const') return c.value ? a : b;
        const cf = c.fn;
        const af = fnOf(a);
        const bf = fnOf(b);
        return { kind: 'fn', fn: (v) => (cf(v) ? af(v) : bf(v)) };
      }
      case 'FunctionNode':
        return this.call(node, depth);
      case 'AssignmentNode':
        return this.reject(node, 'assignment is not allowed', '=');
      case 'FunctionAssignmentNode':
        return this.reject(node, 'function definition is not allowed', '=');
      case 'AccessorNode':
      case 'IndexNode':
        return this.reject(node, 'property access is not allowed');
      case 'ObjectNode':
        return this.reject(node, 'objects are not allowed');
      case 'ArrayNode':
        return this.reject(node, 'matrices are not allowed');
      case 'RangeNode':
        return this.reject(node, 'ranges are not allowed');
      case 'BlockNode': {
        const blocks = node.blocks ?? [];
        if (blocks.length === 1) return this.compile(blocks[0].node, depth); // a trailing ";" or newline
        const at = this.source.search(/[;\n]/);
        return this.reject(null, 'multiple statements are not allowed', at >= 0 ? this.source[at] : ';');
      }
      default:
        return this.reject(node, `${node.type} is not allowed`);
    }
  }

  private constant(node: RawNode): Code {
    const value = node.value;
    if (typeof value === 'number') {
      if (Number.isNaN(value)) return this.reject(node, 'NaN is not allowed');
      if (!(Math.abs(value) <= EXPRESSION_LIMITS.maxLiteral)) {
        return this.reject(node, `number is too large; literals must be at most ${EXPRESSION_LIMITS.maxLiteral} in size`);
      }
      return { kind: 'const', value };
    }
    if (typeof value === 'string') return this.reject(node, 'strings are not allowed');
    if (typeof value === 'boolean') return this.reject(node, 'true/false are not allowed; use 1 or 0');
    if (value === undefined) return this.reject(null, 'expression is empty', '');
    return this.reject(node, `constant ${safeToString(node)} is not allowed`);
  }

  private symbol(node: RawNode): Code {
    const name = String(node.name);
    const i = this.index.get(name);
    if (i !== undefined) {
      this.used.add(i);
      return { kind: 'fn', fn: (v) => v[i] };
    }
    const c = CONSTANTS.get(name);
    if (c !== undefined) return { kind: 'const', value: c };
    if (FUNCTION_SPECS.has(name)) return this.reject(node, `"${name}" is a function; call it as ${FUNCTION_SPECS.get(name)?.usage}`, name);
    return this.reject(node, `unknown name ${JSON.stringify(name)}; ${this.allowedNames()}`, name);
  }

  private allowedNames(): string {
    const vars = this.variables.length === 0 ? 'no variables are allowed' : `allowed variables: ${this.variables.join(', ')}`;
    return `${vars} (constants: ${[...CONSTANTS.keys()].join(', ')})`;
  }

  private operator(node: RawNode, depth: number): Code {
    const fnName = typeof node.fn === 'string' ? node.fn : '';
    const op = String(node.op);
    const args = node.args ?? [];
    if (args.length === 1) {
      if (fnName === 'unaryMinus' || fnName === 'unaryPlus' || fnName === 'not') {
        const a = this.compile(args[0], depth + 1);
        if (fnName === 'unaryPlus') return a;
        if (a.kind === 'const') return { kind: 'const', value: fnName === 'not' ? (a.value ? 0 : 1) : -a.value };
        const f = a.fn;
        return { kind: 'fn', fn: fnName === 'not' ? (v) => (f(v) ? 0 : 1) : (v) => -f(v) };
      }
    } else if (args.length === 2) {
      if (fnName === 'pow') return this.power(node, args[0], args[1], depth);
      if (BINARY.has(fnName)) {
        const cls = CHAIN_CLASS.get(fnName);
        const left = args[0];
        const leftFn = left.type === 'OperatorNode' && typeof left.fn === 'string' && left.args?.length === 2 ? left.fn : '';
        const leftDepth = cls !== undefined && CHAIN_CLASS.get(leftFn) === cls ? depth : depth + 1;
        const a = this.compile(left, leftDepth);
        const b = this.compile(args[1], depth + 1);
        return binaryCode(fnName, a, b);
      }
    }
    return this.reject(node, OPERATOR_HINTS.get(fnName) ?? `operator ${JSON.stringify(op)} is not allowed`, op);
  }

  private power(node: RawNode, baseNode: RawNode, expNode: RawNode, depth: number): Code {
    const tooLarge = `exponent is too large; |exponent| must be at most ${EXPRESSION_LIMITS.maxExponent}`;
    // A literal exponent (under parentheses and signs) is checked before the literal limit applies.
    let e = expNode;
    while (e.type === 'ParenthesisNode' || (e.type === 'OperatorNode' && e.args?.length === 1 && (e.fn === 'unaryMinus' || e.fn === 'unaryPlus'))) {
      e = (e.type === 'ParenthesisNode' ? e.content : e.args?.[0]) as RawNode;
    }
    if (e.type === 'ConstantNode' && typeof e.value === 'number' && !(Math.abs(e.value) <= EXPRESSION_LIMITS.maxExponent)) {
      return this.reject(node, tooLarge);
    }
    const base = this.compile(baseNode, depth + 1);
    const exponent = this.compile(expNode, depth + 1);
    if (exponent.kind !== 'const') {
      return this.reject(node, 'the exponent must be a constant number (use exp(...) for a variable power)');
    }
    if (!(Math.abs(exponent.value) <= EXPRESSION_LIMITS.maxExponent)) return this.reject(node, tooLarge);
    return powCode(base, exponent.value);
  }

  private relational(node: RawNode, depth: number): Code {
    const params = node.params ?? [];
    const conds = node.conditionals ?? [];
    for (const c of conds) {
      if (!BINARY.has(c) || CHAIN_CLASS.has(c)) return this.reject(node, `comparison ${JSON.stringify(c)} is not allowed`);
    }
    const codes = params.map((p) => this.compile(p, depth + 1));
    let result: Code | null = null;
    for (let i = 0; i < conds.length; i++) {
      const cmp = binaryCode(conds[i], codes[i], codes[i + 1]);
      result = result === null ? cmp : binaryCode('and', result, cmp);
    }
    return result ?? this.reject(node, 'empty comparison');
  }

  private call(node: RawNode, depth: number): Code {
    const callee = node.fn as RawNode;
    if (callee.type !== 'SymbolNode') {
      if (callee.type === 'AccessorNode') return this.reject(callee, 'property access is not allowed');
      return this.reject(node, 'only the allowed functions can be called');
    }
    const name = String(callee.name);
    const spec = FUNCTION_SPECS.get(name);
    if (spec === undefined) {
      const what = this.index.has(name) ? `"${name}" is a variable, not a function` : `unknown function ${JSON.stringify(name)}`;
      return this.reject(node, `${what}; allowed functions: ${ALLOWED_FUNCTIONS.join(', ')}`, name);
    }
    const args = node.args ?? [];
    if (args.length < spec.minArgs || args.length > spec.maxArgs) {
      const wanted = spec.minArgs === spec.maxArgs ? `${spec.minArgs}` : spec.maxArgs === Infinity ? `at least ${spec.minArgs}` : `${spec.minArgs} or ${spec.maxArgs}`;
      return this.reject(node, `${name} takes ${wanted} argument${wanted === '1' ? '' : 's'} (${spec.usage}), got ${args.length}`);
    }
    const codes = args.map((a) => this.compile(a, depth + 1));
    const fn = spec.build(codes);
    return codes.every((c) => c.kind === 'const') ? { kind: 'const', value: fn(EMPTY) } : { kind: 'fn', fn };
  }
}

function safeToString(node: RawNode): string {
  try {
    return node.toString();
  } catch {
    return node.type;
  }
}

/** Reads mathjs's syntax error: "Value expected (char 4)" with `char` the 1-based column. */
function syntaxError(source: string, err: unknown, label: string): ExpressionError {
  const message = err instanceof Error ? err.message : String(err);
  const char = (err as { char?: unknown } | null)?.char;
  const reason = `syntax error: ${message.replace(/\s*\(char \d+\)\s*$/, '')}`;
  if (typeof char !== 'number' || !Number.isInteger(char)) return new ExpressionError(source, '', reason, undefined, label);
  const position = Math.min(Math.max(char - 1, 0), source.length);
  const token = position < source.length ? (lex(source.slice(position))[0]?.text ?? '') : '';
  return new ExpressionError(source, token, reason, position, label);
}

/** Parses, checks and compiles `source` over the given variable names. Throws ExpressionError. */
export function compileExpression(source: string, variables: readonly string[], options: ExpressionOptions = {}): CompiledExpression {
  const label = options.label ?? 'reward expression';
  const vars = checkVariables(variables);
  if (typeof source !== 'string') throw new ExpressionError(String(source), '', 'the expression must be a string', undefined, label);
  const { maxLength } = EXPRESSION_LIMITS;
  if (source.length > maxLength) {
    throw new ExpressionError(source, source.slice(0, 40), `expression is ${source.length} characters long; the limit is ${maxLength}`, undefined, label);
  }
  if (source.trim() === '') throw new ExpressionError(source, '', 'expression is empty', undefined, label);

  let tree: RawNode;
  try {
    tree = parse(source) as unknown as RawNode;
  } catch (err) {
    throw syntaxError(source, err, label);
  }
  const index = new Map<string, number>();
  vars.forEach((name, i) => index.set(name, i));
  const compiler = new Compiler(source, vars, index, label);
  const code = compiler.compile(tree, 1);

  const n = vars.length;
  const used = Object.freeze(vars.filter((_, i) => compiler.used.has(i)));
  let evaluate: (values: ArrayLike<number>) => number;
  const tooShort = (values: ArrayLike<number>): never => {
    throw new RangeError(`expected ${n} values (${vars.join(', ')}), got ${values.length}`);
  };
  if (code.kind === 'const') {
    const c = code.value;
    evaluate = (values) => (values.length < n ? tooShort(values) : c);
  } else {
    const f = code.fn;
    evaluate = (values) => (values.length < n ? tooShort(values) : f(values));
  }
  return Object.freeze({ source, variables: vars, used, evaluate });
}

function checkVariables(variables: readonly string[]): readonly string[] {
  if (!Array.isArray(variables)) throw new TypeError('variables must be an array of names');
  const seen = new Set<string>();
  for (const name of variables) {
    if (typeof name !== 'string' || name === '') throw new TypeError(`invalid variable name ${JSON.stringify(name)}`);
    if (seen.has(name)) throw new TypeError(`duplicate variable name ${JSON.stringify(name)}`);
    seen.add(name);
  }
  return Object.freeze([...variables]);
}

/**
 * Non-throwing check: null when fine, else the error message. (A bad `variables` list is the
 * caller's bug, not the expression's, and still throws TypeError.)
 */
export function checkExpression(source: string, variables: readonly string[], options: ExpressionOptions = {}): string | null {
  try {
    compileExpression(source, variables, options);
    return null;
  } catch (err) {
    if (err instanceof ExpressionError) return err.message;
    throw err;
  }
}
