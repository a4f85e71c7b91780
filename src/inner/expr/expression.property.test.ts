/**
 * Property-based tests of the expression compiler (fast-check, fixed seeds): 4,000 generated
 * inputs in all — grammatical expressions, token soups of hostile names and operators, and
 * arbitrary Unicode text. The compiler never throws anything but ExpressionError; a refusal is
 * one line; a compiled expression evaluates to a number for any inputs, and a grammatical
 * expression is refused only for a limit (length, depth, exponent) or a constant part that is
 * not finite — never as a syntax error.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ExpressionError, checkExpression, compileExpression } from './expression.js';
import { expressionArb, notOneLine, tokenSoupArb } from '../../testing/arbitraries.js';

const VARS = ['x', 'x_dot', 'theta', 'theta_dot', 'r', 't', 'done'];
const RUNS = 1500;
const inputs = fc.array(fc.oneof(fc.double(), fc.constantFrom(0, -0, 1, -1, NaN, Infinity, -Infinity)), { minLength: VARS.length, maxLength: VARS.length });

/** Compiles `source`; returns the refusal message, or null after checking that evaluation gives numbers. */
function compileOrRefuse(source: string, values: number[][]): string | null {
  let compiled;
  try {
    compiled = compileExpression(source, VARS);
  } catch (err) {
    assert.ok(err instanceof ExpressionError, `${source}: threw ${(err as Error)?.name}: ${(err as Error)?.message}`);
    const why = notOneLine(err.message, 400);
    assert.equal(why, null, `${source}: ${why}`);
    assert.equal(checkExpression(source, VARS), err.message, 'checkExpression gives the same message');
    return err.message;
  }
  assert.equal(checkExpression(source, VARS), null);
  for (const v of values) assert.equal(typeof compiled.evaluate(v), 'number');
  return null;
}

const GRAMMATICAL = `expression property: ${RUNS} generated grammatical expressions compile and evaluate to numbers`;
test(`${GRAMMATICAL}, or are refused only for a limit or a non-finite constant`, () => {
  fc.assert(
    fc.property(expressionArb(VARS, 6), fc.array(inputs, { minLength: 1, maxLength: 3 }), (source, values) => {
      const refused = compileOrRefuse(source, values);
      const limits = /evaluates to (-?Infinity|NaN)|nested too deeply|characters long; the limit is|exponent is too large/;
      if (refused !== null) assert.match(refused, limits, source);
    }),
    { numRuns: RUNS, seed: 401 },
  );
});

test(`expression property: ${RUNS} generated token soups (hostile names, operators, brackets) never throw unexpectedly`, () => {
  let compiled = 0;
  fc.assert(
    fc.property(tokenSoupArb, fc.array(inputs, { minLength: 1, maxLength: 2 }), (source, values) => {
      if (compileOrRefuse(source, values) === null) compiled++;
      for (const name of ['constructor', '__proto__', 'prototype', 'process', 'eval', 'require', 'import', 'globalThis', 'Function']) {
        if (new RegExp(`(^|[^A-Za-z_])${name}([^A-Za-z0-9_]|$)`).test(source)) assert.notEqual(checkExpression(source, VARS), null, `${source} uses ${name}`);
      }
    }),
    { numRuns: RUNS, seed: 402 },
  );
  assert.ok(compiled > 0, 'some soups are valid expressions');
});

test('expression property: 1000 generated arbitrary strings (Unicode, control characters, long) never throw unexpectedly', () => {
  fc.assert(
    fc.property(
      fc.oneof(fc.string({ unit: 'binary', maxLength: 80 }), fc.string({ maxLength: 700 }), fc.string({ unit: 'grapheme-ascii', maxLength: 60 })),
      (source) => {
        compileOrRefuse(source, [VARS.map(() => 1)]);
      },
    ),
    { numRuns: 1000, seed: 403 },
  );
});
