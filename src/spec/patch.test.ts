import test from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { listTasks } from '../tasks/briefs.js';
import { applyMergePatch, mergePatchBetween } from './patch.js';

test('applyMergePatch follows the examples of RFC 7396, appendix A', () => {
  const cases: [unknown, unknown, unknown][] = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  for (const [target, patch, result] of cases) assert.deepEqual(applyMergePatch(target, patch), result, JSON.stringify({ target, patch }));
});

test('applyMergePatch changes neither argument', () => {
  const target = { a: { b: [1, 2] }, c: 1 };
  const patch = { a: { b: [3] }, c: null };
  applyMergePatch(target, patch);
  assert.deepEqual(target, { a: { b: [1, 2] }, c: 1 });
  assert.deepEqual(patch, { a: { b: [3] }, c: null });
});

/** JSON values without nulls (a merge patch cannot set a field to null). */
const jsonNoNull = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, fc.integer(), fc.boolean(), fc.string({ maxLength: 4 }), fc.array(tie('value'), { maxLength: 3 }), tie('object')),
  object: fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), tie('value'), { maxKeys: 4, noNullPrototype: true }),
})).object;

test('property: the patch between two specs applied to the first gives the second', () => {
  fc.assert(
    fc.property(jsonNoNull, jsonNoNull, (from, to) => {
      assert.deepEqual(applyMergePatch(from, mergePatchBetween(from, to)), to);
    }),
    { seed: 7, numRuns: 500 },
  );
});

test('the patch between a spec and itself is empty; between baselines and an edit, only the edit', () => {
  for (const { baseline } of listTasks()) {
    assert.deepEqual(mergePatchBetween(baseline, structuredClone(baseline)), {});
    const edited = structuredClone(baseline) as { seed: number };
    edited.seed += 1;
    assert.deepEqual(mergePatchBetween(baseline, edited), { seed: edited.seed });
  }
});
