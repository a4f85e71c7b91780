import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { ALLOWED_FUNCTIONS, EXPRESSION_LIMITS, ExpressionError, checkExpression, compileExpression } from './expression.js';

const VARS = ['x', 'x_dot', 'theta', 'theta_dot', 'r', 'done', 't'] as const;
type Values = Partial<Record<(typeof VARS)[number], number>>;

/** Evaluates `source` with the named values (others 0). */
function ev(source: string, values: Values = {}): number {
  const c = compileExpression(source, VARS);
  return c.evaluate(VARS.map((name) => values[name] ?? 0));
}

function near(actual: number, expected: number, source: string): void {
  assert.ok(Math.abs(actual - expected) <= 1e-12 * Math.max(1, Math.abs(expected)), `${source}: got ${actual}, expected ${expected}`);
}

/** Asserts that `source` is rejected with `token` and a reason matching `reason`. */
function rejects(source: string, token: string, reason: RegExp, variables: readonly string[] = VARS): ExpressionError {
  let caught: unknown;
  try {
    compileExpression(source, variables);
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof ExpressionError, `${JSON.stringify(source)} should be rejected, got ${String(caught)}`);
  assert.equal(caught.expression, source);
  assert.equal(caught.token, token, `token of ${JSON.stringify(source)}: ${caught.message}`);
  assert.match(caught.reason, reason, `reason of ${JSON.stringify(source)}`);
  assert.ok(caught.message.includes(caught.reason), caught.message);
  return caught;
}

test('the design examples evaluate to hand-computed values', () => {
  near(ev('r + 0.1 * (1 - abs(x) / 2.4)', { r: 1, x: -1.2 }), 1 + 0.1 * 0.5, 'design example');
  assert.equal(ev('theta_dot^2 > 1 ? r - 0.5 : r', { theta_dot: 1.5, r: 2 }), 1.5);
  assert.equal(ev('theta_dot^2 > 1 ? r - 0.5 : r', { theta_dot: -0.5, r: 2 }), 2);
});

test('arithmetic follows the usual precedence and associativity', () => {
  const cases: [string, number, Values?][] = [
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['10 - 4 - 3', 3],
    ['12 / 3 / 2', 2],
    ['2 ^ 2 ^ 3', 256], // right-associative: 2^(2^3), not (2^2)^3 = 64
    ['-2 ^ 2', -4], // unary minus binds looser than ^
    ['(-2) ^ 2', 4],
    ['2 ^ -1', 0.5],
    ['2 ^ (-3)', 0.125],
    ['x ^ 0.5', 3, { x: 9 }],
    ['x ^ (1/2)', 3, { x: 9 }],
    ['- - x', 4, { x: 4 }],
    ['+x', 4, { x: 4 }],
    ['2x + 1', 7, { x: 3 }], // implicit multiplication
    ['3 * -x', -6, { x: 2 }],
    ['1 - 2 * x / 4 + 0.5', 0.5, { x: 2 }],
    ['7 % 3', 1],
    ['-7 % 3', 2], // floored modulo: the sign of the divisor, as in mathjs
    ['7 % -3', -2],
    ['x mod 4', 1, { x: 9 }],
    ['7 % 0', 7], // mathjs's convention
    ['1.5e3 + .5', 1500.5],
    ['0x10', 16],
  ];
  for (const [source, expected, values] of cases) near(ev(source, values), expected, source);
});

test('comparisons give 1 or 0, exactly and chained', () => {
  const cases: [string, number][] = [
    ['x < 2', 1],
    ['x < 1', 0],
    ['x <= 1', 1],
    ['x <= 0.5', 0],
    ['x > 0', 1],
    ['x > 1', 0],
    ['x >= 1', 1],
    ['x >= 2', 0],
    ['x == 1', 1],
    ['x == 2', 0],
    ['x != 2', 1],
    ['x != 1', 0],
    ['0 < x < 2', 1],
    ['1 < x < 2', 0],
    ['0 < x <= 1', 1],
    ['2 > x > 0', 1],
    ['x + 1 > 1.5', 1],
    ['0.1 + 0.2 == 0.3', 0], // no tolerance (mathjs's own equal would say 1)
  ];
  for (const [source, expected] of cases) assert.equal(ev(source, { x: 1 }), expected, source);
  assert.equal(ev('x > 0', { x: NaN }), 0);
  assert.equal(ev('x != 0', { x: NaN }), 1);
});

test('and, or, not give 1 or 0; nonzero is true, NaN is false', () => {
  for (const a of [0, 1]) {
    for (const b of [0, 1]) {
      assert.equal(ev('x and theta', { x: a, theta: b }), a && b ? 1 : 0);
      assert.equal(ev('x or theta', { x: a, theta: b }), a || b ? 1 : 0);
    }
    assert.equal(ev('not x', { x: a }), a ? 0 : 1);
  }
  assert.equal(ev('x and theta', { x: -2.5, theta: 0.1 }), 1);
  assert.equal(ev('not x', { x: NaN }), 1);
  assert.equal(ev('x or 0', { x: NaN }), 0);
  assert.equal(ev('x > 1 and theta < 0 or done', { x: 2, theta: 1, done: 1 }), 1); // and binds tighter than or
  assert.equal(ev('not done and x', { done: 0, x: 0 }), 0);
});

test('the conditional picks a branch; nonzero is true and NaN is false', () => {
  assert.equal(ev('done ? -1 : r', { done: 1, r: 5 }), -1);
  assert.equal(ev('done ? -1 : r', { done: 0, r: 5 }), 5);
  assert.equal(ev('done ? -1 : r', { done: -0.5, r: 5 }), -1);
  assert.equal(ev('done ? -1 : r', { done: NaN, r: 5 }), 5);
  const nested = 'x > 1 ? 10 : x > 0 ? 20 : 30'; // right-associative
  assert.equal(ev(nested, { x: 2 }), 10);
  assert.equal(ev(nested, { x: 0.5 }), 20);
  assert.equal(ev(nested, { x: -1 }), 30);
  assert.equal(ev('1 ? x : theta', { x: 3, theta: 4 }), 3);
  assert.equal(ev('(x ? 2 : 3) * 10', { x: 0 }), 30);
});

test('each whitelisted function and the constants pi and e', () => {
  const x = 0.7;
  const cases: [string, number, Values?][] = [
    ['abs(x)', 2.5, { x: -2.5 }],
    ['sqrt(x)', 1.5, { x: 2.25 }],
    ['exp(x)', Math.exp(x)],
    ['log(x)', Math.log(x)],
    ['log(8, 2)', 3],
    ['log(x, 10)', Math.log(x) / Math.log(10)],
    ['sin(x)', Math.sin(x)],
    ['cos(x)', Math.cos(x)],
    ['tan(x)', Math.tan(x)],
    ['tanh(x)', Math.tanh(x)],
    ['min(x, 0.5)', 0.5],
    ['min(x, theta, t)', -3, { x: 1, theta: -3, t: 2 }],
    ['max(x, 0.5)', x],
    ['max(x, theta, t)', 2, { x: 1, theta: -3, t: 2 }],
    ['sign(x)', 1],
    ['sign(x)', -1, { x: -0.2 }],
    ['sign(x)', 0, { x: 0 }],
    ['clip(x, -1, 1)', x],
    ['clip(x, -1, 1)', 1, { x: 3 }],
    ['clip(x, -1, 1)', -1, { x: -3 }],
    ['clip(x, theta, t)', 2, { x: 5, theta: -2, t: 2 }],
    ['floor(x)', -2, { x: -1.5 }],
    ['ceil(x)', -1, { x: -1.5 }],
    ['round(x)', 3, { x: 2.5 }],
    ['round(x)', -3, { x: -2.5 }], // half away from zero, as in mathjs (Math.round gives -2)
    ['round(x)', 1],
    ['square(x)', 9, { x: -3 }],
    ['pi', Math.PI],
    ['e', Math.E],
    ['2 * pi * x', 2 * Math.PI * x],
    ['sqrt(square(x) + square(theta))', 5, { x: 3, theta: 4 }],
  ];
  for (const [source, expected, values] of cases) near(ev(source, values ?? { x }), expected, source);
  assert.deepEqual([...ALLOWED_FUNCTIONS].sort(), [
    'abs',
    'ceil',
    'clip',
    'cos',
    'exp',
    'floor',
    'log',
    'max',
    'min',
    'round',
    'sign',
    'sin',
    'sqrt',
    'square',
    'tan',
    'tanh',
  ]);
  assert.ok(Object.isFrozen(ALLOWED_FUNCTIONS));
});

test('NaN and Infinity may arise at run time and are returned as is', () => {
  assert.equal(ev('1 / x', { x: 0 }), Infinity);
  assert.ok(Number.isNaN(ev('sqrt(x)', { x: -1 })));
  assert.ok(Number.isNaN(ev('log(x)', { x: -1 })));
  assert.ok(Number.isNaN(ev('x ^ 0.5', { x: -8 }))); // real numbers only, no complex results
  assert.ok(Number.isNaN(ev('x + 1', { x: NaN })));
});

test('used lists the referenced variables in variables order; source and variables are kept', () => {
  const c = compileExpression('r + theta * x - (x > 0 ? done : 0)', VARS);
  assert.deepEqual(c.used, ['x', 'theta', 'r', 'done']);
  assert.deepEqual(c.variables, VARS);
  assert.equal(c.source, 'r + theta * x - (x > 0 ? done : 0)');
  assert.deepEqual(compileExpression('2 * pi', VARS).used, []);
  assert.deepEqual(compileExpression('clip(t, 0, 1)', VARS).used, ['t']);
  assert.ok(Object.isFrozen(c) && Object.isFrozen(c.used) && Object.isFrozen(c.variables));
});

test('a variable-free expression is folded to a constant', () => {
  const c = compileExpression('2 * pi + sqrt(16) - (1 < 2 ? 1 : 0)', VARS);
  assert.equal(c.evaluate(new Float64Array(VARS.length)), 2 * Math.PI + 3);
  assert.equal(compileExpression('1 ? x : 2', VARS).evaluate([5, 0, 0, 0, 0, 0, 0]), 5);
});

test('evaluate reads any array-like and checks its length', () => {
  const c = compileExpression('x - t', ['x', 't']);
  assert.equal(c.evaluate([5, 2]), 3);
  assert.equal(c.evaluate(new Float64Array([5, 2])), 3);
  assert.equal(c.evaluate(new Float32Array([5, 2, 9])), 3);
  assert.throws(() => c.evaluate([5]), RangeError);
  assert.equal(compileExpression('1', []).evaluate([]), 1);
});

test('a variable named like a constant shadows the constant', () => {
  assert.equal(compileExpression('e * 2', ['e']).evaluate([3]), 6);
  assert.equal(compileExpression('e', ['x']).evaluate([3]), Math.E);
});

test('hostile or invalid input is rejected with the offending token and a reason', () => {
  const cases: [string, string, RegExp][] = [
    ['x = 1', '=', /assignment is not allowed/],
    ['f(x) = x', '=', /function definition is not allowed/],
    ['x.constructor', 'x.constructor', /property access is not allowed/],
    ['constructor', 'constructor', /unknown name "constructor"; allowed variables: x, x_dot, theta, theta_dot, r, done, t/],
    ['__proto__', '__proto__', /unknown name "__proto__"/],
    ['toString', 'toString', /unknown name "toString"/],
    ['hasOwnProperty', 'hasOwnProperty', /unknown name "hasOwnProperty"/],
    ['r + valueOf', 'valueOf', /unknown name "valueOf"/],
    ['r["constructor"]', 'r["constructor"]', /property access is not allowed/],
    ['x[1]', 'x[1]', /property access is not allowed/],
    ['[1,2]', '[1,2]', /matrices are not allowed/],
    ['{a: 1}', '{a: 1}', /objects are not allowed/],
    ['"str"', '"str"', /strings are not allowed/],
    ["r + 'str'", "'str'", /strings are not allowed/],
    ['x; y', ';', /multiple statements are not allowed/],
    ['x\nr', '\n', /multiple statements are not allowed/],
    ['1:3', '1:3', /ranges are not allowed/],
    ['import("fs")', 'import', /unknown function "import"; allowed functions: abs, sqrt/],
    ['evaluate("1")', 'evaluate', /unknown function "evaluate"/],
    ['process.exit()', 'process.exit', /property access is not allowed/],
    ['toString(x)', 'toString', /unknown function "toString"/],
    ['x(2)', 'x', /"x" is a variable, not a function/],
    ['sqrt', 'sqrt', /"sqrt" is a function; call it as sqrt\(x\)/],
    ['2^400', '2^400', /exponent is too large; \|exponent\| must be at most 8/],
    ['x ^ -9', 'x ^ -9', /exponent is too large/],
    ['x^x', 'x^x', /exponent must be a constant/],
    ['e^x', 'e^x', /use exp/],
    ['x^1e308', 'x^1e308', /exponent is too large/],
    ['x^2^4', 'x^2^4', /exponent is too large/],
    ['1e400', '1e400', /number is too large/],
    ['r + 1000001', '1000001', /number is too large/],
    ['-1e7', '1e7', /number is too large/],
    ['Infinity', 'Infinity', /number is too large/],
    ['NaN', 'NaN', /NaN is not allowed/],
    ['true', 'true', /use 1 or 0/],
    ['foo(x)', 'foo', /unknown function "foo"/],
    ['clip(x)', 'clip(x)', /clip takes 3 arguments \(clip\(v, lo, hi\)\), got 1/],
    ['min(x)', 'min(x)', /min takes at least 2 arguments/],
    ['sqrt(x, 2)', 'sqrt(x, 2)', /sqrt takes 1 argument \(sqrt\(x\)\), got 2/],
    ['log()', 'log()', /log takes 1 or 2 arguments/],
    ['x!', '!', /factorial/],
    ["x'", "'", /transpose/],
    ['x & 1', '&', /operator "&" is not allowed/],
    ['x xor 1', 'xor', /operator "xor" is not allowed/],
    ['x .* 2', '.*', /element-wise/],
    ['x ?? 1', '??', /operator "\?\?" is not allowed/],
    ['5 cm', 'cm', /unknown name "cm"/], // mathjs reads it as 5 * cm
    ['', '', /expression is empty/],
    ['  # only a comment', '', /expression is empty/],
  ];
  for (const [source, token, reason] of cases) rejects(source, token, reason);
});

test('the message names the token, and the position when known', () => {
  const err = rejects('x.constructor', 'x.constructor', /property access/);
  assert.equal(err.message, 'reward expression rejected at "x.constructor" (character 0): property access is not allowed');
  assert.equal(err.name, 'ExpressionError');
  assert.ok(err instanceof Error);
  assert.equal(rejects('r + x.y', 'x.y', /property access/).position, 4);
  assert.equal(rejects('r + (2^40)', '2^40', /exponent/).position, 5);
  assert.equal(
    checkExpression('w * y', ['w'], { label: 'weight expression' }),
    'weight expression rejected at "y" (character 4): unknown name "y"; allowed variables: w (constants: pi, e)',
  );
});

test('syntax errors become ExpressionError with position and token', () => {
  const end = rejects('r +', '', /^syntax error: Unexpected end of expression$/);
  assert.equal(end.position, 3);
  assert.match(end.message, /rejected at the end \(character 3\)/);
  assert.equal(rejects('r +* 2', '*', /^syntax error: Value expected$/).position, 3);
  assert.equal(rejects('x ~ 2', '~', /syntax error/).position, 2);
  assert.equal(rejects('(x, 2)', ',', /syntax error/).position, 2);
  assert.equal(rejects('x ? 1', '', /syntax error/).position, 5);
});

test('overlong input is rejected before parsing', () => {
  const long = `${'x + '.repeat(150)}1`;
  const err = rejects(long, long.slice(0, 40), /601 characters long; the limit is 500/);
  assert.equal(err.position, undefined);
  // Something that would be a syntax error is still reported as too long: nothing was parsed.
  rejects('('.repeat(501), '('.repeat(40), /the limit is 500/);
  const exact = `1${' + x'.repeat(Math.floor((EXPRESSION_LIMITS.maxLength - 1) / 4))}`; // 497 characters
  assert.ok(exact.length <= EXPRESSION_LIMITS.maxLength);
  assert.equal(checkExpression(exact, VARS), null);
});

test('deep nesting is rejected; long flat chains are not', () => {
  const deep = `${'('.repeat(40)}x${')'.repeat(40)}`;
  const err = rejects(deep, `${'('.repeat(8)}x${')'.repeat(8)}`, /nested too deeply \(more than 32 levels\)/);
  assert.equal(err.position, 32);
  rejects(`${'sqrt('.repeat(40)}x${')'.repeat(40)}`, `${'sqrt('.repeat(8)}x${')'.repeat(8)}`, /nested too deeply/);
  assert.equal(ev(`${'('.repeat(20)}x${')'.repeat(20)}`, { x: 2 }), 2);
  const flat = Array.from({ length: 100 }, () => 'x').join(' + ');
  assert.equal(ev(flat, { x: 1 }), 100);
  assert.equal(ev(Array.from({ length: 60 }, () => 'x').join(' * '), { x: 1 }), 1);
});

test('trailing statement separators are tolerated', () => {
  assert.equal(ev('x + 1;', { x: 1 }), 2);
  assert.equal(ev('x + 1\n', { x: 1 }), 2);
  assert.equal(ev('x + 1 # a comment', { x: 1 }), 2);
});

test('checkExpression returns null or the message and never throws for bad expressions', () => {
  assert.equal(checkExpression('r + 1', VARS), null);
  assert.equal(checkExpression('x.constructor', VARS), 'reward expression rejected at "x.constructor" (character 0): property access is not allowed');
  assert.match(checkExpression('r +', VARS) ?? '', /syntax error/);
  assert.match(checkExpression('q', []) ?? '', /no variables are allowed/);
});

test('a bad variable list is a caller error (TypeError)', () => {
  assert.throws(() => compileExpression('x', ['x', 'x']), TypeError);
  assert.throws(() => checkExpression('x', ['x', '']), TypeError);
});

test('limits are as documented and frozen', () => {
  assert.deepEqual({ ...EXPRESSION_LIMITS }, { maxLength: 500, maxDepth: 32, maxExponent: 8, maxLiteral: 1e6 });
  assert.ok(Object.isFrozen(EXPRESSION_LIMITS));
});

test('the compiler source never evaluates text and uses only the mathjs parser', () => {
  const dir = new URL('../../../../src/inner/expr/', import.meta.url);
  const files = readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
  assert.ok(files.length >= 4, `the compiler's files: ${files.join(', ')}`);
  const imports: string[][] = [];
  for (const file of files) {
    const text = readFileSync(new URL(file, dir), 'utf8');
    assert.ok(!text.includes('eval('), `eval( found in ${file}`);
    assert.ok(!text.includes('new Function'), `new Function found in ${file}`);
    assert.ok(!text.includes('node:vm'), `node:vm found in ${file}`);
    assert.ok(!/from\s+['"]vm['"]/.test(text), `vm import found in ${file}`);
    for (const m of text.matchAll(/const\s*\{([^}]*)\}\s*=\s*createRequire\(import\.meta\.url\)\('mathjs\/number'\)/g))
      imports.push(
        m[1]
          .split(',')
          .map((s) => s.trim())
          .sort(),
      );
    assert.ok(!/from\s*'mathjs/.test(text), `${file} imports from mathjs: only the parser is loaded, where it is used`);
  }
  assert.deepEqual(imports, [['create', 'parseDependencies']]);
});

test('a constant part that folds to Infinity or NaN is rejected at compile time, naming it', () => {
  const cases: [string, string, RegExp][] = [
    ['r + (1e6^8)^8', '(1e6^8)^8', /evaluates to Infinity; every constant must be a finite number/],
    ['r + 1/0', '1/0', /evaluates to Infinity/],
    ['log(0) * x', 'log(0)', /evaluates to -Infinity/],
    ['r + 0/0', '0/0', /evaluates to NaN/],
    ['r + sqrt(-1)', 'sqrt(-1)', /evaluates to NaN/],
    ['done ? r : 1/0', '1/0', /evaluates to Infinity/],
  ];
  for (const [source, token, reason] of cases) rejects(source, token, reason);
  // Finite folds and run-time non-finite values are unchanged.
  assert.equal(ev('r + (10^8)^2', { r: 1 }), 1 + 1e16);
  assert.equal(ev('1 / x', { x: 0 }), Infinity);
});
