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
import { createRequire } from 'node:module';
import { ExpressionError } from './expression-error.js';
import { Compiler, type RawNode, syntaxError } from './compiler.js';
import { EXPRESSION_LIMITS } from './operations.js';

/** The error a rejected expression throws. */
export { ExpressionError } from './expression-error.js';
/** The whitelisted functions and the limits on an expression. */
export { ALLOWED_FUNCTIONS, EXPRESSION_LIMITS } from './operations.js';

/**
 * mathjs's parser, loaded on the first expression. Loading mathjs is most of what starting a process
 * or a worker thread costs (about 1.7 s of CPU for the full library, 0.8 s for its number-only entry),
 * and most processes and threads (scorers, `rrl tasks`, `rrl predict`) never parse an expression. A
 * synchronous `require` of the package's CommonJS build keeps `compileExpression` synchronous.
 */
let parser: ((source: string) => unknown) | null = null;
function parse(source: string): unknown {
  if (!parser) {
    const { create, parseDependencies } = createRequire(import.meta.url)('mathjs/number') as typeof import('mathjs/number');
    parser = create({ parseDependencies }).parse;
  }
  return parser(source);
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

/** The variable names, checked (non-empty strings, no duplicates) and frozen; a bad list is a TypeError. */
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
