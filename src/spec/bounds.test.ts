import test from 'node:test';
import assert from 'node:assert/strict';
import { MAX_ERROR_CHARS, MAX_ISSUE_CHARS, SPEC_BOUNDS, TRACE_BOUNDS, checkBounds, oneLine } from './bounds.js';
import { MAX_PARAMS } from './schema.js';
import { MAX_LISTED_ISSUES, parseSpec } from './validate.js';
import { validateSpec } from '../inner/spec-check.js';
import { getPublicTask } from '../tasks/briefs.js';

const { brief, baseline } = getPublicTask('cartpole-balance');

/** A deep copy of the baseline as a plain mutable JSON value. */
function base(): Record<string, any> {
  return structuredClone(baseline) as Record<string, any>;
}

/** An object nested `depth` levels deep, built without recursion. */
function nested(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 1; i < depth; i++) v = { a: v };
  return v;
}

/** The rejection message of `spec` against the cartpole brief (fails when it is accepted). */
function rejection(spec: unknown): string {
  const r = validateSpec(spec, brief);
  assert.equal(r.ok, false, 'the spec should be rejected');
  return r.ok ? '' : r.error.message;
}

test('checkBounds measures depth, size, strings, keys and cycles without recursion', () => {
  assert.equal(checkBounds(baseline, SPEC_BOUNDS), null);
  assert.equal(checkBounds(nested(16), SPEC_BOUNDS), null);
  assert.match(checkBounds(nested(17), SPEC_BOUNDS)!.message, /nested more than 16 levels deep/);
  // Far deeper than the call stack allows a recursive walk (or JSON.stringify) to go.
  const deep = checkBounds(JSON.parse('['.repeat(200_000) + ']'.repeat(200_000)), TRACE_BOUNDS);
  assert.match(deep!.message, /nested more than 32 levels deep/);
  assert.match(
    checkBounds(
      Array.from({ length: 5000 }, () => 1),
      SPEC_BOUNDS,
    )!.message,
    /array of 5000 items/,
  );
  assert.match(checkBounds({ s: 'x'.repeat(70_000) }, SPEC_BOUNDS)!.message, /string of 70000 characters; the limit is 65536/);
  assert.match(checkBounds({ ['k'.repeat(300)]: 1 }, SPEC_BOUNDS)!.message, /key of 300 characters/);
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = { back: cyclic };
  assert.match(checkBounds(cyclic, TRACE_BOUNDS)!.message, /contains itself/);
  const shared = [1, 2];
  assert.equal(checkBounds({ a: shared, b: shared }, TRACE_BOUNDS), null, 'a shared part is not a cycle');
  assert.match(checkBounds({ f: () => 1 }, TRACE_BOUNDS)!.message, /function is not JSON data/);
  assert.match(checkBounds({ n: 1n }, TRACE_BOUNDS)!.message, /bigint is not JSON data/);
  assert.match(checkBounds({ d: new Date(0) }, TRACE_BOUNDS)!.message, /only plain objects/);
  assert.match(checkBounds(Object.defineProperty({}, 'g', { get: () => 1, enumerable: true }), TRACE_BOUNDS)!.message, /getter/);
  const proto = checkBounds(JSON.parse('{"environment":{"params":{"__proto__":{"x":1}}}}'), SPEC_BOUNDS)!;
  assert.equal(proto.path, 'environment.params.__proto__');
  assert.match(proto.message, /"__proto__" is refused/);
});

test('oneLine keeps one line under the limit', () => {
  assert.equal(oneLine('a\nb\r\n\tc'), 'a b c');
  const long = oneLine('x'.repeat(10_000), 50);
  assert.equal(long.length, 50);
  assert.ok(long.endsWith('…'));
});

test('attack 2: a spec nested 6,000 levels deep is invalid with a one-line reason, not a RangeError', () => {
  const spec = { ...base(), extra: nested(6000) };
  assert.throws(() => JSON.stringify(spec), RangeError, 'the attack value really breaks JSON.stringify');
  const message = rejection(spec);
  assert.match(message, /^extra\.a\.a\.a.*: got a value over the size limits: nested more than 16 levels deep$/);
  assert.ok(message.length <= MAX_ISSUE_CHARS);
});

test('environment.params takes at most 16 identifier names; prototype names are refused by name', () => {
  const many = base();
  many.environment.params = Object.fromEntries(Array.from({ length: MAX_PARAMS + 1 }, (_, i) => [`p${i}`, 1]));
  assert.match(rejection(many), /environment\.params: got .*: at most 16 parameters/);
  for (const name of ['constructor', 'prototype']) {
    const s = base();
    s.environment.params = { [name]: 0.5 };
    assert.match(rejection(s), new RegExp(`^environment\\.params\\.${name}: got a reserved key: the key "${name}" is refused`));
  }
  const plain = base();
  plain.environment.params = {};
  const proto = JSON.parse(JSON.stringify(plain).replace('"params":{}', '"params":{"__proto__":0.5}'));
  assert.ok(Object.hasOwn(proto.environment.params, '__proto__'));
  assert.match(rejection(proto), /^environment\.params\.__proto__: got a reserved key: the key "__proto__" is refused/);
  const spaced = base();
  spaced.environment.params = { 'pole length': 0.5 };
  assert.match(rejection(spaced), /invalid parameter name \(a parameter name is a letter or _ followed by letters, digits or _\)/);
});

test('a 2.3 MB spec gives a short error, not a 21.9 MB one', () => {
  const huge = base();
  huge.environment.params = Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`param_${i}_${'x'.repeat(20)}`, [0, 1]]));
  assert.ok(JSON.stringify(huge).length > 2_300_000);
  const message = rejection(huge);
  assert.ok(message.length <= MAX_ISSUE_CHARS, message);
  assert.match(message, /environment\.params: got a value over the size limits: an object of 60000 keys/);
});

test('many issues: each one is short, the first few are listed and the rest counted', () => {
  const s = base();
  for (let i = 0; i < 40; i++) s[`unknown_${i}_${'y'.repeat(200)}`] = 'z'.repeat(1000);
  const r = parseSpec(s);
  assert.equal(r.ok, false);
  if (r.ok) return;
  assert.equal(r.error.issues.length, 40);
  const message = r.error.message;
  assert.ok(message.length <= MAX_ERROR_CHARS, `${message.length} characters`);
  assert.ok(!message.includes('\n'));
  assert.match(message, /; and \d+ more issues$/);
  for (const part of message.split('; ')) assert.ok(part.length <= MAX_ISSUE_CHARS, part);
  assert.ok(message.split('; ').length <= MAX_LISTED_ISSUES + 1);
});
